"""A real pydantic-ai agent (its FunctionModel, a real tool) with toolclear's history
processor: what each model request received equals toolclear's replay (pydantic-ai
keeps what a processor returns, so the persisting replay), and the saved history reads
back, exports, and validates as pydantic-ai messages again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import toolclear as tc
from tests.live_support import CALLS, assert_live_equals_replay, big_result, in_thread, restored, shown
from toolclear.integrations.pydantic_ai import capability, from_pydantic_ai, history_processor

CONFIGS = {
    "eino": tc.ClearToolResultConfig(3000, 6000),
    "eino-small-window": tc.ClearToolResultConfig(2000, 1000),
    "swe-agent": tc.ObservationMaskingConfig.swe_agent(4),
    "langchain": tc.LangChainClearToolUsesConfig(trigger=2000, keep=3, clear_tool_inputs=True),
    "anthropic": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=3),
    "eino-reduction": tc.EinoReductionConfig(skip_truncation=True, max_tokens_for_clear=3000),
}


def run_agent(config: Any, **kw: Any) -> tuple[list[list[Any]], Any, list[tc.Result]]:
    seen: list[list[Any]] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        k = len(seen) - 1
        if k < CALLS - 1:
            parts: list[Any] = [TextPart(f"reading f{k}.py")] if k % 3 == 0 else []
            return ModelResponse(parts=[*parts, ToolCallPart("read_file", {"path": f"f{k}.py"}, tool_call_id=f"c{k}")])
        return ModelResponse(parts=[TextPart("done")])

    reports: list[tc.Result] = []
    agent = Agent(FunctionModel(model), system_prompt="You read files.",
                  capabilities=[capability(config, on_result=reports.append, **kw)])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        return big_result(path)

    result = in_thread(agent.run_sync, "read all the files")
    return seen, result, reports


@pytest.mark.parametrize("name", list(CONFIGS))
def test_live_run_sends_what_the_replay_says(name) -> None:
    config = CONFIGS[name]
    seen, result, reports = run_agent(config)
    assert len(seen) == CALLS and len(reports) == CALLS
    run = restored(from_pydantic_ai(result.all_messages()))
    assert_live_equals_replay([from_pydantic_ai(s) for s in seen], run, config, persist=True)


def test_the_saved_history_loads_exports_and_validates_again(tmp_path) -> None:
    config = CONFIGS["eino"]
    seen, result, _ = run_agent(config)
    path = tmp_path / "history.json"
    path.write_bytes(result.all_messages_json())
    loaded = tc.load(path)
    assert loaded.format == "pydantic-ai"
    assert shown(loaded.messages) == shown(from_pydantic_ai(result.all_messages()))
    assert [m.usage is not None for m in loaded.messages if m.role == "assistant"] == [True] * CALLS
    # clear the kept history further and write it back in pydantic-ai's own shape
    more = tc.apply(loaded.messages, tc.ClearToolResultConfig(100, 100))
    again = ModelMessagesTypeAdapter.validate_json(tc.dump(loaded, more.messages))
    returns = [p for m in again for p in m.parts if isinstance(p, ToolReturnPart)]
    assert sum(p.content == more.config.placeholder for p in returns) == len(more.cleared_indices) + sum(
        m.content == config.placeholder for m in loaded.messages if m.role == "tool")


def test_tool_call_ids_and_part_fields_survive_the_edit() -> None:
    config = CONFIGS["langchain"]
    _, result, _ = run_agent(config)
    msgs = result.all_messages()
    calls = [p for m in msgs for p in m.parts if isinstance(p, ToolCallPart)]
    returns = [p for m in msgs for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [c.tool_call_id for c in calls] == [r.tool_call_id for r in returns] == [f"c{k}" for k in range(CALLS - 1)]
    assert any(r.content == config.placeholder for r in returns)
    # clear_tool_inputs empties the cleared calls' arguments, in pydantic-ai's own field
    assert any(c.args in ("{}", {}) for c in calls)
    assert all(r.tool_name == "read_file" and r.timestamp is not None for r in returns)


def test_a_bad_config_fails_when_the_agent_is_built() -> None:
    with pytest.raises(tc.ConfigError):
        history_processor(object())


def test_counts_are_cached_across_calls() -> None:
    counted: list[str] = []

    def counter(m: tc.Message) -> int:
        counted.append(m.content)
        return len(m.content) // 4

    run_agent(CONFIGS["swe-agent"], counter=counter)
    # every message is counted about once, not once per call (~CALLS^2 / 2 of them)
    assert len(counted) < 6 * CALLS, len(counted)
    assert json.dumps(counted)  # plain strings


def test_cache_aware_is_refused_where_the_edits_are_kept() -> None:
    """pydantic-ai keeps what a history processor returns: cache-aware, decided on the
    raw history call by call, says so in one line instead of deciding on edited history."""
    with pytest.raises(tc.ConfigError, match="per call"):
        history_processor(tc.parse_policy("cache-aware"))
