"""The providers' prompt caches over a run, call by call.

Every provider caches the prompt prefix, and clearing an old tool result changes it:
the next call pays to write (Anthropic) or to send uncached (OpenAI, Gemini) the rest
of the prompt again. Two implementations of one model: ``cache_reference._price_run``,
the reference, one call at a time with the cache's entries as a stack, and
``_price_fast`` here, numpy over all calls at once; the tests hold them equal call for
call.

The cache, per kind:

* ``anthropic``: each call writes its whole prompt as a cache entry (a breakpoint at its
  end, as Claude Code and automatic caching do); a later call reads the longest earlier
  entry that is still a prefix of its prompt and still alive (TTL, refreshed on a hit),
  and writes the rest at the write price. Prompts under ``min_cacheable`` are neither
  read nor written.
* ``openai``: automatic prefix caching: the longest prefix shared with an earlier prompt
  still alive, in 128-token steps, from 1,024 tokens; no write fee, the rest uncached.
* ``gemini``: implicit caching: the same, without the 128-token steps.
* ``none``: everything uncached.

Times come from the log's recorded usage where it has them, else calls follow each
other within the TTL."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from .._kept import Same
from ..result import Result, _breaks_at
from .call_facts import _call_facts, _int_array, _ints, frozen
from .logfacts import _numpy
from .prices import Pricing

__all__ = ["CallCost", "ThinkingKept", "thinking_kept"]


class CallCost(NamedTuple):
    """One model call, priced."""

    call_index: int
    prompt_tokens: int
    uncached_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    dollars: float
    input_dollars: float
    cache_break: bool = False
    break_dollars: float = 0.0
    """What the break cost: this call's input dollars less what it would have cost had
    the previous prompt still been its prefix."""


_COLUMNS = CallCost._fields


def _rows(columns: Mapping[str, Any]) -> tuple[CallCost, ...]:
    cols = [columns[k] for k in _COLUMNS]
    out = []
    for values in zip(*cols):
        out.append(CallCost(*(v.item() if hasattr(v, "item") else v for v in values)))
    return tuple(out)


def _columns(rows: Sequence[CallCost]) -> dict[str, list[Any]]:
    return {k: [getattr(r, k) for r in rows] for k in _COLUMNS}


ThinkingKept = Literal["all", "turn", "none"]


def thinking_kept(model: str) -> ThinkingKept:
    """Which earlier thinking a provider re-sends and bills as input. Anthropic keeps the
    thinking of earlier assistant turns from Claude Opus 4.5 on (documented), taken here
    for every Claude model from 4.6 too; earlier Claude models strip it once a new user
    turn starts ("turn"). OpenAI passes reasoning back only within a turn's tool calls
    ("turn"); Gemini never re-sends thoughts, only their signatures ("none")."""
    import re

    from .media import provider_of

    provider = provider_of(model)
    if provider == "gemini":
        return "none"
    if provider == "openai":
        return "turn"
    found = re.search(r"claude-([a-z]+)-(\d+)(?:-(\d)(?!\d))?", model.lower())
    if found is None:
        return "turn"
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    return "all" if major >= 5 or (major, minor) >= (4, 6) or (family == "opus" and (major, minor) >= (4, 5)) \
        else "turn"


def _not_sent(facts: tuple[list[int], list[int]] | None, kept: ThinkingKept, cut: int, end: int, upto: int) -> int:
    """The thinking tokens of messages ``cut`` to ``upto - 1`` that a call ending at
    ``end`` does not send."""
    if facts is None or kept == "all":
        return 0
    think, last_user = facts
    limit = min(upto, end if kept == "none" else last_user[end])
    return max(0, think[max(limit, cut)] - think[cut])


def _anthropic_tops(broke: Any, first: Any, ends: Any, times: Any | None, entry: Any, ttl: int,
                    reset: Any, new: Any | None = None, gap: Any | None = None, memo: dict[Any, Any] | None = None) -> Any:
    """For each call, the call whose cache entry it reads from Anthropic's cache (-1:
    none), all calls at once.

    The cache is a stack of entries (each call's prompt, pushed when long enough); a
    change at message f pops the entries ending after f; an expired top empties it.
    With changes that never reach below an earlier change (what ``_breaks`` checks),
    the f of successive breaks only grows, so an entry's fate is settled at the first
    break after it: it dies there if it ends after that f, else it outlives every
    break. The top is the last entry since the latest break, or else the last entry
    before that break that outlived its own; an emptying (an expired top) kills every
    entry before it, as a compaction (``new``: the first call after one) does. Equal to
    the stack, call for call (the tests run both)."""
    k_n = len(entry)
    if k_n and not (entry[:-1] & ~entry[1:]).any():  # the calls that cache are a run to the end
        return _tops_at_breaks(broke, first, ends, times, entry, ttl, reset, new, gap, memo)
    return _tops_walk(broke, first, ends, times, entry, ttl, reset, new)


def _tops_walk(broke: Any, first: Any, ends: Any, times: Any | None, entry: Any, ttl: int, reset: Any,
               new: Any | None = None) -> Any:
    """``_anthropic_tops`` for any calls that cache: every call's top from the entries'
    fates, all calls at once."""
    import numpy as np

    k_n = len(entry)
    i32 = np.int32  # call positions: half the memory traffic of int64
    idx = np.arange(k_n, dtype=i32)
    minus = np.full(k_n, -1, dtype=i32)
    big = k_n + 1
    brk = np.flatnonzero(broke).astype(i32)
    # the first break strictly after each call (big: none), and where that break's change
    # starts: a running minimum from the end (selects by arithmetic: np.where over a
    # mixed mask is several times slower)
    after = np.full(k_n, big, dtype=i32)
    if len(brk):
        after[:-1] = np.minimum.accumulate(((idx - big) * broke + big)[:0:-1])[::-1]
    has_after = after < k_n
    f_after = first[np.minimum(after, k_n - 1)]
    outlives = entry & (~has_after | (ends <= f_after))
    last_break = _last_true(broke, idx, minus, brk)  # at or before each call
    last_entry = np.empty(k_n, dtype=i32)  # strictly before each call
    last_entry[0] = -1
    last_entry[1:] = idx[:-1] if entry.all() else _last_true(entry, idx, minus)[:-1]
    last_outliving = _last_true(outlives, idx, minus)
    # the last outliving entry before the latest break (-1: no break, or none)
    before_break = (last_outliving[np.maximum(last_break - 1, 0)] + 1) * (last_break > 0) - 1
    from_break = last_entry >= last_break
    top = before_break + (last_entry - before_break) * from_break
    if new is not None and new.any():  # nothing from before the call's compaction lives
        top = (top + 1) * (top >= np.maximum(_last_true(new, idx, minus), 0)) - 1
    expired = reset.copy()  # a reset the log recorded empties the cache, as an expiry does
    if times is not None:  # without call times nothing expires
        expired |= (top >= 0) & (times - times[np.maximum(top, 0)] > ttl)  # nan times never expire
    if not expired.any():
        return top
    emptied = _last_true(expired, idx, minus)  # the latest emptying at or before each call
    return (top + 1) * ((top >= 0) & ~expired & (top >= emptied)) - 1


def _tops_at_breaks(broke: Any, first: Any, ends: Any, times: Any | None, entry: Any, ttl: int, reset: Any,
                    new: Any | None, gap: Any | None = None, memo: dict[Any, Any] | None = None) -> Any:
    """``_anthropic_tops`` when every call from the first that caches on caches too (the
    usual run: prompts only grow past the minimum). A call no change broke then reads the
    entry of the call before it, so only the breaks walk back: at a break, the entries
    since the previous break that outlive it are those ending at or before its change
    (calls end in order), the last of them its top; none, and the previous break's top
    carries over. Work over the breaks, not every call; equal to the general walk (the
    tests run both, and the stack)."""
    import numpy as np

    k_n = len(entry)
    start = int(entry.argmax()) if entry[-1] else k_n  # the first call that caches
    top = np.arange(-1, k_n - 1)
    top[: start + 1] = -1
    if new is not None:  # nothing from before the call's compaction lives
        top[new] = -1
    brk = np.flatnonzero(broke)
    top_b = top[:0]
    if len(brk):
        latest = _call_upto(ends, memo)[first[brk]]  # the last call ending at or before each change
        since = np.maximum(np.concatenate(([0], brk[:-1])), start)
        top_b = np.maximum.accumulate((latest + 1) * (latest >= since) - 1)
        if new is not None and new.any():
            top_b = (top_b + 1) * (top_b >= _latest_new(new, memo)[brk]) - 1
        top[brk] = top_b
    expired = reset.copy()  # a reset the log recorded empties the cache, as an expiry does
    if times is not None:  # the gap to the call before, except at breaks (nan times never expire)
        if gap is None:
            gap = np.zeros(k_n, dtype=bool)
            gap[1:] = times[1:] - times[:-1] > ttl
        expired |= gap & (top >= 0)
        if len(brk):
            expired[brk] = reset[brk] | ((top_b >= 0) & (times[brk] - times[np.maximum(top_b, 0)] > ttl))
    if not expired.any():
        return top
    top = (top + 1) * ~expired - 1  # an emptying before the call's own: only breaks read that far back
    if len(brk):
        emptied = np.flatnonzero(expired)
        before = np.cumsum(expired, dtype=np.int32)[brk] - 1  # the emptyings at or before each break, less one
        top[brk] = (top_b + 1) * (~expired[brk] & (top_b >= emptied[np.maximum(before, 0)] * (before >= 0))) - 1
    return top


def _kept_in(memo: dict[Any, Any] | None, name: Any, key: Any, make: Callable[[], Any]) -> Any:
    """What ``make`` gives (an array, or a tuple of them), made read-only and kept in a
    run's ``memo`` under ``name`` while ``key`` is the same (``==``; an array in it as
    ``Same``): what no policy changes, worked out once for every replay and pricing of
    the run. Without a memo, made each time."""
    if memo is None:
        return make()
    kept = memo.get(name)
    if kept is None or kept[0] != key:
        value = make()
        frozen(*(value if isinstance(value, tuple) else (value,)))
        kept = memo[name] = (key, value)
    return kept[1]


def _call_upto(ends: Any, memo: dict[Any, Any] | None) -> Any:
    """``out[m]``: the last call ending at or before message m (-1: none), for every
    message up to the last call's: a lookup instead of a search per break, the same for
    every replay of the run (kept in ``memo``)."""
    import numpy as np

    return _kept_in(memo, "call_upto", Same(ends),
                    lambda: np.searchsorted(ends, np.arange(int(ends[-1]) + 1), side="right") - 1)


def _latest_new(new: Any, memo: dict[Any, Any] | None) -> Any:
    """The first call after the latest compaction at or before each call (0: none): the
    same for every replay of the run (kept in ``memo`` with ``new``)."""
    import numpy as np

    idx = np.arange(len(new))
    return _kept_in(memo, "latest_new", Same(new),
                    lambda: np.maximum(_last_true(new, idx, np.full(len(new), -1), np.flatnonzero(new)), 0))


def _last_true(mask: Any, idx: Any, minus: Any, at: Any = None) -> Any:
    """For each position, the last position at or before it where ``mask`` holds (-1:
    none). Sparse masks repeat each hit over its run (a few times faster on this data:
    a tenth of the calls are the first after a compaction or a reset); dense ones take
    a running maximum."""
    import numpy as np

    if at is None:
        at = np.flatnonzero(mask)
    if len(at) * 8 > len(mask):  # the position where it holds, -1 elsewhere, by arithmetic
        return np.maximum.accumulate((idx + 1) * mask - 1)
    out = np.empty(len(mask), dtype=idx.dtype)
    if not len(at):
        out[:] = -1
        return out
    out[: at[0]] = -1
    out[at[0]:] = np.repeat(at.astype(idx.dtype), np.diff(np.append(at, len(mask))))
    return out


def _zeros(f: Mapping[str, Any], kind: type) -> Any:
    """A read-only column of zeros, one per call, shared by every pricing of the run (a
    run without the policy breaks nothing; most runs with it pay for no break)."""
    np = _numpy()
    k_n = len(f["ends"])
    return _kept_in(f.get("memo"), ("zeros", kind), k_n, lambda: np.zeros(k_n, dtype=kind))


def _breaks(f: dict[str, Any], with_policy: bool) -> tuple[Any, Any]:
    """Which calls broke the cache and the lowest message each changed; (None, None)
    when a change reaches down to an earlier one (the fast prefix sums assume not).
    Works over the calls that changed something."""
    import numpy as np

    ends = f["ends"]
    if not with_policy:
        return _zeros(f, bool), ends.copy()
    at, low, _ = f["changes"]
    broke_at = _breaks_at(at, low, ends)
    highest = _highest(f)
    if len(low) > 1 and (broke_at[1:] & (low[1:] <= highest[:-1])).any():
        return None, None  # a change at or below an earlier one: saved again there
    hit = at[broke_at]
    broke = np.zeros(len(ends), dtype=bool)
    broke[hit] = True
    first = ends.copy()
    first[hit] = low[broke_at]
    return broke, first


def _highest(f: dict[str, Any]) -> Any:
    """The highest message changed so far, at each call that changed something: kept in
    ``f`` for the breaks and the compactions' columns."""
    import numpy as np

    found = f.get("highest")
    if found is None:
        high = f["changes"][2]
        found = f["highest"] = np.maximum.accumulate(high) if len(high) else high
    return found


