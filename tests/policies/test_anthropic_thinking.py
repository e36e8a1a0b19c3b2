"""clear_thinking_20251015 (documented, not open source): its rule on real Claude Code
sessions that think, its request body checked against the Anthropic SDK's own types,
and its place in the registry."""

from __future__ import annotations

import io
import json

import pytest
from pydantic import TypeAdapter, ValidationError

import toolclear as tc
from toolclear.cli import main
from toolclear.policies.anthropic_thinking import AnthropicThinkingConfig, context_management

from ..conftest import CORPUS

THINKING = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"  # 42 turns think


def _edits() -> TypeAdapter:
    from anthropic.types.beta.beta_context_management_config_param import Edit

    return TypeAdapter(list[Edit])


@pytest.mark.parametrize("keep", [1, 3, None])
def test_all_but_the_last_thinking_turns_lose_their_thinking(keep) -> None:
    run = tc.load(THINKING)
    turns = [i for i, m in enumerate(run.messages) if m.role == "assistant" and (m.meta or {}).get("thinking")]
    assert len(turns) > 20
    r = tc.apply(run.messages, AnthropicThinkingConfig(keep_thinking_turns=keep))
    old = turns[:len(turns) - keep] if keep is not None else []
    assert sorted(r.cleared_indices) == [i for i in old if run.messages[i].meta["without_thinking"]
                                         != run.messages[i].content]
    for i in turns:
        m, sent = run.messages[i], r.messages[i]
        if i in old:
            assert all(t not in sent.content for t in m.meta["thinking"] if t)  # its thinking is gone
            assert sent.tool_calls == m.tool_calls  # the calls stay
        else:
            assert sent is m
    assert all(r.messages[i] is run.messages[i] for i in range(len(run.messages)) if i not in turns)


def test_with_clear_tool_uses_in_one_request_the_thinking_edit_first() -> None:
    run = tc.load(THINKING)
    both = AnthropicThinkingConfig(keep_thinking_turns=2, trigger_input_tokens=20000, keep_tool_uses=3)
    body = context_management(both)
    assert [e["type"] for e in body["edits"]] == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    r = tc.replay(run.messages, both)
    alone = tc.replay(run.messages, AnthropicThinkingConfig(keep_thinking_turns=2))
    tools = tc.replay(run.messages, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=20000, keep_tool_uses=3))
    roles = {i: run.messages[i].role for i in r.cleared_indices}
    assert {i for i, role in roles.items() if role == "tool"} == set(tools.cleared_indices)
    assert {i for i, role in roles.items() if role == "assistant"} == set(alone.cleared_indices)


@pytest.mark.parametrize("config", [AnthropicThinkingConfig(), AnthropicThinkingConfig(keep_thinking_turns=None),
                                    AnthropicThinkingConfig(4, 50000, 2)])
def test_the_exported_request_validates_against_the_sdks_types(config) -> None:
    edits = context_management(config)["edits"]
    assert _edits().validate_python(edits) == edits
    with pytest.raises(ValidationError):
        _edits().validate_python([{**edits[0], "keep": {"type": "thinking_turns", "value": "many"}}])
    (title, kind, text), = tc.policies.spec_for(config).presets[0].export(config)
    assert kind == "json" and json.loads(text)["context_management"]["edits"] == edits


def test_by_its_registry_name_and_a_transcript_cannot_take_it_back() -> None:
    assert tc.parse_policy("anthropic-thinking:keep=2,trigger=30000") == AnthropicThinkingConfig(2, 30000)
    out, err = io.BytesIO(), io.StringIO()
    assert main(["compare", str(THINKING), "--policy", "anthropic-thinking:keep=1"], stdout=out,
                stderr=err) == 0, err.getvalue()
    assert "anthropic-thinking keep 1" in out.getvalue().decode()
    run = tc.load(THINKING)
    with pytest.raises(tc.TranscriptError, match="only tool results can be rewritten"):
        tc.dump(run, tc.apply(run.messages, AnthropicThinkingConfig()).messages)
