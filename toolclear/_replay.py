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

from array import array
from collections.abc import Sequence
from itertools import accumulate

from ._gc import paused_gc
from ._offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages
from .clearing import (
    ClearToolResultConfig,
    cleared_counter,
    sequence_index,
)
from .counters import count_tokens, get_counter
from .model import Message
from .result import Replay, ReplayStep, Trace

__all__ = ["Replay", "ReplayStep", "model_calls", "replay"]


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
    calls = model_calls(msgs)
    at = array("q")  # the steps that cleared something, for the Trace
    at_low = array("q")
    at_high = array("q")
    at_saved = array("q")

    with paused_gc():  # tens of thousands of small step tuples, no cycles
        for call in calls:
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
                    at.append(len(steps))
                    at_low.append(newly[0])
                    at_high.append(newly[-1])
                    at_saved.append(saved)
                frontier = start
                steps.append(ReplayStep(call, newly, prefix[call] - saved, prefix[call],
                                        bool(newly) and prev_call >= 0 and newly[0] < prev_call, total, True, start))
            else:
                steps.append(ReplayStep(call, (), prefix[call] - saved, prefix[call], False, total, False, None))
            prev_call = call

    final = ix.output(tuple(newly_all), ph)
    trace = Trace(array("q", calls), prefix, at, at_low, at_high, at_saved)
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
        _trace=trace,
    )