def _within(f: dict[str, Any], cut_at: Any, stretch: Any) -> Any:
    """Whether every change so far lies below the call's compaction. The highest change
    only climbs, and so does the compaction, so within each stretch between compactions
    it holds up to the first call whose change reaches the stretch's compaction."""
    import numpy as np

    at = f["changes"][0]
    k_n = len(f["ends"])
    reach = np.append(at, k_n)[np.searchsorted(_highest(f), cut_at, side="left")]
    return np.arange(k_n) < reach[stretch]


def _anthropic_hits(p: Pricing, prompt: Any, broke: Any, first: Any, ends: Any, times: Any,
                    expired: Any, overhead: int, base: int, timed: bool, reset: Any,
                    new: Any | None = None, memo: dict[Any, Any] | None = None) -> Any:
    """The tokens each call reads from Anthropic's cache (before the minimum-length check
    of its own prompt, and before a reset's cap)."""
    import numpy as np

    k_n = len(prompt)
    entry_a = prompt >= p.min_cacheable
    top = _anthropic_tops(broke, first, ends, times if timed else None, entry_a, p.ttl_seconds, reset, new,
                          expired, memo)
    hit = prompt[np.maximum(top, 0)] * (top >= 0)  # selects by arithmetic: np.where is slower on mixed masks
    floor = base or overhead
    if floor >= p.min_cacheable:
        # the prefix every prompt starts with (the system prompt and tools): what the first
        # call found cached (a warm start), else the overhead once a call has cached it;
        # it lives while calls long enough to be cached keep refreshing it
        if entry_a.all():  # every call cached: the last one before each call is the call before it
            held = ~expired
            held[0] = bool(base)
        else:
            idx = np.arange(k_n)
            pushed = np.maximum.accumulate(np.where(entry_a, idx, -1))
            last = np.concatenate(([-1], pushed[:-1]))  # the last call that cached, before each call
            held = np.ones(k_n, dtype=bool) if base else last >= 0
            if timed:
                held &= ~((last >= 0) & (times - times[np.maximum(last, 0)] > p.ttl_seconds))  # nan: still held
        hit = np.maximum(hit, held * floor)
    return hit * (hit >= p.min_cacheable)


