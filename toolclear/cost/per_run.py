"""What pricing keeps per run: the facts of the log every replay of it shares, and the
column of the run without the policy. A sweep, a slider move and the app price many
replays of one run; each asked for these again (half of a calibrated cost's time)."""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from .._kept import KeptFor, Same
from ..model import Message
from ..result import Result
from .call_facts import KEPT_CALLS, frozen
from .logfacts import SYNTHETIC_MODEL, _log_facts, _numpy

__all__ = ["after_cuts", "with_after_cuts", "without_policy"]


def without_policy(result: Result, facts: Any, key: Hashable,
                   fresh: Callable[[], Mapping[str, Any]]) -> Mapping[str, Any]:
    """The column of the run without the policy (``fresh()``): the same for every replay
    of a run that calls the model at the same messages with the same unreduced context
    (the replay's prefix sums, one array per run and counter) at the same pricing
    (``key``: the log's resets as the same object, kept per log). From the run's second
    pricing it is kept, read-only (a one-off pricing keeps nothing), for runs of up to
    ``KEPT_CALLS`` calls. Kept only where nothing of the policy's output enters it: the
    fast path over a Trace, with every earlier thinking re-sent."""
    tr = result._trace
    if facts is None or tr is None or facts.get("think") is not None or len(facts["ends"]) > KEPT_CALLS:
        return fresh()
    try:
        hash(key)
    except TypeError:
        return fresh()
    ends = facts["ends"]
    slot = _without_kept.get(result.token_counts, _Kept, extra=key)
    with slot.lock:
        hit = slot.columns
        if hit is not None and hit[0] is tr.prefix and _numpy().array_equal(hit[1], ends):
            return hit[2]
        slot.asked += 1
        columns = fresh()
        if slot.asked >= 2:
            frozen(*(value for value in columns.values() if hasattr(value, "flags")))
            slot.columns = (tr.prefix, ends, columns)
        return columns


class _Kept:
    """A value kept from the second time it is asked for."""

    __slots__ = ("asked", "columns", "lock")

    def __init__(self) -> None:
        self.asked = 0
        self.columns: tuple[Any, Any, Mapping[str, Any]] | None = None
        self.lock = threading.Lock()


_without_kept: KeptFor[_Kept] = KeptFor(1)
"""One run's column: a sweep, a slider and the app price one run and counter at a time,
and a long run's column is megabytes (a verdict that alternates counters keeps none)."""


def after_cuts(messages: Sequence[Message], cuts: Sequence[int]) -> Mapping[int, int]:
    """The first recorded call after each of the log's compactions -> what it read from
    the cache: the prefix that outlived the compaction (system prompt and tools), a fact
    of the run like ``cache_resets`` (kept per log: every replay of it asks)."""
    return _after_cuts_kept.get(messages, lambda: _after_cuts_of(messages, cuts), extra=tuple(cuts))


_after_cuts_kept: KeptFor[Mapping[int, int]] = KeptFor(8)


def with_after_cuts(messages: Sequence[Message], cuts: Sequence[int], resets: Mapping[int, int]) -> Mapping[int, int]:
    """The log's cache resets and what the first call after each compaction read: one
    mapping per log (kept: the run without the policy is kept under it)."""
    return _merged_kept.get(messages, lambda: {**after_cuts(messages, cuts), **resets},
                            extra=(tuple(cuts), Same(resets)))


_merged_kept: KeptFor[Mapping[int, int]] = KeptFor(8)


def _after_cuts_of(messages: Sequence[Message], cuts: Sequence[int]) -> Mapping[int, int]:
    out: dict[int, int] = {}
    recorded = _log_facts(messages)[1]
    for cut in cuts:
        k = bisect_left(recorded, cut)
        while k < len(recorded):
            m = messages[recorded[k]]
            u = m.usage
            if m.role == "assistant" and u is not None and u.prompt_tokens > 0 and u.model != SYNTHETIC_MODEL:
                out[recorded[k]] = u.cache_read_tokens
                break
            k += 1
    return out
