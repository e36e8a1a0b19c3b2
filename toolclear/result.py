"""One result type for every policy and both modes: what the policy did, call by call.

``Result`` is what ``toolclear.apply`` (one before-model step) and ``toolclear.replay``
(every model call of a run) give for any policy config: the messages as the policy
leaves them, a status per message and the call at which it changed, one ``Step`` per
model call (tokens sent with and without the policy, the messages that call changed,
whether it broke the prompt cache), and the files a backend received.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import attrgetter, eq, truth
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from .model import Message, MessageStatus

if TYPE_CHECKING:
    from .policies.offload import OffloadRecord

__all__ = ["Compaction", "LazySteps", "Result", "Step", "Trace"]


class Compaction(NamedTuple):
    """One compaction of a run: the agent (or a simulated policy) had the model summarise
    the context and sent the summary in place of what it dropped."""

    at: int
    """The model call (index of the assistant message) first sent the compacted context."""
    trigger: str
    """``"auto"`` or ``"manual"`` as the log says; ``""`` where it does not say."""
    tokens_before: int
    """The context when it compacted: the log's own figure where it records one
    (Claude Code's ``compactMetadata.preTokens``), else as sent (the replay's tokens)."""
    tokens_after: int
    """The context the call at ``at`` was sent, in the replay's tokens."""
    summary_tokens: int
    """The summary's tokens."""
    dropped: tuple[int, ...]
    """The messages it removed (indices into the run's messages)."""
    summary: int | None = None
    """The message holding the summary (None where the log holds none)."""
    source: str = ""
    """Where it comes from: the log line that records it, or the policy that simulated it."""
    read_tokens: int = 0
    """What the summarization call read when less than ``tokens_before`` (LangChain trims
    what it summarises to ``trim_tokens_to_summarize``); 0: all of it."""
    called: bool = True
    """A model wrote the summary (its call is priced); False where the policy put a fixed
    text instead (LangChain when nothing it would summarise starts on a human message)."""
    cached: bool = True
    """The summarization call reads the context from the prompt cache (False: OpenHands'
    condenser turns caching off for its calls)."""


class Step(NamedTuple):
    """One model call: what the policy did to the context sent with it."""

    call_index: int
    """Index of the assistant message this call produced; ``len(messages)`` for the
    final step over the whole conversation."""
    cleared_indices: tuple[int, ...]
    """Messages this call changed (ascending): cleared, masked, truncated, compacted away
    or put back (every policy's changes go by eino's word for them)."""
    context_tokens: int
    """Tokens sent with this call, with the policy."""
    context_tokens_unreduced: int
    """Tokens this call would have sent with no policy at all."""
    cache_break: bool
    """The call changed a message an earlier call had already sent, so a provider's
    prompt cache cannot reuse that prefix."""
    total_tool_result_tokens: int = 0
    """(eino's clear policy) the tool-result total its trigger compared."""
    triggered: bool = False
    """The policy's trigger fired at this call."""
    recent_start_index: int | None = None
    """(eino's clear policy) where its protected window started."""


class Trace(NamedTuple):
    """What a replay knew as it went, kept so a run of 50,000 calls can be priced with
    array operations instead of a pass over its Step objects: every step's call index,
    the prefix sums of the token counts (``prefix[i]``: the tokens before message i),
    and, for each step that changed something (or the tokens saved), that step, its
    lowest and highest changed message (-1: none) and the tokens saved after it. A
    replay that changes each message once may also keep every changed message, in the
    order of the steps (ascending), and the running total of the tokens saved once each
    is changed (what pricing a compacted run needs)."""

    ends: Sequence[int]
    prefix: Sequence[int]
    at: Sequence[int]
    low: Sequence[int]
    high: Sequence[int]
    saved: Sequence[int]
    changed: Sequence[int] = ()
    changed_saved: Sequence[int] = ()


