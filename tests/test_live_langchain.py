"""A real LangChain v1 agent (its own fake model, real tools) with toolclear's middleware:
what each model call received equals toolclear's replay of the same run."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

import toolclear as tc
from toolclear.integrations.langchain import ToolclearMiddleware, from_langchain

CALLS = 32


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" + ("line of code\n" * 150)


class ToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class Recorder(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[Any]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.seen.append(list(request.messages))
        return handler(request)


def script() -> list[AIMessage]:
    out = [AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"path": f"f{k}.py"}, "id": f"c{k}"}])
           for k in range(CALLS - 1)]
    return out + [AIMessage(content="done")]


def run_agent(config: Any, persist: bool) -> tuple[Recorder, list[Any], list[Any]]:
    rec = Recorder()
    reports: list[Any] = []
    agent = create_agent(ToolModel(messages=iter(script())), [read_file],
                         middleware=[ToolclearMiddleware(config, persist=persist, on_result=reports.append), rec])
    agent.invoke({"messages": [HumanMessage("read all the files")]}, {"recursion_limit": 500})
    return rec, reports, agent


def unreduced(last: list[Any]) -> list[tc.Message]:
    """The run as it happened: the last call's input with every tool result as the tool returned it."""
    msgs = []
    for m in last:
        if isinstance(m, ToolMessage):
            call = next(c for x in last if isinstance(x, AIMessage) for c in x.tool_calls if c["id"] == m.tool_call_id)
            m = m.model_copy(update={"content": read_file.invoke(call["args"])})
        msgs.append(m)
    return from_langchain(msgs)


@pytest.mark.parametrize("config", [tc.ClearToolResultConfig(3000, 6000),
                                    tc.ObservationMaskingConfig.swe_agent(4)], ids=["eino", "swe-agent"])
def test_persisting_mode_sends_what_the_replay_says(config) -> None:
    rec, reports, _ = run_agent(config, persist=True)
    assert len(rec.seen) == CALLS and len(reports) == CALLS
    run = unreduced(rec.seen[-1]) + [tc.Message("assistant", "done")]
    rp = tc.replay(run, config)
    steps = rp.model_call_steps
    assert len(steps) == CALLS
    cleared_some = False
    for step, seen in zip(steps, rec.seen):
        got = [m.content for m in from_langchain(seen)]
        if isinstance(config, tc.ClearToolResultConfig):
            want = [config.placeholder if (at is not None and at <= step.call_index) else m.content
                    for m, at in zip(run[: step.call_index], rp.cleared_at)]
            assert got == want
        assert sum(tc.count_tokens(from_langchain(seen))) == step.context_tokens
        cleared_some |= any(g != m.content for g, m in zip(got, run))
    assert cleared_some


def test_per_call_mode_matches_the_non_sticky_replay() -> None:
    config = tc.LangChainClearToolUsesConfig(trigger=2000, keep=3)
    rec, _, _ = run_agent(config, persist=False)
    run = unreduced(rec.seen[-1]) + [tc.Message("assistant", "done")]
    rp = tc.replay(run, config)
    for step, seen in zip(rp.model_call_steps, rec.seen):
        prefix = run[: step.call_index]
        assert [m.content for m in from_langchain(seen)] == [m.content for m in tc.apply(prefix, config).messages]
        assert sum(tc.count_tokens(from_langchain(seen))) == step.context_tokens


def test_importing_toolclear_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, toolclear; print(any(m.split('.')[0] in ('langchain', 'langgraph') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
