"""The policy as an agent runs it: before every model call, on the history so far.

What one call clears stays cleared for every later call. ``replay`` gives exactly the
result of calling ``reduce_by_tokens`` step by step (the tests prove it), in O(n log n)
after counting instead of O(n^2), because of two facts of the reference:

* the window start never moves left from one call to the next (the messages between
  the last start and the last call are untouched and new ones only add tokens), so
  every message is cleared at most once and only the ones in [last start, new start)
  need looking at;
* inside the window nothing has changed, so the walk-back is a binary search over
  prefix sums of the original counts.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from .clearing import ClearToolResultConfig, _statuses
from .counters import count_tokens, get_counter
from .model import Message, MessageStatus
from .offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages

__all__ = ["Replay", "ReplayStep", "model_calls", "replay"]


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One model call: what the policy did to the context sent with it."""

    call_index: int
    """Index of the assistant message this call produced; ``len(messages)`` for the
    final step over the whole conversation."""
    cleared_indices: tuple[int, ...]
    """Messages cleared at this call (ascending)."""
    context_tokens: int
    """Tokens sent with this call, after clearing."""
    context_tokens_unreduced: int
    """Tokens this call would have sent with no clearing at all."""
    total_tool_result_tokens: int
    triggered: bool
    recent_start_index: int | None
    cache_break: bool
    """Clearing changed a message that an earlier call had already sent, so a
    provider's prompt cache cannot reuse that prefix."""


@dataclass(frozen=True, slots=True)
class Replay:
    """A whole run replayed: the final history and one step per model call."""

    messages: tuple[Message, ...]
    steps: tuple[ReplayStep, ...]
    token_counts: tuple[int, ...]
    """Tokens of each message as it arrived (after offloading, if any)."""
    token_counts_after: tuple[int, ...]
    statuses: tuple[MessageStatus, ...]
    cleared_at: tuple[int | None, ...]
    """For each message, the call index of the step that cleared it (or None)."""
    config: ClearToolResultConfig = field(repr=False)
    offloads: tuple[OffloadRecord | None, ...] = field(default=(), repr=False)
    token_counts_original: tuple[int, ...] = field(default=(), repr=False)
    """Tokens of each input message before offloading (equals token_counts without it)."""

    @property
    def cleared_indices(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.cleared_at) if c is not None)

    @property
    def cache_breaks(self) -> int:
        return sum(1 for s in self.steps if s.cache_break)

    @property
    def model_call_steps(self) -> tuple[ReplayStep, ...]:
        """The steps of real model calls (without the final step)."""
        return self.steps[:-1]

    @property
    def tokens_sent(self) -> int:
        """Tokens sent over all model calls, with clearing."""
        return sum(s.context_tokens for s in self.model_call_steps)

    @property
    def tokens_sent_unreduced(self) -> int:
        return sum(s.context_tokens_unreduced for s in self.model_call_steps)

    @property
    def tokens_before(self) -> int:
        return sum(self.token_counts_original or self.token_counts)

    @property
    def tokens_after(self) -> int:
        return sum(self.token_counts_after)


def model_calls(messages: Sequence[Message]) -> list[int]:
    """The call index of every model call: each assistant message, then the end."""
    calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
    calls.append(len(messages))
    return calls


def replay(
    messages: Sequence[Message],
    config: ClearToolResultConfig | None = None,
    *,
    offloading: ToolResultOffloadingConfig | None = None,
    backend: StorageBackend | None = None,
) -> Replay:
    """Simulate the policy before every model call of a whole run.

    With ``offloading``, each tool result is first offloaded as it arrives (written to
    ``backend``, a ``MemoryBackend`` if none is given) and clearing then runs on what the
    model would have seen, as eino's combined middleware does.
    """
    config = config or ClearToolResultConfig()
    original = tuple(messages)
    records: tuple[OffloadRecord | None, ...] = ()
    msgs = original
    if offloading is not None:
        msgs, records = offload_messages(original, offloading, backend)
    counter = get_counter(config.token_counter)
    counts = count_tokens(msgs, counter)
    n = len(msgs)
    ph = config.placeholder
    keep = config.keep_recent_tokens
    threshold = config.tool_result_token_threshold
    excluded = frozenset(config.exclude_tools)

    prefix = [0] * (n + 1)
    acc = 0
    for i, c in enumerate(counts):
        acc += c
        prefix[i + 1] = acc
    counted = [m.role == "tool" and m.content != ph for m in msgs]

    current = list(msgs)
    after = list(counts)
    cleared_at: list[int | None] = [None] * n
    steps: list[ReplayStep] = []
    frontier = 0  # every clearable message below this is cleared already
    tool_total = 0  # tool-result tokens of the original messages seen so far
    cleared_tool_tokens = 0
    saved = 0
    seen = 0
    prev_call: int | None = None
    last_start: int | None = None
    last_triggered = False

    for call in model_calls(msgs):
        while seen < call:
            if counted[seen]:
                tool_total += counts[seen]
            seen += 1
        total = tool_total - cleared_tool_tokens
        triggered = call > 0 and total > threshold
        newly: list[int] = []
        start: int | None = None
        if triggered:
            target = prefix[call] - keep
            start = bisect_left(prefix, target, frontier, call) - 1
            if start < frontier:
                start = frontier if frontier > 0 else 0
            for i in range(frontier, start):
                if counted[i] and msgs[i].tool_name not in excluded:
                    new = msgs[i].with_content(ph)
                    current[i] = new
                    after[i] = count_tokens((new,), counter)[0]
                    cleared_at[i] = call
                    cleared_tool_tokens += counts[i]
                    saved += counts[i] - after[i]
                    newly.append(i)
            frontier = max(frontier, start)
        steps.append(
            ReplayStep(
                call_index=call,
                cleared_indices=tuple(newly),
                context_tokens=prefix[call] - saved,
                context_tokens_unreduced=prefix[call],
                total_tool_result_tokens=total,
                triggered=triggered,
                recent_start_index=start,
                cache_break=bool(newly) and prev_call is not None and newly[0] < prev_call,
            )
        )
        prev_call = call
        last_start, last_triggered = start, triggered

    cleared = frozenset(i for i, c in enumerate(cleared_at) if c is not None)
    statuses = _statuses(msgs, config, last_triggered, last_start or 0, cleared, records)

    return Replay(
        messages=tuple(current),
        steps=tuple(steps),
        token_counts=counts,
        token_counts_after=tuple(after),
        statuses=statuses,
        cleared_at=tuple(cleared_at),
        config=config,
        offloads=records,
        token_counts_original=count_tokens(original, counter) if records else counts,
    )