class LazySteps(Sequence[Step]):
    """A replay's steps, each worked out when asked for, from what the replay kept: a
    50,000-call replay made 50,000 Step tuples (a fifth of a slider move's time, with
    the collector's pass over them) that the verdict, pricing and the losses never read
    one by one. Equal to the tuple of the same steps, hashed and pickled as that tuple."""

    __slots__ = ()

    def _step(self, k: int) -> Step:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @overload
    def __getitem__(self, k: int) -> Step: ...

    @overload
    def __getitem__(self, k: slice) -> tuple[Step, ...]: ...

    def __getitem__(self, k: int | slice) -> Step | tuple[Step, ...]:
        if isinstance(k, slice):
            start, stop, stride = k.indices(len(self))
            if stride == 1:
                return tuple(islice(self, start, stop))
            return tuple(map(self._step, range(start, stop, stride)))
        n = len(self)
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise IndexError("step index out of range")
        return self._step(i)

    def __iter__(self) -> Iterator[Step]:
        return map(self._step, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(map(eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def changes(self) -> Iterator[tuple[int, tuple[int, ...]]]:
        """(call index, messages it changed) of every step, without the Step objects."""
        return ((s.call_index, s.cleared_indices) for s in self)

    def any_triggered(self) -> bool:
        return any(s.triggered for s in self)


def _ints(values: Sequence[int]) -> Any:
    """An int64 array of ``values``: a view of a replay's array('q') columns, no copy."""
    import numpy as np

    if isinstance(values, array) and values.typecode == "q" and len(values):
        return np.frombuffer(values, dtype=np.int64)
    return np.fromiter(values, dtype=np.int64, count=len(values))


def _saved_each(tr: Trace) -> Any:
    """The tokens saved after each step of a replay, from its Trace: constant from one
    change step to the next (pricing and the totals below both read it)."""
    import numpy as np

    at = _ints(tr.at)
    return np.repeat(np.concatenate(([0], _ints(tr.saved))), np.diff(np.concatenate(([0], at, [len(tr.ends)]))))


def _breaks_at(at: Any, low: Any, ends: Any) -> Any:
    """Whether each step that changed something (``at``: its call, ``low``: its lowest
    change, -1 none) broke the prompt cache: it changed a message the call before had
    sent. Pricing and a replay's totals both ask."""
    import numpy as np

    return (low >= 0) & (at >= 1) & (low < ends[np.maximum(at - 1, 0)])


_CONTEXT, _UNREDUCED, _CACHE_BREAK = (attrgetter("context_tokens"), attrgetter("context_tokens_unreduced"),
                                      attrgetter("cache_break"))
_CHANGES = attrgetter("call_index", "cleared_indices")


@dataclass(frozen=True, eq=False)
class Result:
    """A policy over a run (``mode`` 'replay') or over one history ('single pass')."""

    messages: tuple[Message, ...]
    """The history as the policy leaves it after the last step: for policies that write
    their edits back (eino's) the state the next call would start from; for those that
    edit each request afresh (Anthropic, LangChain, masking) what the last step sent."""
    steps: Sequence[Step]
    """One per model call, then (a replay) one over the whole history: a tuple, or for
    eino's replay a ``LazySteps`` equal to it."""
    token_counts: tuple[int, ...]
    """Tokens of each message as it arrived (after offloading, if any)."""
    cleared_at: tuple[int | None, ...]
    """For each message, the call index of the step that first changed it (or None)."""
    config: Any = field(repr=False)
    offloads: tuple[OffloadRecord | None, ...] = field(default=(), repr=False)
    token_counts_original: tuple[int, ...] = field(default=(), repr=False)
    """Tokens of each input message before offloading (equals token_counts without it)."""
    files: Mapping[str, str] = field(default_factory=dict, repr=False)
    """What a backend received: path -> content, the last write of each path."""
    notes: tuple[str, ...] = ()
    """What the reference did that a user should know (e.g. eino overwriting a saved file)."""
    mode: str = "replay"
    calibration: Any = field(default=None, repr=False)
    """The ``Calibration`` the replay was given: its steps' tokens are then as sent."""
    _plain_steps: Sequence[Step] = field(default=(), repr=False)
    """With a calibration, the steps in the transcript's tokens (what ``cost`` models)."""
    _seen: tuple[Message, ...] = field(default=(), repr=False)
    _statuses: tuple[MessageStatus, ...] | Callable[[], tuple[MessageStatus, ...]] | None = field(
        default=None, repr=False)
    """The statuses, or how to work them out when first asked (a live call never asks)."""
    _counts_after: tuple[int, ...] | Callable[[], tuple[int, ...]] | None = field(default=None, repr=False)
    _trace: Trace | None = field(default=None, repr=False)
    _changed: tuple[int, ...] | None = field(default=None, repr=False)
    """The changed messages when the policy knew them (else read from ``cleared_at``)."""
    compactions: tuple[Compaction, ...] = ()
    """Every compaction of the run, in order: the log's own (``toolclear.recorded``) or a
    compaction policy's; empty for the clearing policies."""
    _traced: Sequence[Step] | None = field(default=None, repr=False)
    """The steps ``_trace`` describes (the replay's own): the totals below read the Trace
    only while ``steps`` is this very tuple (a calibration rewrites the steps, not it)."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its statuses worked out (the lazy form is a closure)."""
        state = dict(self.__dict__)
        if callable(state.get("_statuses")):
            state["_statuses"] = self.statuses
        if callable(state.get("_counts_after")):
            state["_counts_after"] = self.token_counts_after
        return state

    @cached_property
    def cleared_indices(self) -> tuple[int, ...]:
        """Messages the policy changed at some step (cleared, masked, truncated)."""
        if self._changed is not None:
            return self._changed
        return tuple(i for i, c in enumerate(self.cleared_at) if c is not None)

    @cached_property
    def statuses(self) -> tuple[MessageStatus, ...]:
        """Per message, as after the final step (changed at any call counts as cleared)."""
        if callable(self._statuses):
            return self._statuses()
        if self._statuses is not None:
            return self._statuses
        changed = set(self.cleared_indices)
        return tuple(MessageStatus.CLEARED if i in changed else MessageStatus.KEPT for i in range(len(self.messages)))

    @cached_property
    def token_counts_after(self) -> tuple[int, ...]:
        if callable(self._counts_after):
            return self._counts_after()
        if self._counts_after is not None:
            return self._counts_after
        return self.token_counts

    @cached_property
    def _columns(self) -> tuple[Any, Any, Any] | None:
        """(context with the policy, without it, whether it broke the cache) of every
        step as int64 arrays, read off the replay's Trace: a 50,000-call run's totals in
        array operations, not passes over its Step objects (about 10 ms a slider move).
        None where the steps are not the Trace's or numpy is not installed."""
        tr = self._trace
        if tr is None or self._traced is not self.steps or len(tr.ends) != len(self.steps):
            return None
        try:
            import numpy as np
        except ImportError:  # pragma: no cover - numpy comes with every extra that prices
            return None
        ends, prefix, at = _ints(tr.ends), _ints(tr.prefix), _ints(tr.at)
        unreduced = prefix[ends]
        saved = _saved_each(tr)
        lows = _ints(tr.low)
        broke = np.zeros(len(ends), dtype=bool)
        broke[at] = _breaks_at(at, lows, ends)
        return unreduced - saved, unreduced, broke

    def _calls(self, column: int) -> Any:
        """One of ``_columns`` over the model calls (all steps but a replay's final one)."""
        col = self._columns[column]  # type: ignore[index]
        return col[:-1] if self.mode == "replay" else col

    @cached_property
    def cache_breaks(self) -> int:
        if self._columns is not None:
            return int(self._columns[2].sum())
        return sum(map(truth, map(_CACHE_BREAK, self.steps)))

    def step_changes(self) -> Iterator[tuple[int, tuple[int, ...]]]:
        """(call index, messages it changed) of every step: what a pass over the run's
        calls reads (the losses), without making each step when they are lazy."""
        if isinstance(self.steps, LazySteps):
            return self.steps.changes()
        return map(_CHANGES, self.steps)

    @property
    def model_call_count(self) -> int:
        """How many model calls (``len(model_call_steps)``, without the copy)."""
        return max(0, len(self.steps) - 1) if self.mode == "replay" else len(self.steps)

    @cached_property
    def model_call_steps(self) -> Sequence[Step]:
        """The steps of real model calls: in a replay all but the final step over the
        whole conversation; a single pass is one call."""
        return self.steps[:-1] if self.mode == "replay" else self.steps

    def _over_calls(self, column: int, peak: bool) -> int:
        """The sum (or the peak) of the context with the policy (``column`` 0) or without
        it (1) over the model calls: off the Trace where it says them, else the steps."""
        if self._columns is not None:
            col = self._calls(column)
            return int(col.max() if peak else col.sum()) if len(col) else 0
        values = map((_CONTEXT, _UNREDUCED)[column], self.model_call_steps)
        return max(values, default=0) if peak else sum(values)

    @cached_property
    def tokens_sent(self) -> int:
        """Tokens sent over all model calls, with the policy. Summed once per result (a
        slider move's verdict row and headline both ask; 50,000 steps took 3 ms a sum)."""
        return self._over_calls(0, peak=False)

    @cached_property
    def tokens_sent_unreduced(self) -> int:
        return self._over_calls(1, peak=False)

    @cached_property
    def peak_context(self) -> int:
        """The most tokens one model call was sent, with the policy (0: no call)."""
        return self._over_calls(0, peak=True)

    @cached_property
    def peak_context_unreduced(self) -> int:
        """The most tokens one model call would have been sent without the policy."""
        return self._over_calls(1, peak=True)

    @property
    def tokens_before(self) -> int:
        return sum(self.token_counts_original or self.token_counts)

    @property
    def tokens_after(self) -> int:
        return sum(self.token_counts_after)

    @property
    def tokens_saved(self) -> int:
        """Tokens the policy took out of the history (of the final step, for a replay)."""
        return self.tokens_before - self.tokens_after

    @property
    def triggered(self) -> bool:
        """The policy's trigger fired (at some call of a replay)."""
        if isinstance(self.steps, LazySteps):
            return self.steps.any_triggered()
        return any(s.triggered for s in self.steps)

    @property
    def recent_start_index(self) -> int | None:
        """(eino's clear policy) where the protected window of the final step starts;
        None when the policy has no window or it did not trigger."""
        return self.steps[-1].recent_start_index if self.steps else None

    @property
    def total_tool_result_tokens(self) -> int:
        """(eino's clear policy) the tool-result total the final step's trigger compared."""
        return self.steps[-1].total_tool_result_tokens if self.steps else 0

    @property
    def tool_result_count(self) -> int:
        return sum(1 for m in self.messages if m.role == "tool")
