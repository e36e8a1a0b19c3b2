"""eino's replay steps, each worked out when asked for from what the replay kept.

The replay keeps, per call, only whether its trigger fired (one byte), and, per call
that cleared something, the Trace's entry (the stretch it cleared and the tokens saved
after it). Everything else a ``Step`` holds follows from the reference's two facts the
replay rests on (see ``fast_replay``): what a call clears is the next stretch of the
clearable results, and the protected window's start never moves left, so a fired
call's start is where the walk back from it stops, whatever came before.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import repeat

from ..result import LazySteps, Step, Trace

__all__ = ["EinoSteps", "window_start"]


def window_start(prefix: Sequence[int], end: int, keep: int, lo: int = 0) -> int:
    """The reference's walk back from ``end`` over the prefix sums of the counts: the
    first message (from the end) that overflows ``keep`` starts the window; 0 when
    everything fits. Searched in [lo, end), which is exact whenever the answer is known
    to be >= lo."""
    start = bisect_left(prefix, prefix[end] - keep, lo, end) - 1
    return start if start >= lo else lo


class EinoSteps(LazySteps):
    """The steps of one replay of eino's clear policy (``fast_replay``)."""

    __slots__ = ("_trace", "_fired", "_tool_prefix", "_keep", "_cleared_tokens")

    def __init__(self, trace: Trace, fired: bytearray, tool_prefix: Sequence[int], keep: int,
                 cleared_tokens: Sequence[int]) -> None:
        """``cleared_tokens[j]``: the tool-result tokens cleared up to the Trace's j-th
        change (what the trigger no longer counts from the next call on)."""
        self._trace, self._fired, self._tool_prefix, self._keep = trace, fired, tool_prefix, keep
        self._cleared_tokens = cleared_tokens

    def __len__(self) -> int:
        return len(self._trace.ends)

    def _start(self, call: int) -> int:
        """Where the window of a fired call starts: where the reference's walk back from
        it stops (the start never moves left, so no earlier call's start bounds it)."""
        return window_start(self._trace.prefix, call, self._keep)

    def _step(self, k: int) -> Step:
        tr = self._trace
        ends, prefix, at, changed = tr.ends, tr.prefix, tr.at, tr.changed
        call = ends[k]
        j = bisect_right(at, k) - 1  # the last call up to this one that cleared something
        saved = tr.saved[j] if j >= 0 else 0
        if j >= 0 and at[j] == k:
            lo, hi = bisect_left(changed, tr.low[j]), bisect_right(changed, tr.high[j])
            newly, broke, before = tuple(changed[lo:hi]), k > 0 and tr.low[j] < ends[k - 1], j - 1
        else:
            newly, broke, before = (), False, j
        fired = bool(self._fired[k])
        cleared = self._cleared_tokens[before] if before >= 0 else 0
        return Step(call, newly, prefix[call] - saved, prefix[call], broke, self._tool_prefix[call] - cleared, fired,
                    self._start(call) if fired else None)

    def __iter__(self) -> Iterator[Step]:
        """Every step in one pass (no search per step)."""
        tr = self._trace
        prefix, at, low, high, saved_at, changed = tr.prefix, tr.at, tr.low, tr.high, tr.saved, tr.changed
        tool_prefix, fired, cleared_tokens = self._tool_prefix, self._fired, self._cleared_tokens
        j, pos, saved, cleared, prev = 0, 0, 0, 0, -1
        nxt = at[0] if len(at) else -1
        for k, call in enumerate(tr.ends):
            total = tool_prefix[call] - cleared
            if k == nxt:
                hi = bisect_right(changed, high[j], pos)
                newly, broke = tuple(changed[pos:hi]), prev >= 0 and low[j] < prev
                saved, cleared, pos, j = saved_at[j], cleared_tokens[j], hi, j + 1
                nxt = at[j] if j < len(at) else -1
            else:
                newly, broke = (), False
            f = bool(fired[k])
            yield Step(call, newly, prefix[call] - saved, prefix[call], broke, total, f,
                       self._start(call) if f else None)
            prev = call

    def changes(self) -> Iterator[tuple[int, tuple[int, ...]]]:
        tr = self._trace
        ends, at, high, changed = tr.ends, tr.at, tr.high, tr.changed
        done, pos = 0, 0
        for j, k in enumerate(at):
            yield from zip(ends[done:k], repeat(()))
            hi = bisect_right(changed, high[j], pos)
            yield ends[k], tuple(changed[pos:hi])
            done, pos = k + 1, hi
        yield from zip(ends[done:], repeat(()))

    def any_triggered(self) -> bool:
        return any(self._fired)