def _prefix(result: Result) -> Any:
    """``prefix[i]``: the tokens before message i, as an int64 array."""
    import numpy as np

    return (_int_array(result._trace.prefix) if result._trace is not None else
            np.concatenate(([0], np.cumsum(np.asarray(result.token_counts, dtype=np.int64)))))


class _Segments(NamedTuple):
    """Where each call stands against the log's compactions: the last one before it
    (0: none), whether it is the first call after a new one, and the tokens before that
    compaction as the call sees them (with the policy's changes below it)."""

    cut: Any
    new: Any
    base: Any


def _segments(result: Result, f: dict[str, Any], cuts: Sequence[int], with_policy: bool) -> _Segments | None:
    """The compactions as arrays (None: the log has none). Messages before a compaction
    are not sent after it, so the policy's savings on them come off what lies before the
    compaction, from the call that made them or the first call after the compaction,
    whichever is later (the reference's tree of prefix sums, all calls at once)."""
    import numpy as np

    if not cuts:
        return None
    ends = f["ends"]
    k_n = len(ends)
    cuts_a = np.asarray(cuts, dtype=np.int64)
    stretch = _stretches(f, cuts)  # the compactions before each call

    def make() -> tuple[Any, ...]:  # the same for the run with and without the policy
        cut_at = np.concatenate(([0], cuts_a))  # the last compaction before a call, by how many there are
        cut = cut_at[stretch]
        # the first call after each compaction (k_n: none), and one more for "no compaction"
        first_after = np.append(np.searchsorted(ends, cuts_a, side="right"), k_n)
        return cut, cut != np.concatenate(([0], cut[:-1])), _prefix(result)[cut], first_after, cut_at

    cut, new, base, first_after, cut_at = _kept_in(f["memo"], "cuts", tuple(cuts), make)
    if not with_policy:
        return _Segments(cut, new, base)
    tr = result._trace
    if tr is not None and len(tr.changed):
        # the replay kept each change (once per message, in the order of the calls and of
        # the messages alike) and the running total saved: the changes a call counts below
        # its compaction are the first ones either way (those below the compaction, those
        # made by then), the fewer of the two; those made by then, when every change so
        # far lies below the compaction, else those below it
        count = np.searchsorted(_ints(tr.changed), cut_at, side="left")  # the changes below each compaction
        below = (np.take(_ints(tr.changed_saved), count - 1) * (count > 0))[stretch]
        by_then = f["ctx_u"] - f["ctx_w"]  # what the call's context is spared
        return _Segments(cut, new, base - below - (by_then - below) * _within(f, cut_at, stretch))
    if result.cleared_indices:
        changed = result.cleared_indices
        idx = np.asarray(changed, dtype=np.int64)
        at = np.fromiter((result.cleared_at[i] for i in changed), dtype=np.int64, count=len(changed))
        k_change = np.searchsorted(ends, at, side="left")
        running = np.cumsum(_int_array(result.token_counts)[idx]
                            - np.asarray(result.token_counts_after, dtype=np.int64)[idx])
        step_start = np.flatnonzero(np.concatenate(([True], k_change[1:] != k_change[:-1])))
        step_k = k_change[step_start]
    else:
        return _Segments(cut, new, base)
    # runs of changed messages made by one call and lying between the same compactions:
    # each run comes off, as a whole, from its call or the first call past the next
    # compaction, whichever is later
    mark = np.zeros(len(idx) + 1, dtype=bool)
    mark[step_start] = True
    mark[np.searchsorted(idx, cuts_a, side="left")] = True  # a compaction past every change marks the end
    starts = np.flatnonzero(mark[:-1])
    k_run = np.maximum(step_k[np.searchsorted(step_start, starts, side="right") - 1],
                       first_after[np.searchsorted(cuts_a, idx[starts], side="right")])
    total = np.concatenate(([0], running))
    saved = total[np.append(starts[1:], len(idx))] - total[starts]
    return _Segments(cut, new, base - _running_from(k_run, saved, k_n))


