"""The prompt-cache model: numpy over all calls equal to the call-by-call reference on
random runs and on the real compacted Claude Code sessions, the replay's Trace against
its steps, and which earlier thinking each provider bills."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

import toolclear as tc
from toolclear.cost.logfacts import compactions_of

from ..conftest import corpus_id
from .test_cost import ANTHROPIC, OPENAI, REAL_CLAUDE, T0

KINDS = [ANTHROPIC, OPENAI, tc.Pricing(input=1.0, output=2.0, cache_read=0.25, cache="gemini", min_cacheable=200),
         # a system prompt long enough to cache: what survives a compaction or a change below it
         tc.Pricing(input=1.0, output=2.0, cache_read=0.25, cache="gemini", min_cacheable=200, overhead_tokens=400),
         tc.Pricing(input=1.0, output=2.0, cache="none"),
         tc.Pricing(input=1.0, output=2.0, cache_write=1.25, cache_read=0.1, cache="anthropic", min_cacheable=150,
                    overhead_tokens=400),
         # a long-context tier: calls past 1,500 prompt tokens pay it for all their tokens
         tc.Pricing(input=1.0, output=2.0, cache_write=1.25, cache_read=0.1, cache="anthropic", min_cacheable=150,
                    long_context_from=1_500, long=(2.0, 3.0, 2.5, 0.2, None))]


# seed 30 holds a run whose changes, counted from the compactions, come out of call order
@pytest.mark.parametrize("seed", sorted({*range(int(__import__("os").environ.get("TOOLCLEAR_COST_SEEDS", "6"))), 30}))
def test_fast_pricing_equals_the_call_by_call_reference(seed) -> None:
    """numpy over all calls gives what the reference (one call at a time, the cache as a
    stack of entries) gives: every policy, every cache kind, with and without times,
    resets and compactions."""
    import random

    from toolclear.cost import cache_model, cache_reference

    from ..policies.test_all_policies import POLICIES
    from ..policies.test_langchain import generate

    rng = random.Random(seed)
    for _ in range(12):
        msgs = generate(rng)
        if rng.random() < 0.5:
            t = T0
            stamped = []
            for m in msgs:
                if m.role == "assistant":
                    t = t + timedelta(seconds=rng.choice([5, 30, 200, 400, 4000]))
                    m = tc.Message(m.role, m.content, tool_calls=m.tool_calls, usage=tc.Usage(
                        timestamp=t.isoformat(), output_tokens=rng.randint(0, 50)))
                stamped.append(m)
            msgs = stamped
        if rng.random() < 0.5:  # thinking on some replies: what a provider does not re-send comes off
            msgs = [tc.Message(m.role, "thought " * rng.randint(50, 400) + m.content, tool_calls=m.tool_calls,
                               usage=m.usage, meta={"thinking": ("thought " * 10,)})
                    if m.role == "assistant" and rng.random() < 0.6 else m for m in msgs]
        config = rng.choice(POLICIES)
        rp = tc.replay(msgs, config, backend=tc.MemoryBackend() if isinstance(config, tc.EinoReductionConfig)
                       and not config.skip_truncation else None)
        calls = [s.call_index for s in rp.model_call_steps]
        # caches the log saw dropped at some calls (cache_resets): to nothing, or to a first part
        resets = {i: rng.choice([0, 300, 2_000]) for i in calls[1:] if rng.random() < 0.2}
        # compactions (Claude Code's summaries) anywhere in the run, at a call or between calls
        cuts = tuple(sorted(rng.sample(range(len(msgs)), min(len(msgs), rng.randint(1, 4))))) if rng.random() < 0.5 else ()
        for pricing in KINDS:
            kept = rng.choice(["all", "turn", "none"])
            # what the first call found cached (calibration's warm start): none, part of the overhead, more
            warm = rng.choice([0, 0, 250, 1_500])
            for with_policy in (True, False):
                fast = cache_model._price_fast(rp, pricing, pricing.overhead_tokens, 1.3, with_policy, cuts, warm,
                                            resets=resets, kept=kept)
                slow = cache_reference._price_loop(rp, pricing, pricing.overhead_tokens, 1.3, with_policy, cuts, warm,
                                            resets, kept)
                f_rows, s_rows = cache_model._rows(fast), cache_model._rows(slow)
                assert [r[:6] + (r.cache_break,) for r in f_rows] == [r[:6] + (r.cache_break,) for r in s_rows], (
                    config, pricing.cache, with_policy)
                for a, b in zip(f_rows, s_rows):
                    assert (a.dollars, a.input_dollars, a.break_dollars) == pytest.approx(
                        (b.dollars, b.input_dollars, b.break_dollars), abs=1e-12)


COMPACTED = [p for p in REAL_CLAUDE if compactions_of(tc.load_all(p)[0].messages)]


@pytest.mark.parametrize("path", COMPACTED, ids=corpus_id)
def test_cost_of_a_compacted_session_is_the_call_by_call_reference(path) -> None:
    """Real Claude Code sessions that compacted their context: ``cost`` (numpy over all
    calls) gives, call for call, what the reference loop gives, with and without each
    policy, calibrated, for Anthropic's cache and a prefix cache."""
    from toolclear.cost import billing as cost_mod
    from toolclear.cost import cache_model, cache_reference, logfacts, per_run

    from ..policies.test_all_policies import POLICIES

    msgs = tc.load_all(path)[0].messages
    cuts = compactions_of(msgs)
    assert cuts
    for config in POLICIES:
        rp = tc.replay(msgs, config, backend=tc.MemoryBackend() if isinstance(config, tc.EinoReductionConfig)
                       and not config.skip_truncation else None)
        for pricing in ("claude-sonnet-4-5", "gpt-5"):
            c = tc.cost(rp, pricing, calibrate=True)
            p = c.pricing
            resets = logfacts.cache_resets(msgs, p.ttl_seconds, cuts) if p.cache != "none" else {}
            if p.cache != "none":  # what the first call after each compaction read, as recorded
                resets = {**per_run.after_cuts(msgs, cuts), **resets}
            kept = cache_model.thinking_kept(p.model or p.name)
            warm = cost_mod._warm_start(rp) if c.calibrated_on else 0
            assert len(c.segment_extras) in (0, len(cuts) + 1)
            for with_policy, got in ((True, c.calls), (False, c.calls_without_policy)):
                ref = cache_reference._price_run(c._result, p, c.overhead_tokens, c.scale, with_policy, cuts, warm, resets,
                                             kept, c.segment_extras)
                assert [r[:6] + (r.cache_break,) for r in got] == [r[:6] + (r.cache_break,) for r in ref], (
                    config, pricing, with_policy)
                assert sum(r.dollars for r in got) == pytest.approx(sum(r.dollars for r in ref), rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_the_replays_trace_gives_the_columns_its_steps_give(seed) -> None:
    """Pricing reads the columns a replay recorded as it went (its Trace); they are the
    ones its Step objects hold, for every policy and both ways of running it."""
    import random

    from toolclear.cost import call_facts

    from ..policies.test_all_policies import POLICIES
    from ..policies.test_langchain import generate

    rng = random.Random(seed)
    for _ in range(10):
        msgs = generate(rng)
        config = rng.choice(POLICIES)
        persist = rng.choice([None, True, False])
        rp = tc.replay(msgs, config, persist=persist)
        assert rp._trace is not None
        k = len(rp.model_call_steps)
        fast = call_facts._step_columns(rp, k)
        slow = call_facts._step_columns(dataclasses.replace(rp, _trace=None), k)
        for name, a, b in zip(("ends", "sent", "unreduced", "changes", "own"), fast, slow):
            assert [x.tolist() for x in a] == [x.tolist() for x in b] if name == "changes" else (
                a.tolist() == b.tolist()), (config, persist, name)


def test_which_earlier_thinking_each_model_is_billed_for() -> None:
    from toolclear.cost.cache_model import thinking_kept

    assert [thinking_kept(m) for m in ("claude-opus-4-5-20251101", "claude-opus-4-6", "claude-sonnet-4-6",
                                       "claude-fable-5")] == ["all"] * 4  # kept from Opus 4.5 on
    assert [thinking_kept(m) for m in ("claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-opus-4-1",
                                       "claude-3-7-sonnet-latest", "gpt-5", "o3")] == ["turn"] * 6
    assert thinking_kept("gemini-2.5-pro") == "none"


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 100, 1000])
def test_the_reference_prefix_tree_holds_the_prefix_sums(n: int) -> None:
    """The reference loop's tree (built in one pass from the prefix sums) answers every
    prefix as the plain sum does, after any number of changes."""
    import random

    from toolclear.cost.cache_reference import _Fenwick

    rng = random.Random(n)
    values = [rng.randint(0, 50) for _ in range(n)]
    tree = _Fenwick(values)
    assert [tree.prefix(i) for i in range(n + 1)] == [sum(values[:i]) for i in range(n + 1)]
    for _ in range(60 if n else 0):
        i, v = rng.randrange(n), rng.randint(0, 99)
        tree.set(i, v)
        values[i] = v
    assert [tree.prefix(i) for i in range(n + 1)] == [sum(values[:i]) for i in range(n + 1)]


