"""A replay's totals (tokens sent, peaks, cache breaks) read off its Trace equal the
same totals summed over its Step objects, for every policy that leaves a Trace, and a
result whose steps were rewritten (calibrated, media-corrected) sums its own steps."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear.result import Result

from ..conftest import CORPUS, hypothesis_examples
from .test_all_policies import POLICIES, conversations

COMPACTED = CORPUS / "claude_code" / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl"  # compacts once


def by_steps(r: Result) -> dict[str, int]:
    """The totals as a pass over the Step objects works them out."""
    calls = r.steps[:-1] if r.mode == "replay" else r.steps
    return {
        "tokens_sent": sum(s.context_tokens for s in calls),
        "tokens_sent_unreduced": sum(s.context_tokens_unreduced for s in calls),
        "peak_context": max((s.context_tokens for s in calls), default=0),
        "peak_context_unreduced": max((s.context_tokens_unreduced for s in calls), default=0),
        "cache_breaks": sum(1 for s in r.steps if s.cache_break),
        "model_call_count": len(calls),
    }


def totals(r: Result) -> dict[str, int]:
    return {k: getattr(r, k) for k in by_steps(r)}


def fresh(r: Result) -> Result:
    """The same result with nothing worked out yet (its cached totals dropped)."""
    return replace(r)


@settings(max_examples=hypothesis_examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(0, len(POLICIES) - 1))
def test_hyp_totals_off_the_trace_are_the_steps_totals(seed, k) -> None:
    config = POLICIES[k]
    backend = tc.MemoryBackend() if isinstance(config, tc.EinoReductionConfig) else None
    for msgs in conversations(2, seed):
        r = tc.replay(msgs, config, backend=backend)
        assert totals(r) == by_steps(r)


@pytest.mark.parametrize("keep", [0, 200, 5_000, 10**9])
def test_eino_replay_reads_its_totals_off_the_trace(keep) -> None:
    t = tc.load(COMPACTED)
    r = tc.replay(t.messages, tc.ClearToolResultConfig(tool_result_token_threshold=500, keep_recent_tokens=keep))
    assert r._columns is not None  # the fast path is the one taken
    assert totals(r) == by_steps(r)
    assert r.cache_breaks == by_steps(r)["cache_breaks"] and (keep == 10**9 or r.cache_breaks > 0)


def test_the_run_as_recorded_reads_its_totals_off_the_trace() -> None:
    t = tc.load(COMPACTED)
    r = tc.replay(t.messages, tc.parse_policy("as-recorded"))
    assert r._columns is not None and r.compactions
    assert totals(r) == by_steps(r)


def test_rewritten_steps_sum_themselves() -> None:
    """A calibration (and pricing's media correction) rewrites the steps and keeps the
    Trace: the totals then come from the steps, not from a Trace that no longer says them."""
    t = tc.load(COMPACTED)
    calibration = tc.calibrate(t.messages)
    assert calibration.fitted
    r = tc.replay(t.messages, tc.ClearToolResultConfig(500, 2_000), calibration=calibration)
    assert r._trace is not None and r._columns is None
    assert totals(r) == by_steps(r)
    plain = tc.replay(t.messages, tc.ClearToolResultConfig(500, 2_000))
    assert r.tokens_sent != plain.tokens_sent  # the calibrated steps are other numbers
    moved = replace(plain, steps=tuple(s._replace(context_tokens=s.context_tokens + 1) for s in plain.steps))
    assert moved._columns is None and moved.tokens_sent == plain.tokens_sent + plain.model_call_count


def test_a_pickled_replay_keeps_its_totals() -> None:
    import pickle

    rng = random.Random(3)
    msgs = conversations(1, rng.randint(0, 99))[0]
    r = tc.replay(msgs, tc.ClearToolResultConfig(100, 200))
    back = pickle.loads(pickle.dumps(fresh(r)))
    assert back._columns is not None  # the steps and the tuple the Trace describes are one object again
    assert totals(back) == by_steps(r)


def test_a_change_at_the_first_call_breaks_no_cache() -> None:
    """The first call has no earlier call whose cached prefix it could break: a history
    that arrives with tool results already in it (a resumed run) is cleared at call 0."""
    big = "x" * 400
    msgs = [tc.Message("user", "go"), tc.Message("tool", big, tool_call_id="a"), tc.Message("tool", big, tool_call_id="b"),
            tc.Message("assistant", "ok"), tc.Message("tool", big, tool_call_id="c"), tc.Message("assistant", "done")]
    r = tc.replay(msgs, tc.ClearToolResultConfig(tool_result_token_threshold=10, keep_recent_tokens=0))
    assert r.steps[0].cleared_indices and not r.steps[0].cache_break
    assert r._columns is not None
    assert totals(r) == by_steps(r)
