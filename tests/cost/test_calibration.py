"""``toolclear.calibrate`` and replays in tokens as sent, on the real Claude Code
sessions in the repo: each call's unreduced context is the prompt it recorded, and a
trigger that counts the whole prompt fires where the recorded prompt crossed it."""

from __future__ import annotations

import pickle
import statistics

import pytest

import toolclear as tc

from ..conftest import CORPUS

SESSIONS = sorted(p for p in (CORPUS / "claude_code").glob("*.jsonl")
                  if sum(m.role == "assistant" and m.usage is not None for m in tc.load(p)) >= 20)


def test_there_are_sessions_to_check() -> None:
    assert len(SESSIONS) >= 3


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_unreduced_context_is_the_recorded_prompt(path) -> None:
    t = tc.load(path)
    cal = tc.calibrate(t)
    assert cal.fitted and cal.overhead_tokens > 0
    r = tc.replay(t, tc.AnthropicClearToolUsesConfig(), calibration=cal)
    errors = []
    for s in r.model_call_steps:
        u = t.messages[s.call_index].usage
        if u is not None and u.prompt_tokens and u.model != "<synthetic>":
            errors.append(abs(s.context_tokens_unreduced - u.prompt_tokens) / u.prompt_tokens)
    assert statistics.median(errors) <= 0.10
    # without it, the transcript's tokens: far from what was sent (no system prompt, no tools)
    plain = tc.replay(t, tc.AnthropicClearToolUsesConfig())
    assert sum(s.context_tokens_unreduced for s in plain.model_call_steps) < r.tokens_sent_unreduced


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_anthropics_trigger_fires_where_the_recorded_prompt_crossed_it(path) -> None:
    t = tc.load(path)
    cal = tc.calibrate(t)
    prompts = [(i, m.usage.prompt_tokens) for i, m in enumerate(t.messages)
               if m.role == "assistant" and m.usage is not None and m.usage.prompt_tokens]
    trigger = sorted(p for _, p in prompts)[len(prompts) // 2]  # a trigger this session does cross
    config = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=trigger, keep_tool_uses=0)
    r = tc.replay(t, config, calibration=cal)
    calls = [s.call_index for s in r.model_call_steps]
    crossed = next(i for i, p in prompts if p > trigger and sum(m.role == "tool" for m in t.messages[:i]) > 3)
    fired = next((s.call_index for s in r.model_call_steps if s.triggered), None)
    assert fired is not None
    assert abs(calls.index(fired) - calls.index(crossed)) <= 2
    # the steps speak in tokens as sent: what the policy saved comes off the recorded prompt
    for s in r.model_call_steps:
        assert s.context_tokens <= s.context_tokens_unreduced


def test_a_log_without_usage_calibrates_to_the_identity() -> None:
    msgs = [tc.Message("user", "go"), tc.Message("assistant", "done")]
    cal = tc.calibrate(msgs)
    assert (cal.overhead_tokens, cal.scale, cal.fitted) == (0, 1.0, False)
    plain, sent = tc.replay(msgs), tc.replay(msgs, calibration=cal)
    assert [s.context_tokens for s in plain.steps] == [s.context_tokens for s in sent.steps]


