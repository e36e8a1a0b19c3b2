"""What every policy's replay shares: engines that say, call by call, which messages
look different from the raw history, and one assembler that turns that into a Result.

An engine is advanced over the prefix length of each model call (ascending, the last
one the whole conversation) and answers with a delta: message index -> the message as
the policy now shows it, or None to show the original again. Only what changed since
the previous call is in a delta, so a whole run costs O(n + changes) after counting,
whatever the policy; the assembler keeps the tokens sent and the cache breaks.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .._gc import paused_gc
from .._kept import KeptFor
from ..counters import TokenCounter, count_tokens, prefix_sums
from ..model import OMITTED, Message, MessageStatus, Slot, ToolCall, memo_put
from ..result import Result, Step, Trace

__all__ = ["Engine", "Pairing", "assemble", "left_out", "model_calls", "with_inputs_cleared"]


class Engine(Protocol):
    def advance(self, length: int) -> Mapping[int, Message | None]:
        """The changes for the call whose context is ``messages[:length]``."""
        ...

    def status(self, index: int, changed: bool) -> MessageStatus:
        """The status of a message after the final step."""
        ...


class Pairing:
    """For each tool result, the assistant message and the call it answers (the latest
    earlier call with its id; None for other messages and orphans), worked out only as
    far as asked, so a policy that needs the call of few results pays for few. It reads
    ``messages`` as it is when asked (a live agent's list grows)."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self.seen: dict[str, tuple[int, ToolCall]] = {}
        self.pairs: list[tuple[int, ToolCall] | None] = []

    def __getitem__(self, i: int) -> tuple[int, ToolCall] | None:
        pairs = self.pairs
        if i >= len(pairs):
            seen, messages = self.seen, self.messages
            for j in range(len(pairs), i + 1):
                m = messages[j]
                if m.role == "assistant":
                    for c in m.tool_calls:
                        seen[c.id] = (j, c)
                pairs.append(seen.get(m.tool_call_id) if m.role == "tool" else None)
        return pairs[i]


_LEFT_OUT = Message(role=OMITTED, content="")
"""What a request leaves out, for every message with no meta: one object (a compaction
leaves out tens of thousands at once)."""


def left_out(m: Message) -> Message:
    """``m`` as a request leaves it out (it stays in the log): the same object at every
    call and for every policy that leaves it out (one per message that carries meta, so
    its positions stay with it; one for all the others)."""
    if m.meta is None:
        return _LEFT_OUT
    hit = m._memo.get(Slot.OMITTED)
    if hit is None:
        hit = memo_put(m, Slot.OMITTED, Message(role=OMITTED, content="", meta=m.meta))
    return hit


def model_calls(messages: Sequence[Message]) -> Sequence[int]:
    """The call index of every model call: each assistant message, then the end. Kept per
    transcript (every replay asks: 9 ms at 100,000 messages, on every slider move), as an
    int64 array (a tuple of Python ints held 3.5 MB of a 200,000-message run)."""
    return _calls_kept.get(messages, lambda: array("q", (*(i for i, m in enumerate(messages)
                                                          if m.role == "assistant"), len(messages))))


_calls_kept: KeptFor[Sequence[int]] = KeptFor(8)


def with_inputs_cleared(message: Message, call_ids: frozenset[str], empty: str = "{}") -> Message:
    """The assistant message with the arguments of these calls emptied."""
    from dataclasses import replace

    calls = tuple(replace(c, arguments=empty) if c.id in call_ids else c for c in message.tool_calls)
    new = replace(message, tool_calls=calls)
    return new


def _visible(a: Message, b: Message) -> bool:
    """Whether the model would see a difference (extra flags are not sent)."""
    if a is b:
        return False
    if a == b:
        return _parts(a) != _parts(b)
    return True


def _parts(m: Message) -> Any:
    """The multimodal parts eino sends besides the content (none without a raw dict,
    the same as a raw dict without them: a flag eino adds is not a visible change)."""
    raw = m._raw
    if not raw:
        return (None, None)
    return (raw.get("user_input_multi_content"), raw.get("assistant_output_multi_content"))


def _overlay(values: tuple[Any, ...], changes: Mapping[int, Any]) -> tuple[Any, ...]:
    """``values`` with the changed positions replaced (O(changes) beyond the copy)."""
    if not changes:
        return values
    out = list(values)
    for i, v in changes.items():
        out[i] = v
    return tuple(out)


def _leave_out(i: int, old: Message, new: Message, count: int, call: int, view: dict[int, Message],
               view_count: dict[int, int], changed_at: list[int | None], original_count: int) -> int:
    """Message ``i`` left out of the request from ``call`` on (a compaction): the tokens
    it saves now (0 when it was left out already)."""
    if old.role == OMITTED and i in view:
        return 0
    saved = view_count.get(i, original_count) - count
    view[i], view_count[i] = new, count
    if changed_at[i] is None:
        changed_at[i] = call
    return saved


@paused_gc()  # tens of thousands of small step tuples, no cycles
def assemble(
    original: tuple[Message, ...],
    engine: Engine,
    config: Any,
    counter: TokenCounter,
    calls: Sequence[int],
    *,
    mode: str,
    final: tuple[Message, ...] | None = None,
    files: Mapping[str, str] | None = None,
    notes: tuple[str, ...] = (),
) -> Result:
    """Run ``engine`` over ``calls`` and keep what each call sent."""
    n = len(original)
    counts = count_tokens(original, counter)
    prefix = prefix_sums(counts)
    view: dict[int, Message] = {}
    view_count: dict[int, int] = {}
    saved = 0
    changed_at: list[int | None] = [None] * n
    steps: list[Step] = []
    prev = -1
    at = array("q")  # steps that changed something or the tokens saved, for the Trace
    at_low = array("q")
    at_high = array("q")
    at_saved = array("q")
    for call in calls:
        delta = engine.advance(call)
        changed: list[int] = []
        if not delta:  # most calls change nothing: no counting, no comparing
            steps.append(Step(call, (), prefix[call] - saved, prefix[call], False, triggered=bool(view)))
            prev = call
            continue
        order = sorted(delta)
        news = [delta[i] or original[i] for i in order]
        new_counts = count_tokens(news, counter)  # one batch: the copies are memoised, so mostly known
        for i, new, c in zip(order, news, new_counts):
            old = view.get(i, original[i])
            if new.role == OMITTED and original[i].role != OMITTED:  # left out: visible unless it already was
                saved += _leave_out(i, old, new, c, call, view, view_count, changed_at, counts[i])
                if old.role != OMITTED:
                    changed.append(i)
                continue
            visible = _visible(old, new)
            if new is original[i] or not _visible(original[i], new):
                if i in view:
                    saved -= counts[i] - view_count.pop(i)
                    del view[i]
            else:
                saved += (view_count.get(i, counts[i])) - c
                view[i], view_count[i] = new, c
                if changed_at[i] is None:
                    changed_at[i] = call
            if visible:
                changed.append(i)
        if changed or (at_saved[-1] if at_saved else 0) != saved:
            at.append(len(steps))
            at_low.append(changed[0] if changed else -1)
            at_high.append(changed[-1] if changed else -1)
            at_saved.append(saved)
        steps.append(Step(call, tuple(changed), prefix[call] - saved, prefix[call],
                          bool(changed) and prev >= 0 and changed[0] < prev, triggered=bool(view)))
        prev = call
    messages = final if final is not None else _overlay(original, view)
    after = _overlay(counts, view_count)
    kept = frozenset(view)

    def statuses() -> tuple[MessageStatus, ...]:
        return tuple(engine.status(i, i in kept) for i in range(n))
    all_steps = tuple(steps)
    return Result(
        messages=messages, steps=all_steps, token_counts=counts, cleared_at=tuple(changed_at), config=config,
        token_counts_original=counts, files=dict(files or {}), notes=notes, mode=mode, _seen=original,
        _statuses=statuses, _counts_after=after, _trace=Trace(array("q", calls), prefix, at, at_low, at_high, at_saved),
        _traced=all_steps,
    )
