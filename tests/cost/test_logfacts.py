"""What the log recorded: the cache drops it shows (the numpy reading equal to the loop
on every real log with usage)."""

from __future__ import annotations

import pytest

import toolclear as tc
from toolclear.cost.logfacts import compactions_of

from ..conftest import corpus_id
from .test_cost import WITH_USAGE, _usage_run


def test_a_cache_the_log_saw_dropped_is_a_reset_and_nothing_else_is() -> None:
    from toolclear.cost.logfacts import cache_resets

    msgs = _usage_run([0, 19_990, 10_000, 29_990, 16_000, 10_000], [0, 10, 20, 30, 400, 10])
    # call 2 read 10,000 of the 25,000 call 1 left: a reset; call 5 read 10,000 of 40,000
    # ten seconds on: another. Call 4 read 16,000 of 35,000, but 400 s on: the 5-minute
    # cache had expired (a reset only within the hour-long one)
    assert cache_resets(tuple(msgs), 300) == {5: 10_000, 11: 10_000}
    assert cache_resets(tuple(msgs), 3_600) == {5: 10_000, 9: 16_000, 11: 10_000}
    assert cache_resets(tuple(msgs), 300, cuts=(10,)) == {5: 10_000}  # a compaction explains call 5's drop
    assert cache_resets(tuple(_usage_run([0, 19_990, 13_000], [0, 10, 10])), 300) == {}  # more than half read


@pytest.mark.parametrize("path", WITH_USAGE, ids=corpus_id)
def test_cache_resets_over_all_calls_at_once_equal_the_loop(path) -> None:
    """The resets read with numpy are the reference loop's, on every real log with usage."""
    from toolclear.cost import logfacts

    for t in tc.load_all(path):
        msgs = tuple(t.messages)
        cuts = compactions_of(msgs)
        for ttl in (300, 3_600):
            for c in (cuts, ()):
                assert logfacts._cache_resets_np(msgs, ttl, c) == logfacts._cache_resets_loop(msgs, ttl, c)


def test_the_real_logs_hold_cache_resets() -> None:
    """So the equality above is not vacuous."""
    from toolclear.cost import logfacts

    assert sum(bool(logfacts._cache_resets_loop(tuple(t.messages), 3_600, ())) for p in WITH_USAGE
               for t in tc.load_all(p)) >= 2
