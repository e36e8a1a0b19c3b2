"""The policy as an agent runs it: before every model call, on the history so far.

What one call clears stays cleared for every later call. ``replay`` gives exactly the
result of calling ``reduce_by_tokens`` step by step (the tests prove it), in O(n) after
counting instead of O(n^2), because of two facts of the reference:

* the window start never moves left from one call to the next (the messages between
  the last start and the last call are untouched and new ones only add tokens), so
  every message is cleared at most once and only the ones in [last start, new start)
  need looking at;
* inside the window nothing has changed, so the walk back is a pointer moving forward
  over prefix sums of the original counts: O(n) for the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import NamedTuple

from ._gc import paused_gc
from ._offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages
from .clearing import (
    ClearToolResultConfig,
    SequenceIndex,
    cleared_counter,
    counts_after,
    sequence_index,
    statuses_of,
)
from .counters import count_tokens, get_counter
from .model import Message, MessageStatus

__all__ = ["Replay", "ReplayStep", "model_calls", "replay"]


class ReplayStep(NamedTuple):
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


@dataclass(frozen=True, eq=False)
class Replay:
    """A whole run replayed: the final history and one step per model call."""

    messages: tuple[Message, ...]
    steps: tuple[ReplayStep, ...]
    token_counts: tuple[int, ...]
    """Tokens of each message as it arrived (after offloading, if any)."""
    cleared_at: tuple[int | None, ...]
    """For each message, the call index of the step that cleared it (or None)."""
    config: ClearToolResultConfig = field(repr=False)
    offloads: tuple[OffloadRecord | None, ...] = field(default=(), repr=False)
    token_counts_original: tuple[int, ...] = field(default=(), repr=False)
    """Tokens of each input message before offloading (equals token_counts without it)."""
    _seen: tuple[Message, ...] = field(default=(), repr=False)
    _index: SequenceIndex | None = field(default=None, repr=False)

    @cached_property
    def cleared_indices(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.cleared_at) if c is not None)

    @cached_property
    def statuses(self) -> tuple[MessageStatus, ...]:
        """Per message, as after the final step (cleared at any call counts as cleared)."""
        final = self.steps[-1] if self.steps else None
        return statuses_of(self._seen, self.config, bool(final and final.triggered),
                           (final.recent_start_index or 0) if final else 0,
                           self.cleared_indices, self.offloads,
                           self._index.tool_positions if self._index is not None else None)

    @cached_property
    def token_counts_after(self) -> tuple[int, ...]:
        return counts_after(self.token_counts, self._seen, self.cleared_indices, self.config)

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
    ix = sequence_index(msgs, counter)
    counts, prefix = ix.counts, ix.prefix
    n = len(msgs)
    ph = config.placeholder
    keep = config.keep_recent_tokens
    threshold = config.tool_result_token_threshold
    excluded = frozenset(config.exclude_tools)
    tool_idx, _ = ix.tools(ph)
    clearable = [i for i in tool_idx if msgs[i].tool_name not in excluded] if excluded else tool_idx
    weights = [0] * n
    for i in tool_idx:
        weights[i] = counts[i]
    tool_prefix = [0, *accumulate(weights)]  # countable tool-result tokens before each index

    n_clearable = len(clearable)
    cleared_at: list[int | None] = [None] * n
    newly_all: list[int] = []
    steps: list[ReplayStep] = []
    frontier = 0  # every clearable message below this is cleared already
    pos = 0  # clearable[:pos] are cleared
    cleared_tool_tokens = 0
    saved = 0
    prev_call = -1
    after_count = cleared_counter(counter, ph)

    with paused_gc():  # tens of thousands of small step tuples, no cycles
        for call in model_calls(msgs):
            total = tool_prefix[call] - cleared_tool_tokens
            if call > 0 and total > threshold:
                # the start is the last i in [frontier, call) whose suffix overflows keep;
                # it never moves left, so walking a pointer forward is O(n) over the run
                start = frontier
                limit = prefix[call] - keep
                while start + 1 < call and prefix[start + 1] < limit:
                    start += 1
                end = pos
                while end < n_clearable and clearable[end] < start:
                    end += 1
                newly = tuple(clearable[pos:end])
                if newly:
                    pos = end
                    for i in newly:
                        cleared_at[i] = call
                        cleared_tool_tokens += counts[i]
                    newly_all.extend(newly)
                    for i, c in zip(newly, after_count(msgs, newly)):
                        saved += counts[i] - c
                frontier = start
                steps.append(ReplayStep(call, newly, prefix[call] - saved, prefix[call], total, True, start,
                                        bool(newly) and prev_call >= 0 and newly[0] < prev_call))
            else:
                steps.append(ReplayStep(call, (), prefix[call] - saved, prefix[call], total, False, None, False))
            prev_call = call

    final = ix.output(tuple(newly_all), ph)
    return Replay(
        messages=final,
        steps=tuple(steps),
        token_counts=counts,
        cleared_at=tuple(cleared_at),
        config=config,
        offloads=records,
        token_counts_original=count_tokens(original, counter) if records else counts,
        _seen=msgs,
        _index=ix,
    )
