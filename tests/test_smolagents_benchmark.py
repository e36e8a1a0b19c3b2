"""smolagents' benchmark output (examples/smolagents_benchmark/run.py writes one JSON
line per question, its ``intermediate_steps`` the agent's ``write_memory_to_messages()``
as dicts): made here by the real smolagents, a ToolCallingAgent and a CodeAgent on a
scripted Model of smolagents' own interface (no network), read one conversation per
record, cleared and written back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from smolagents import CodeAgent, Model, ToolCallingAgent, tool
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole

import toolclear as tc


@tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file's path
    """
    return f"contents of {path}\n" + "a line of the file\n" * 150


class Scripted(Model):
    """Calls read_file three times, then gives the final answer (as tool calls, or as code)."""

    def __init__(self, code: bool) -> None:
        super().__init__(model_id="scripted")
        self.code, self.k = code, 0

    def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kw: Any) -> ChatMessage:
        self.k += 1
        if self.code:
            body = f"print(read_file('f{self.k}.py'))" if self.k < 4 else "final_answer('done')"
            return ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: go\n<code>\n{body}\n</code>")
        name, args = (("read_file", {"path": f"f{self.k}.py"}) if self.k < 4 else ("final_answer", {"answer": "done"}))
        call = ChatMessageToolCall(id=f"call_{self.k}", type="function",
                                   function=ChatMessageToolCallFunction(name=name, arguments=args))
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def benchmark_output(code: bool, questions: int = 3) -> bytes:
    lines = []
    for q in range(questions):
        agent_cls = CodeAgent if code else ToolCallingAgent
        agent = agent_cls(tools=[read_file], model=Scripted(code), max_steps=6, verbosity_level=0)
        answer = agent.run(f"question {q}: read the files")
        steps = [m.dict() for m in agent.write_memory_to_messages()]
        lines.append(json.dumps({"model_id": "scripted", "agent_action_type": "code" if code else "tool-calling",
                                 "question": f"question {q}", "answer": str(answer), "intermediate_steps": steps,
                                 "token_counts": {"input": 0, "output": 0}}, default=str))
    lines.append(json.dumps({"question": "vanilla", "answer": "x", "intermediate_steps": "x"}))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("code", [False, True], ids=["tool-calling", "code"])
def test_benchmark_output_is_one_conversation_per_question(code: bool) -> None:
    data = benchmark_output(code)
    runs = tc.load_all(data, name="answers.jsonl")
    assert [t.format for t in runs] == ["smolagents"] * 3 and [t.id for t in runs] == ["line 1", "line 2", "line 3"]
    tools = [m for m in runs[0].messages if m.role == "tool"]
    assert len(tools) >= 3 and all("a line of the file" in m.content for m in tools[:3])
    assert any("hold no agent messages" in n for n in runs[0].notes)
    pairs = [(t, tc.apply(t.messages, tc.ObservationMaskingConfig.swe_agent(n=1)).messages) for t in runs]
    out = tc.dump_all(pairs)
    back = tc.load_all(out, name="answers.jsonl")
    for (_, msgs), b in zip(pairs, back):
        assert [m.content for m in b.messages] == [m.content for m in msgs]
    # outside the cleared observations every line is as it was
    before, after = data.decode().splitlines(), out.decode().splitlines()
    assert before[-1] == after[-1] and len(before) == len(after)