def test_compare_and_the_corpus_take_it(tmp_path) -> None:
    t = tc.load(SESSIONS[0])
    cal = tc.calibrate(t)
    cmp = tc.compare(t, [tc.LangChainClearToolUsesConfig()], calibration=cal)
    assert cmp.results[0].calibration is cal
    assert cmp.results[0].tokens_sent_unreduced == tc.replay(t, tc.LangChainClearToolUsesConfig(),
                                                             calibration=cal).tokens_sent_unreduced
    (tmp_path / SESSIONS[0].name).write_bytes(SESSIONS[0].read_bytes())
    corpus = tc.load_corpus(tmp_path)
    # calibrating (the default) replays in tokens as sent, as the app and the CLI do
    plain = tc.sweep_corpus(corpus, [tc.AnthropicClearToolUsesConfig()], engine="serial", calibrate=False).table
    sent = tc.sweep_corpus(corpus, [tc.AnthropicClearToolUsesConfig()], engine="serial").table
    assert sent["tokens_sent_unreduced"].iloc[0] == cmp.results[0].tokens_sent_unreduced
    one = tc.replay(t, tc.AnthropicClearToolUsesConfig(), calibration=cal)
    assert sent["peak_context"].iloc[0] == max(s.context_tokens for s in one.model_call_steps)
    assert sent["peak_context"].iloc[0] != plain["peak_context"].iloc[0]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_cost_is_the_same_with_or_without_tokens_as_sent(path) -> None:
    """The cost model fits its own overhead on the transcript's tokens: a replay in
    tokens as sent is priced the same."""
    t = tc.load(path)
    config = tc.AnthropicClearToolUsesConfig(trigger_input_tokens=10**9)  # the same decisions both ways
    plain, sent = tc.replay(t, config), tc.replay(t, config, calibration=tc.calibrate(t))
    a, b = tc.cost(plain, "claude-sonnet-4-5", calibrate=True), tc.cost(sent, "claude-sonnet-4-5", calibrate=True)
    assert a.dollars == pytest.approx(b.dollars)


def test_after_a_compaction_only_what_follows_it_comes_off() -> None:
    """A policy's savings on messages before the log's compaction were never sent after
    it: with tokens as sent, a call after the compaction sends its recorded prompt less
    only what the policy saved since."""
    path = next(p for p in SESSIONS if tc.calibrate(tc.load(p)).cuts)
    t = tc.load(path)
    cal = tc.calibrate(t)
    cut = cal.cuts[-1]
    r = tc.replay(t, tc.ClearToolResultConfig(20_000, 40_000), calibration=cal)
    after = [s for s in r.model_call_steps if s.call_index > cut]
    assert after
    for s in after:
        since = sum(r.token_counts[j] - r.token_counts_after[j] for j in range(cut, s.call_index)
                    if r.cleared_at[j] is not None and r.cleared_at[j] <= s.call_index)
        assert s.context_tokens == max(0, s.context_tokens_unreduced - round(cal.scale * since))


@pytest.mark.parametrize("path", SESSIONS[:4], ids=lambda p: p.name)
def test_the_calibration_over_arrays_is_the_one_call_by_call(path, monkeypatch) -> None:
    """The fit reads the log's usage as arrays (the first 10 % of calls, their cuts, their
    prompts at once); without numpy it walks the calls one by one. Both give the same
    calibration, on the real sessions and on one whose first tenth recorded nothing."""
    from toolclear.cost import calibration, logfacts

    t = tc.load(path)
    blank = tuple(m if m.role != "assistant" or k > len(t.messages) // 5 else
                  tc.Message(m.role, m.content, m.tool_calls) for k, m in enumerate(t.messages))
    for msgs in (t.messages, blank):
        calibration._calibrations.clear()
        fast = tc.calibrate(msgs)
        calibration._calibrations.clear()
        with monkeypatch.context() as m:
            m.setattr(logfacts, "_numpy", lambda: None)
            slow = tc.calibrate(msgs)
        assert fast.fitted and fast.fitted == slow.fitted
        assert (fast.overhead_tokens, fast.scale, fast.cuts, fast.notes) == (
            slow.overhead_tokens, slow.scale, slow.cuts, slow.notes)
        assert dict(fast.prompts) == dict(slow.prompts)
        assert pickle.loads(pickle.dumps(fast)) == fast  # results carry it to worker processes
    calibration._calibrations.clear()


def test_many_stretches_overheads_read_as_their_median_and_range() -> None:
    """A session that compacted hundreds of times had its note list every stretch's
    extra; up to six are listed, more read as their median and range."""
    from toolclear.cost.billing import _spread

    assert _spread((1200, -40, 0)) == "+1,200, -40, +0"
    many = tuple(range(-300, 9_001, 31))
    text = _spread(many)
    ordered = sorted(many)
    assert text == (f"{ordered[len(ordered) // 2]:+,} at the median of {len(many):,} stretches "
                    f"(from -300 to {ordered[-1]:+,})")
    assert str(len(many)) in text and text.count(",") < 6