def _running_from(at: Any, amounts: Any, k_n: int) -> Any:
    """``out[k]``: the sum of ``amounts[j]`` over every ``at[j] <= k`` (values past
    ``k_n`` ignored), in integers. With ``at`` ascending (a run's steps, mostly) each run
    of calls between two of them repeats one running total, a third of a bincount's time."""
    import numpy as np

    if len(at) > 1 and not (at[1:] >= at[:-1]).all():
        keep = at < k_n
        return np.rint(np.cumsum(np.bincount(at[keep], weights=amounts[keep], minlength=k_n)[:k_n])).astype(np.int64)
    out = np.zeros(k_n, dtype=np.int64)
    inside = int(np.searchsorted(at, k_n, side="left"))
    if not inside:
        return out
    at, total = at[:inside], np.cumsum(amounts[:inside])
    last = np.flatnonzero(np.append(at[1:] != at[:-1], True))  # the last of each equal run
    starts = at[last]
    out[starts[0]:] = np.repeat(total[last], np.diff(np.append(starts, k_n)))
    return out


def _shared(result: Result, f: Mapping[str, Any], prompt: Any, broke: Any, first: Any, overhead: Any,
            scale: float, with_policy: bool, seg: _Segments | None = None) -> Any:
    """The prefix each call shares with the previous prompt (what OpenAI and Gemini read);
    after a compaction only the overhead."""
    import numpy as np

    shared = np.zeros(len(prompt), dtype=np.int64)
    shared[1:] = prompt[:-1]
    if with_policy and broke.any():
        prefix = _prefix(result)
        idx = np.flatnonzero(broke)
        saved_before = f["ctx_u"][idx - 1] - f["ctx_w"][idx - 1]  # all earlier savings lie below the change
        body = prefix[first[idx]] - saved_before
        if seg is not None:
            body = body - seg.base[idx]
        if f.get("think") is not None:  # thinking before the change that this call does not send
            think = f["think"]
            upto = np.minimum(first[idx], f["think_limit"][idx])
            body = body - (think[upto] if seg is None else
                           think[np.maximum(upto, seg.cut[idx])] - think[seg.cut[idx]])
        if seg is not None:  # a change below the compaction: only the overhead is shared
            body = np.where(first[idx] < seg.cut[idx], 0, body)
        shared[idx] = np.maximum(0, (overhead[idx] if isinstance(overhead, np.ndarray) else overhead)
                                 + np.rint(body * scale).astype(np.int64))
    if seg is not None:
        shared[seg.new] = overhead[seg.new] if isinstance(overhead, np.ndarray) else overhead
    return shared


