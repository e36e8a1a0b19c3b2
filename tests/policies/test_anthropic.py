"""Anthropic's ``clear_tool_uses_20250919`` (``toolclear/policies/anthropic.py``).

Only the documentation exists for this edit (no package to run it against), so these
tests hold the documented rules on runs small enough to work out by hand: the trigger
compares strictly, ``keep`` counts the latest tool uses, excluded tools are never
cleared, the ``clear_at_least`` gate is all or nothing, ``clear_tool_inputs`` empties
only the cleared uses' inputs, and the edit is recomputed on the full history at
every request (what the README says the documentation leaves open)."""

from __future__ import annotations

import json

import pytest

import toolclear as tc
from toolclear.model import ToolCall
from toolclear.policies import spec_for
from toolclear.policies.anthropic import SPEC, anthropic_json

RESULT = "r" * 400


def run(n: int, names: tuple[str, ...] = ()) -> list[tc.Message]:
    """A task, then n rounds of one tool call and its result, then an answer."""
    msgs = [tc.Message("user", "fix the bug")]
    for k in range(n):
        name = names[k] if k < len(names) else "read"
        msgs.append(tc.Message("assistant", "", tool_calls=(ToolCall(f"c{k}", name, json.dumps({"path": f"f{k}.py"})),)))
        msgs.append(tc.Message("tool", f"{RESULT}{k}", tool_call_id=f"c{k}", tool_name=name))
    msgs.append(tc.Message("assistant", "done"))
    return msgs


def results(msgs: list[tc.Message]) -> list[int]:
    return [i for i, m in enumerate(msgs) if m.role == "tool"]


def test_the_trigger_is_strictly_more_than_its_tokens() -> None:
    msgs = run(4)
    total = sum(tc.count_tokens(msgs))
    at = tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=total, keep_tool_uses=1))
    assert at.cleared_indices == ()
    over = tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=total - 1, keep_tool_uses=1))
    assert list(over.cleared_indices) == results(msgs)[:3]
    assert all(over.messages[i].content == "[cleared]" for i in over.cleared_indices)
    assert over.messages[results(msgs)[3]] is msgs[results(msgs)[3]]


@pytest.mark.parametrize("keep", [0, 1, 3, 5])
def test_keep_counts_the_latest_tool_uses(keep: int) -> None:
    msgs = run(4)
    r = tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=keep))
    assert list(r.cleared_indices) == results(msgs)[:max(0, 4 - keep)]


def test_excluded_tools_are_never_cleared_and_count_among_the_uses_kept() -> None:
    msgs = run(4, ("bash", "read", "read", "bash"))
    r = tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=1,
                                                       exclude_tools=("bash",)))
    uses = results(msgs)
    assert list(r.cleared_indices) == uses[1:3]  # the last use (a bash one) is the one kept
    assert [str(r.statuses[i]) for i in (uses[0], uses[3])] == ["excluded", "excluded"]


def test_the_clear_at_least_gate_is_all_or_nothing() -> None:
    msgs = run(4)
    one = tc.count_tokens([msgs[2]])[0] - tc.count_tokens([msgs[2].replaced("[cleared]")])[0]
    enough = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=2,
                                             clear_at_least_input_tokens=2 * one)
    assert len(tc.apply(msgs, enough).cleared_indices) == 2
    short = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=2,
                                            clear_at_least_input_tokens=2 * one + 1)
    assert tc.apply(msgs, short).cleared_indices == ()


def test_a_tool_use_trigger_replaces_the_token_trigger() -> None:
    msgs = run(4)
    assert tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_tool_uses=4, keep_tool_uses=1)).cleared_indices == ()
    assert len(tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_tool_uses=3, keep_tool_uses=1))
               .cleared_indices) == 3


def test_clear_tool_inputs_empties_only_the_cleared_uses_and_the_named_tools() -> None:
    msgs = run(3, ("read", "grep", "read"))
    r = tc.apply(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=1,
                                                       clear_tool_inputs=("grep",)))
    assert r.messages[1] is msgs[1]  # read: result cleared, input kept
    assert r.messages[3].tool_calls[0].arguments != msgs[3].tool_calls[0].arguments  # grep: input emptied
    assert r.messages[5] is msgs[5]  # kept use: untouched


def test_every_request_is_edited_afresh_on_the_full_history() -> None:
    """Not sticky: a replay's call sees the policy applied to its own prefix, nothing carried."""
    msgs = run(6)
    config = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=600, keep_tool_uses=2)
    assert not spec_for(config).sticky
    rp = tc.replay(msgs, config)
    for step in rp.model_call_steps:
        alone = tc.apply(msgs[:step.call_index], config)
        assert step.context_tokens == alone.tokens_after


def test_the_request_json_is_the_documented_shape() -> None:
    config = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=30_000, keep_tool_uses=2,
                                             clear_at_least_input_tokens=5_000, exclude_tools=("web_search",),
                                             clear_tool_inputs=True)
    edit = json.loads(anthropic_json(config))["context_management"]["edits"][0]
    assert edit == {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 30_000},
                    "keep": {"type": "tool_uses", "value": 2},
                    "clear_at_least": {"type": "input_tokens", "value": 5_000},
                    "exclude_tools": ["web_search"], "clear_tool_inputs": True}
    # the API has no placeholder setting: the export says so instead of dropping it silently
    title = SPEC.presets[0].export(tc.AnthropicClearToolUsesConfig(placeholder="[gone]"))[0][0]  # type: ignore[misc]
    assert "no placeholder setting" in title


@pytest.mark.parametrize("bad", [{"keep_tool_uses": -1}, {"trigger_input_tokens": "many"},
                                 {"exclude_tools": "bash"}, {"clear_tool_inputs": 3}])
def test_bad_settings_name_the_field(bad: dict) -> None:
    with pytest.raises(tc.ConfigError, match=next(iter(bad))):
        tc.AnthropicClearToolUsesConfig(**bad)


def test_anthropics_trigger_leaves_out_the_thinking_of_earlier_turns() -> None:
    """With extended thinking the API keeps only the last assistant turn's thinking
    blocks, so earlier thinking does not count toward the input-token trigger."""
    think = "reasoning " * 400
    body = [{"role": "user", "content": "task"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": think, "signature": "s"},
                                              {"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 400}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": "next"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "y" * 400}]},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]}]
    t = tc.load(text=json.dumps({"messages": body}), format="anthropic")
    assert t.messages[1].meta == {"thinking": (think,), "without_thinking": ""}
    total = sum(tc.count_tokens(t.messages))
    thinking = tc.count_tokens([tc.Message("assistant", think)])[0]
    over = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=total - thinking // 2, keep_tool_uses=0)
    assert not tc.apply(t, over).cleared_indices  # the thinking of the first turn is not sent
    under = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=total - thinking - 10, keep_tool_uses=0)
    assert tc.apply(t, under).cleared_indices
    # within the turn it belongs to, thinking counts (the API keeps it)
    first_turn = tc.apply(t.messages[:3], tc.AnthropicClearToolUsesConfig(
        trigger_input_tokens=sum(tc.count_tokens(t.messages[:3])) - 1, keep_tool_uses=0))
    assert first_turn.cleared_indices
