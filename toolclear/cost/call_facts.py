"""What pricing reads of each model call of a replay, once for the run with and without
the policy: its end, time and output, its context with and without the policy, and its
lowest and highest change. Array operations over the replay's ``Trace`` (a long run
has 50,000 calls); what no policy changes is the run's, kept per run."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from .._gc import paused_gc
from .._kept import KeptFor, Same
from ..result import Result, _ints, _saved_each
from .logfacts import _log_arrays, _log_facts, _log_of, _numpy, _thinking_facts

if TYPE_CHECKING:
    from .cache_model import ThinkingKept

__all__ = ["KEPT_CALLS"]


_arrays_kept: KeptFor[Any] = KeptFor(8)


def _int_array(values: Sequence[int]) -> Any:
    """``values`` as an int64 array: a view of an array (the prefix sums every replay of a
    run shares), else kept for the same tuple (a run's token counts)."""
    import numpy as np

    return _ints(values) if isinstance(values, array) else _arrays_kept.get(
        values, lambda: np.fromiter(values, dtype=np.int64, count=len(values)))


def _step_columns(result: Result, k_n: int) -> tuple[Any, ...]:
    """(ends, context with the policy, without it, the changes, the count of each call's
    message) of the first ``k_n`` steps: from the replay's Trace when it left one (array
    operations only), else from the Step objects. The changes are three arrays, one item
    per call that changed something: the call, its lowest and its highest change."""
    import numpy as np

    i64 = np.int64
    tr = result._trace
    if tr is not None:
        ends, ctx_u, own = _run_columns(tr, k_n)
        ctx_w, changes = _policy_columns(tr, ctx_u, k_n)
        return ends, ctx_w, ctx_u, changes, own
    steps = result.model_call_steps
    cols = list(zip(*steps))  # the steps transposed: one tuple per Step field
    ends = np.array(cols[0], dtype=i64)
    # changed indices are ascending: the lowest is the first of each, the highest the last
    sizes = np.fromiter(map(len, cols[1]), dtype=i64, count=k_n)
    flat = np.fromiter(chain.from_iterable(cols[1]), dtype=i64, count=int(sizes.sum()))
    stop = np.cumsum(sizes)
    has = sizes > 0
    changes = (np.flatnonzero(has), flat[(stop - sizes)[has]], flat[stop[has] - 1])
    counts = result.token_counts
    n = len(counts)
    counts_a = np.fromiter(counts, dtype=i64, count=n)
    own = np.where(ends < n, counts_a[np.minimum(ends, max(n - 1, 0))], 0) if n else np.zeros(k_n, dtype=i64)
    return ends, np.array(cols[2], dtype=i64), np.array(cols[3], dtype=i64), changes, own


def _call_facts(result: Result, scale: float, kept: ThinkingKept = "all") -> dict[str, Any]:
    """Per model call, once for both runs: its end, time (nan when unknown), output
    tokens, context with and without the policy, and its lowest and highest change.
    Array operations over the replay's Trace, as a long run has 50,000 calls. What does
    not depend on the policy (ends, times, outputs, the context without it) is the
    run's, kept per run: every replay of a sweep or a slider move calls where the log
    did, over the same prefix sums."""
    np = _numpy()
    msgs, counts = result.messages, result.token_counts
    k_n = result.model_call_count
    i64 = np.int64
    if not k_n:
        empty = np.zeros(0, dtype=i64)
        return {"ends": empty, "times": np.zeros(0), "outs": empty, "ctx_w": empty, "ctx_u": empty,
                "changes": (empty, empty, empty), "timed": False, "think": None, "think_limit": empty, "memo": {}}
    log = _log_of(result)
    tr = result._trace
    run = None
    if tr is not None and k_n <= KEPT_CALLS:
        # the facts follow from the prefix sums, the log and the scale (and the calls, checked
        # below): kept under the log, holding no counts a verdict's other counters let go
        run = _run_facts_kept.get(log, lambda: _run_facts(result, k_n, scale, log),
                                  extra=(Same(tr.prefix), scale, k_n))
        if not np.array_equal(run["ends"], _ints(tr.ends)[:k_n]):
            run = None
    if run is not None:
        assert tr is not None
        with paused_gc():
            ctx_w, changes = _policy_columns(tr, run["ctx_u"], k_n)
        f = {**run, "ctx_w": ctx_w, "changes": changes}
    else:
        with paused_gc():
            ends, ctx_w, ctx_u, changes, own = _step_columns(result, k_n)
        f = {**_log_columns(ends, own, scale, log), "ends": ends, "ctx_u": ctx_u, "ctx_w": ctx_w,
             "changes": changes, "memo": {}}
    thinking = _thinking_facts(msgs, counts, log) if kept != "all" else None
    f["think"] = f["think_limit"] = None
    if thinking is not None:  # earlier thinking the provider does not re-send
        ends = f["ends"]
        think = np.asarray(thinking[0], dtype=i64)
        lim = ends if kept == "none" else np.asarray(thinking[1], dtype=i64)[ends]
        strip = think[lim]
        f.update(ctx_w=f["ctx_w"] - strip, ctx_u=f["ctx_u"] - strip, think=think, think_limit=lim)
    return f


KEPT_CALLS = 65_536
"""The longest run whose facts, and whose column without the policy, pricing keeps
(about 64 bytes a call: 4 MB). A longer run's replay takes so long that pricing it
again is a few per cent more, and a one-shot ``inspect`` of a long log keeps its peak
(kept, they raised the peak of 200,000 tiny messages by a tenth)."""
_run_facts_kept: KeptFor[dict[str, Any]] = KeptFor(1)
"""The facts of the run and counter priced last (megabytes on a long run): a sweep, a
slider and the app price one at a time."""


def _run_facts(result: Result, k_n: int, scale: float, log: Sequence[Any]) -> dict[str, Any]:
    """The calls' facts that no policy changes, read-only (kept and shared); ``memo``
    holds what pricing works out from them (the compactions' and resets' columns)."""
    import numpy as np

    tr = result._trace
    assert tr is not None
    ends, ctx_u, own = _run_columns(tr, k_n)
    ends = ends.copy()  # not a view of this replay's trace: kept past it
    out = {**_log_columns(ends, own, scale, log), "ends": ends, "ctx_u": ctx_u}
    frozen(*(value for value in out.values() if isinstance(value, np.ndarray)))
    out["memo"] = {}
    return out


def _run_columns(tr: Any, k_n: int) -> tuple[Any, Any, Any]:
    """(ends, context without the policy, the count of each call's message) of the first
    ``k_n`` calls, from a replay's Trace: the same for every replay of the run."""
    import numpy as np

    prefix = _int_array(tr.prefix)
    ends = _ints(tr.ends)[:k_n]
    n = len(prefix) - 1
    own = prefix[np.minimum(ends + 1, n)] - prefix[np.minimum(ends, n)]  # 0 for a call past the last message
    return ends, prefix[ends], own


def frozen(*arrays: Any) -> tuple[Any, ...]:
    """The arrays made read-only: what is kept per run is shared by every pricing of it,
    so a write by mistake raises instead of changing another pricing's figures."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _policy_columns(tr: Any, ctx_u: Any, k_n: int) -> tuple[Any, tuple[Any, Any, Any]]:
    """(context with the policy, the changes) of each call: the replay's own, from its
    Trace. The changes as ``_step_columns`` gives them: a tenth to a third of the calls
    change something, so pricing works on those, not on a column per call."""
    at, low = _ints(tr.at), _ints(tr.low)
    keep = (low >= 0) & (at < k_n)  # a step may save tokens without a change (a placeholder's count)
    changes = (at, low, _ints(tr.high)) if keep.all() else (at[keep], low[keep], _ints(tr.high)[keep])
    return ctx_u - _saved_each(tr)[:k_n], changes


def _log_columns(ends: Any, own: Any, scale: float, log: Sequence[Any]) -> dict[str, Any]:
    """Each call's time (nan: unknown) and output tokens (as recorded, else its
    message's count at ``scale``), and whether any time is known."""
    np = _numpy()
    k_n = len(ends)
    outs = np.rint(own * scale).astype(np.int64)
    times = np.full(k_n, np.nan)
    _, recorded = _log_facts(log)
    if recorded:  # only the calls whose message recorded usage
        la = _log_arrays(log)
        inside = ends < len(log)
        at = np.minimum(ends, len(log) - 1)
        times = np.where(inside, la.time[at], np.nan)
        out = np.where(inside, la.out[at], -1)
        outs = np.where(out >= 0, out, outs)
    return {"times": times, "outs": outs, "timed": bool(recorded) and not bool(np.isnan(times).all())}