def _positions(f: Mapping[str, Any], mask: Any) -> Any:
    """Where ``mask`` holds: kept with the run's facts for a read-only column of them
    (the resets', the same for every pricing of the run)."""
    np = _numpy()
    if mask.flags.writeable:
        return np.flatnonzero(mask)
    return _kept_in(f.get("memo"), "positions", Same(mask), lambda: np.flatnonzero(mask))


def _output_dollars(f: Mapping[str, Any], outs: Any, rate: Any) -> Any:
    """Each call's output at ``rate`` per million: the run's outputs do not change with
    the policy, so one price's column is kept with its facts."""
    np = _numpy()
    if outs.flags.writeable or isinstance(rate, np.ndarray):
        return outs * rate / 1e6
    return _kept_in(f.get("memo"), "output_dollars", (Same(outs), rate), lambda: outs * rate / 1e6)


def _rates(p: Pricing, prompt: Any) -> tuple[Any, Any, Any, Any]:
    """(input, output, cache write, cache read) prices per call: the long-context tier's
    for calls past its threshold."""
    import numpy as np

    base = (p.input, p.output, p.cache_write, p.cache_read)
    if p.long is None or not p.long_context_from:
        return base
    long = prompt > p.long_context_from
    if not long.any():
        return base
    tier = p.for_prompt(p.long_context_from + 1)
    i, o, w, r = (np.where(long, b, a) for a, b in zip(base, (tier.input, tier.output, tier.cache_write,
                                                              tier.cache_read)))
    return i, o, w, r


