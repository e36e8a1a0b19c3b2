"""A real OpenAI Agents SDK run (a Model of the SDK's own interface, no network, a real
function tool) with toolclear's input filter: what each model call received equals
toolclear's per-call replay, for every policy."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import toolclear as tc
from tests.live_support import CALLS, assert_live_equals_replay, big_result, in_thread, restored
from toolclear.integrations.openai_agents import call_model_input_filter, from_items

CONFIGS = {
    "eino": tc.ClearToolResultConfig(3000, 6000),
    "eino-small-window": tc.ClearToolResultConfig(2000, 1000),
    "swe-agent": tc.ObservationMaskingConfig.swe_agent(4),
    "langchain": tc.LangChainClearToolUsesConfig(trigger=2000, keep=3),
    "anthropic": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=3),
}


class ScriptedModel(Model):
    """The SDK's model interface: calls read_file CALLS-1 times, then answers."""

    def __init__(self) -> None:
        self.seen: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any) -> ModelResponse:
        self.seen.append(json.loads(json.dumps(input if isinstance(input, list) else [
            {"role": "user", "content": input}], default=str)))
        k = len(self.seen) - 1
        if k < CALLS - 1:
            out: list[Any] = [ResponseFunctionToolCall(type="function_call", call_id=f"c{k}", name="read_file",
                                                       arguments=f'{{"path":"f{k}.py"}}')]
        else:
            out = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                         content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return big_result(path)


def run_agent(config: Any, report: bool = True) -> tuple[ScriptedModel, list[tc.Result], Any]:
    model = ScriptedModel()
    reports: list[tc.Result] = []
    agent = Agent(name="reader", instructions="You read files.", model=model, tools=[read_file])
    result = in_thread(Runner.run_sync, agent, "read all the files", max_turns=CALLS + 5,
                             run_config=RunConfig(call_model_input_filter=call_model_input_filter(
                                 config, on_result=reports.append if report else None), tracing_disabled=True))
    return model, reports, result


def read(items: list[Any]) -> list[tc.Message]:
    return list(from_items(items).messages)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("report", [True, False], ids=["report", "advanced"])
def test_live_run_sends_what_the_per_call_replay_says(name, report) -> None:
    """Without a report the request-level policies are advanced call by call (one
    engine kept across calls) rather than run afresh: the same contexts."""
    config = CONFIGS[name]
    model, reports, result = run_agent(config, report)
    assert len(model.seen) == CALLS and len(reports) == (CALLS if report else 0)
    items = [x for x in result.to_input_list()]
    run = restored(read(json.loads(json.dumps(items, default=str))))
    assert_live_equals_replay([read(s) for s in model.seen], run, config, persist=False)
    # the SDK's own items keep every result as the tool returned it
    assert run == read(json.loads(json.dumps(items, default=str)))