@pytest.mark.parametrize("seed", range(40))
def test_the_last_hit_at_or_before_each_call_is_the_running_maximum(seed) -> None:
    """``_last_true`` repeats each hit over its run on sparse masks (first calls after a
    compaction, resets) and takes a running maximum on dense ones: either way what the
    running maximum of the hit positions gives, at every density, empty and full."""
    import numpy as np

    from toolclear.cost.cache_model import _last_true

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    mask = rng.random(n) < [0.0, 0.01, 0.1, 0.2, 0.5, 1.0][seed % 6]
    idx = np.arange(n, dtype=np.int32)
    minus = np.full(n, -1, dtype=np.int32)
    want = np.maximum.accumulate(np.where(mask, idx, minus))
    assert np.array_equal(_last_true(mask, idx, minus), want)
    assert np.array_equal(_last_true(mask, idx, minus, np.flatnonzero(mask).astype(np.int32)), want)


@pytest.mark.parametrize("seed", range(30))
def test_what_comes_off_from_each_call_on_is_the_bincounts_running_sum(seed) -> None:
    """``_running_from`` repeats running totals over ascending steps and falls back to a
    bincount when they are not ascending: both give the running sum of what each step
    took off from its call on (steps past the run's calls ignored)."""
    import numpy as np

    from toolclear.cost.cache_model import _running_from

    rng = np.random.default_rng(seed)
    k_n = int(rng.integers(1, 300))
    at = rng.integers(0, k_n + 20, int(rng.integers(0, 60)))
    if seed % 3:
        at = np.sort(at)
    amounts = rng.integers(0, 10_000, len(at))
    keep = at < k_n
    want = np.cumsum(np.bincount(at[keep], weights=amounts[keep], minlength=k_n)[:k_n]).astype(np.int64)
    assert np.array_equal(_running_from(at, amounts, k_n), want)