def _reset_columns(f: dict[str, Any], resets: Mapping[int, int] | None) -> tuple[Any, Any]:
    """(whether the log's cache was reset at each call, what it still held there): the
    same for the run with and without the policy, so worked out once."""
    import numpy as np

    def make() -> tuple[Any, Any]:
        ends = f["ends"]
        k_n = len(ends)
        reset = np.zeros(k_n, dtype=bool)
        cap = np.zeros(k_n, dtype=np.int64)
        if resets:
            keys = np.fromiter(resets, dtype=np.int64, count=len(resets))
            held = np.fromiter(resets.values(), dtype=np.int64, count=len(resets))
            pos = np.minimum(np.searchsorted(ends, keys), k_n - 1)
            hit = ends[pos] == keys  # resets at calls this run makes
            reset[pos[hit]] = True
            cap[pos[hit]] = held[hit]
        return reset, cap

    result: tuple[Any, Any] = _kept_in(f.setdefault("memo", {}), "resets", Same(resets), make)
    return result


def _stretches(f: dict[str, Any], cuts: Sequence[int]) -> Any:
    """How many of the log's compactions come before each call (the stretch between
    them it falls in): the same for every replay of the run, so kept with its facts."""
    np = _numpy()
    return _kept_in(f.setdefault("memo", {}), "stretches", tuple(cuts),
                    lambda: np.searchsorted(np.asarray(cuts, dtype=np.int64), f["ends"], side="left"))


