"""replay: the policy before every model call, equal to the step-by-step loop."""

from __future__ import annotations

import pytest

import toolclear as tc
from toolclear import ClearToolResultConfig, Message

from ..conftest import CORPUS_FILES, SAMPLE_FILES, corpus_id
from .test_eino_clear_hyp import _step_by_step


def test_steps_are_one_per_model_call_plus_final() -> None:
    msgs = [Message("user", "u"), Message("assistant", "a"), Message("tool", "x" * 80, tool_name="t"),
            Message("assistant", "b"), Message("tool", "y" * 80, tool_name="t")]
    rp = tc.replay(msgs, ClearToolResultConfig(tool_result_token_threshold=10, keep_recent_tokens=20))
    assert [s.call_index for s in rp.steps] == [1, 3, 5]
    assert rp.steps[-1].cleared_indices == (2,)
    assert rp.cleared_at == (None, None, 5, None, None)
    assert rp.cache_breaks == 1 and rp.steps[-1].cache_break
    assert rp.steps[1].context_tokens == rp.steps[1].context_tokens_unreduced == 22
    assert rp.steps[-1].context_tokens == 1 + 1 + 9 + 1 + 20


def test_what_was_cleared_stays_cleared() -> None:
    # the call at index 2 clears message 0; at the final step the tool results left are
    # under the threshold, so replay keeps message 3, which a single pass would clear
    msgs = [Message("tool", "x" * 400, tool_name="t"), Message("user", "v" * 40), Message("assistant", "a"),
            Message("tool", "y" * 8, tool_name="t"), Message("user", "w" * 200)]
    config = ClearToolResultConfig(tool_result_token_threshold=50, keep_recent_tokens=5)
    rp = tc.replay(msgs, config)
    assert rp.steps[0].call_index == 2 and rp.steps[0].cleared_indices == (0,)
    assert not rp.steps[-1].triggered
    assert rp.messages[0].content == config.placeholder and rp.messages[3] == msgs[3]
    assert tc.reduce_by_tokens(msgs, config).cleared_indices == (0, 3)
    assert rp.messages == tuple(_step_by_step(msgs, config)[0])


@pytest.mark.parametrize("path", CORPUS_FILES + SAMPLE_FILES, ids=[corpus_id(p) for p in CORPUS_FILES + SAMPLE_FILES])
def test_replay_equals_loop_on_real_transcripts(path) -> None:
    config = ClearToolResultConfig(tool_result_token_threshold=2000, keep_recent_tokens=3000)
    for t in tc.load_all(path)[:5]:
        history, steps = _step_by_step(t.messages, config)
        rp = tc.replay(t.messages, config)
        assert list(rp.messages) == history
        assert [s.cleared_indices for s in rp.steps] == [r.cleared_indices for _, r in steps]
        assert [s.context_tokens for s in rp.steps] == [r.tokens_after for _, r in steps]


def test_replay_on_sample_reports_savings() -> None:
    t = tc.load(SAMPLE_FILES[0])
    rp = tc.replay(t.messages)
    assert rp.tokens_sent < rp.tokens_sent_unreduced
    assert rp.cache_breaks >= 1
    assert len(rp.model_call_steps) == sum(1 for m in t.messages if m.role == "assistant")