def _stack_tops(broke, first, ends, times, entry, ttl, reset, new):
    """Anthropic's cache as the stack ``_anthropic_tops`` describes, one call at a time:
    a compaction or a reset empties it, a change at message f pops the entries ending
    after f, an expired top empties it, and a call long enough pushes its own."""
    stack: list[int] = []
    tops = []
    for k in range(len(entry)):
        if new is not None and new[k]:
            stack = []
        if broke[k]:
            while stack and ends[stack[-1]] > first[k]:
                stack.pop()
        top = stack[-1] if stack else -1
        if reset[k] or (times is not None and top >= 0 and times[k] - times[top] > ttl):
            stack, top = [], -1
        tops.append(top)
        if entry[k]:
            stack.append(k)
    return tops


@pytest.mark.parametrize("seed", range(200))
def test_each_calls_cache_top_is_the_stacks(seed) -> None:
    """Both ways of finding every call's top give what the stack gives: the walk for
    any calls that cache, and the walk over the breaks alone when those that cache run
    to the end (the usual run), with compactions, resets, expiries and unknown times;
    changes only climb, as ``_breaks`` makes sure before either runs."""
    import numpy as np

    from toolclear.cost.cache_model import _anthropic_tops, _tops_at_breaks, _tops_walk

    rng = np.random.default_rng(seed)
    k_n = int(rng.integers(1, 60))
    ends = np.cumsum(rng.integers(1, 5, k_n))
    broke = rng.random(k_n) < [0.05, 0.3, 0.8][seed % 3]
    broke[0] = False
    first = ends.copy()
    floor = 0  # each break's change lies at or above the last one's, below the call before
    for k in np.flatnonzero(broke):
        if floor >= ends[k - 1]:
            broke[k] = False
            continue
        first[k] = floor = int(rng.integers(floor, ends[k - 1]))
    times = None
    if seed % 4:
        times = np.cumsum(rng.choice([1.0, 5.0, 400.0], k_n))
        times[rng.random(k_n) < 0.15] = np.nan
    reset = rng.random(k_n) < [0.0, 0.1][seed % 2]
    new = rng.random(k_n) < 0.1 if seed % 5 else None
    suffix = np.arange(k_n) >= int(rng.integers(0, k_n + 1))
    for entry in (rng.random(k_n) < 0.7, suffix):
        want = _stack_tops(broke, first, ends, times, entry, 300, reset, new)
        assert _tops_walk(broke, first, ends, times, entry, 300, reset, new).tolist() == want
        assert _anthropic_tops(broke, first, ends, times, entry, 300, reset, new).tolist() == want
    got = _tops_at_breaks(broke, first, ends, times, suffix, 300, reset, new, None, {})
    assert got.tolist() == want