def _stretch_of_each(f: dict[str, Any], cuts: Sequence[int], stretches: int) -> Any:
    """``_stretches`` capped at the last of ``stretches``, kept as it is."""
    np = _numpy()
    return _kept_in(f.setdefault("memo", {}), "stretch", (tuple(cuts), stretches),
                    lambda: np.minimum(_stretches(f, cuts), stretches - 1))


def _overhead_of_each(f: dict[str, Any], cuts: Sequence[int], overhead: int, extras: Sequence[int],
                      extra_at: Sequence[int] | None) -> Any:
    """Each call's overhead: its stretch's (between the log's compactions, or between
    ``extra_at``), read-only; the same for every replay of the run, so kept with its
    facts for the log's compactions."""
    np = _numpy()
    if extra_at is not None:
        stretch = np.minimum(np.searchsorted(np.asarray(extra_at, dtype=np.int64), f["ends"], side="left"),
                             len(extras) - 1)
        return overhead + np.asarray(extras, dtype=np.int64)[stretch]
    return _kept_in(f.setdefault("memo", {}), "overhead_of_each", (tuple(cuts), overhead, tuple(extras)),
                    lambda: overhead + np.asarray(extras, dtype=np.int64)[_stretch_of_each(f, cuts, len(extras))])


def _expired(f: Mapping[str, Any], ttl: int) -> Any:
    """Whether the cache entry of the call before each call had expired by then (its
    time minus the previous call's past ``ttl``; unknown times keep it alive): the run's,
    kept with its facts per TTL. Read-only."""
    np = _numpy()

    def make() -> Any:
        k_n = len(f["ends"])
        if not f["timed"]:
            return np.zeros(k_n, dtype=bool)
        times = f["times"]
        dt = np.empty(k_n)
        dt[0] = np.nan
        dt[1:] = times[1:] - times[:-1]
        return dt > ttl  # nan compares False: unknown times keep the cache alive

    return _kept_in(f.get("memo"), ("expired", ttl), None, make)


def _price_fast(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
                cuts: Sequence[int], warm: int = 0, facts: Any = None,
                resets: Mapping[int, int] | None = None, kept: ThinkingKept = "all",
                extras: Sequence[int] = (), extra_at: Sequence[int] | None = None) -> dict[str, Any]:
    """The same prices as ``_price_run`` with numpy over all calls at once; only calls
    whose cache entry a change invalidated are worked one by one. Falls back to the
    reference when a change reaches below an earlier change of the same run (policies
    here clear oldest first)."""
    np = _numpy()
    p = pricing
    k_n = result.model_call_count
    if k_n == 0:
        return _columns(())
    f = facts if facts is not None else _call_facts(result, scale, kept)
    ends, times, outs = f["ends"], f["times"], f["outs"]
    broke, first = _breaks(f, with_policy)
    if broke is None:
        # a change below an earlier one: the reference's stack of prefixes handles it
        from .cache_reference import _price_loop

        return _price_loop(result, pricing, overhead, scale, with_policy, cuts, warm, resets, kept, extras, extra_at)
    ctx = f["ctx_w"] if with_policy else f["ctx_u"]
    seg = _segments(result, f, cuts, with_policy)
    if seg is not None:  # only what follows the call's compaction is sent
        ctx = ctx - seg.base
        if f.get("think") is not None:  # the thinking not sent, counted from the compaction
            think, lim = f["think"], f["think_limit"]
            ctx = ctx + think[lim] - (think[np.maximum(lim, seg.cut)] - think[seg.cut])
    sent = ctx if scale == 1.0 else np.rint(ctx * scale).astype(np.int64)
    each: Any = overhead  # the overhead of each call: its segment's where they differ
    if any(extras):
        each = _overhead_of_each(f, cuts, overhead, extras, extra_at)
        prompt = np.maximum(0, sent + each)
    else:
        prompt = overhead + sent
    expired = _expired(f, p.ttl_seconds)
    reset, cap = _reset_columns(f, resets)
    write = read = _zeros(f, np.int64)
    base = (min(warm, overhead) or warm) if warm else 0
    if p.cache == "none":
        uncached = prompt.copy()
    elif p.cache == "anthropic":
        hit = _anthropic_hits(p, prompt, broke, first, ends, times, expired, overhead, base, f["timed"],
                              reset, None if seg is None else seg.new, f.get("memo"))
        at_reset = _positions(f, reset)
        if len(at_reset):  # what the cache still held there, if still long enough to read
            held = np.minimum(hit[at_reset], cap[at_reset])
            hit[at_reset] = held * (held >= p.min_cacheable)
        read = np.minimum(hit, prompt)
        write = prompt - read
        small = prompt < p.min_cacheable
        if small.any():  # too short to cache: sent uncached
            read *= ~small
            write *= ~small
            uncached = prompt * small
        else:
            uncached = None  # none
    else:
        alive = ~expired
        alive[0] = False
        common = np.where(alive, _shared(result, f, prompt, broke, first, each, scale, with_policy, seg), 0)
        if base:
            common[0] = base
        common = np.where(reset, np.minimum(common, cap), common)
        if p.cache == "openai":
            common = (common // 128) * 128
        ok = (common >= p.min_cacheable) & (prompt >= p.min_cacheable)
        read = np.where(ok, np.minimum(common, prompt), 0)
        uncached = prompt - read
    rate_in, rate_out, rate_w, rate_r = _rates(p, prompt)
    if uncached is None:  # nothing uncached (Anthropic's cache, every prompt long enough)
        input_dollars = (write * rate_w + read * rate_r) / 1e6  # the same figures: adding 0.0 changes none
        uncached = _zeros(f, np.int64)
    else:
        input_dollars = (uncached * rate_in + write * rate_w + read * rate_r) / 1e6
    dollars = input_dollars + _output_dollars(f, outs, rate_out)
    price = rate_w if p.cache == "anthropic" else rate_in
    break_dollars = _zeros(f, float)
    hit_idx = np.flatnonzero(broke if seg is None else broke & ~seg.new)  # a compaction resent all anyway
    if len(hit_idx):  # what a break cost: the previous prompt that was not read again
        break_dollars = np.zeros(k_n)
        lost = np.maximum(0, prompt[hit_idx - 1] - read[hit_idx])
        price_h, read_h = (v[hit_idx] if isinstance(v, np.ndarray) else v for v in (price, rate_r))
        break_dollars[hit_idx] = lost * (price_h - read_h) / 1e6
    return {
        "call_index": ends, "prompt_tokens": prompt, "uncached_tokens": uncached, "cache_write_tokens": write,
        "cache_read_tokens": read, "output_tokens": outs, "dollars": dollars, "input_dollars": input_dollars,
        "cache_break": broke, "break_dollars": break_dollars,
    }
