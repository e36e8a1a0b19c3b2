"""The run as the agent ran it: every compaction its log records, applied at the call
where the log shows it (Claude Code's ``compact_boundary`` and summary, auto and
manual; Codex's ``compacted`` items). Its ``Result`` is priced, charted and searched
for losses like any policy's, and ``compare`` puts it first: what the agent's own
compactions dropped, what they cost, beside every alternative.

What the log already shows cleared (Claude Code's microcompact placeholders) is in the
messages as recorded and stays so: it was sent that way.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Any

from ..cost.logfacts import context_before, log_compactions
from ..counters import TokenCounter, count_tokens
from ..model import Message, MessageStatus
from ..result import Compaction, Result
from ._engine import left_out
from ._spec import PolicySpec, Preset

__all__ = ["SPEC", "AsRecordedConfig"]


@dataclass(frozen=True)
class AsRecordedConfig:
    """No settings: the log decides."""


class RecordedEngine:
    """Drops, at the first call after each of the log's compactions, every message
    before it that the compacted context does not keep."""

    def __init__(self, messages: tuple[Message, ...], counter: TokenCounter) -> None:
        self.msgs = messages
        self.cuts = log_compactions(messages)
        self.next = 0
        self.start = 0
        self.dropped: dict[int, int] = {}  # message -> the compaction (its position) that dropped it
        self.by_cut: dict[int, list[int]] = {}  # the compaction (its position) -> what it dropped, in order
        self.counts = count_tokens(messages, counter)

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        msgs, dropped = self.msgs, self.dropped
        while self.next < len(self.cuts) and self.cuts[self.next].position < length:
            cut = self.cuts[self.next]
            if cut.dropped is not None:  # the log names what it dropped (OpenHands' forgotten events)
                gone = [i for i in dict.fromkeys(cut.dropped) if i < cut.position and i not in dropped]
            else:
                kept = set(cut.kept)
                gone = [i for i in range(self.start, cut.position) if i not in kept and i not in dropped]
                self.start = cut.position
            # comprehensions, not a loop of stores: a compaction drops tens of thousands at once
            delta.update({i: left_out(msgs[i]) for i in gone})
            dropped.update(dict.fromkeys(gone, self.next))
            self.by_cut[self.next] = gone
            self.next += 1
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        return MessageStatus.COMPACTED if index in self.dropped else MessageStatus.KEPT

    def finish(self, result: Result) -> Result:
        """The Result with one ``Compaction`` per compaction the log records."""
        out = []
        by_cut = self.by_cut
        ends = [s.call_index for s in result.model_call_steps]
        log = result._seen or result.messages
        for k, cut in enumerate(self.cuts):
            pos = bisect_right(ends, cut.position)
            if pos >= len(ends):
                continue  # nothing was sent after it
            at = ends[pos]
            before = context_before(log, cut.position, cut.pre_tokens) or (
                result.steps[pos - 1].context_tokens if pos else 0)
            dropped = tuple(by_cut.get(k, ()))
            u = log[at].usage
            after = u.prompt_tokens if u is not None and u.prompt_tokens else result.steps[pos].context_tokens
            out.append(Compaction(at, cut.trigger, before, after,
                                  self.counts[cut.position] if cut.summary else 0, dropped,
                                  cut.position if cut.summary else None, cut.source))
        return replace(result, compactions=tuple(out))


def _engine(messages: Any, config: AsRecordedConfig, counter: TokenCounter, **_: Any) -> RecordedEngine:
    return RecordedEngine(tuple(messages), counter)


def fast_replay(messages: Any, config: AsRecordedConfig, *, counter: Any = None, **_: Any) -> Result:
    """The engine's replay without its per-message bookkeeping: a compaction leaves out a
    whole stretch at once, so each call's tokens are prefix sums less what was dropped
    (equal to the engine's, step for step: ``tests/test_recorded.py``)."""
    from array import array
    from itertools import accumulate

    from .._gc import paused_gc
    from ..counters import get_counter, prefix_sums
    from ..result import Step, Trace
    from ._engine import model_calls

    msgs = tuple(messages)
    count = get_counter(counter)
    engine = RecordedEngine(msgs, count)
    counts = engine.counts
    prefix = prefix_sums(counts)
    calls = model_calls(msgs)
    changed_at: list[int | None] = [None] * len(msgs)
    steps: list[Step] = []
    at, low, high, saved_at = array("q"), array("q"), array("q"), array("q")
    each, each_saved = array("q"), array("q")  # every change, ascending, and the running total saved
    saved, prev, ascending = 0, -1, True
    final = list(msgs)
    cuts, next_cut = engine.cuts, engine.cuts[0].position if engine.cuts else len(msgs)
    with paused_gc():
        for call in calls:
            # only a call past the next compaction can change anything
            delta = engine.advance(call) if call > next_cut else None
            if delta is not None:
                next_cut = cuts[engine.next].position if engine.next < len(cuts) else len(msgs)
                for i, m in delta.items():
                    final[i] = m
            if not delta:
                steps.append(Step(call, (), prefix[call] - saved, prefix[call], False, triggered=saved > 0))
                prev = call
                continue
            changed = tuple(sorted(delta))
            if each and changed[0] < each[-1]:
                ascending = False  # OpenHands names what it forgot, which may lie before an earlier drop
            running = list(accumulate([counts[i] for i in changed], initial=saved))
            saved = running[-1]
            each.extend(changed)
            each_saved.extend(running[1:])
            for i in changed:
                changed_at[i] = call
            at.append(len(steps))
            low.append(changed[0])
            high.append(changed[-1])
            saved_at.append(saved)
            steps.append(Step(call, changed, prefix[call] - saved, prefix[call], prev >= 0 and changed[0] < prev,
                              triggered=True))
            prev = call
        gone = engine.dropped
        after_ = list(counts)
        for i in gone:
            after_[i] = 0
        after = tuple(after_)
    all_steps = tuple(steps)
    result = Result(messages=tuple(final), steps=all_steps, token_counts=counts, cleared_at=tuple(changed_at),
                    config=config, token_counts_original=counts, mode="replay", _seen=msgs,
                    _statuses=lambda: tuple(engine.status(i, i in gone) for i in range(len(msgs))),
                    _counts_after=after, _trace=Trace(array("q", calls), prefix, at, low, high, saved_at,
                                 *((each, each_saved) if ascending else ())), _traced=all_steps,
                    _changed=tuple(each) if ascending else tuple(sorted(each)))
    return engine.finish(result)


def _why_nothing(config: Any, sizes: Any) -> str:
    return "the log records no compaction: the run as recorded sent every message it holds."


SPEC = PolicySpec(
    name="as-recorded",
    config=AsRecordedConfig,
    engine=_engine,
    presets=(Preset("as-recorded", "As recorded (the agent's own compactions)",
                    "The run as the agent ran it: each compaction its log records (Claude Code's auto and manual "
                    "compactions, Codex's) applied at the call where the log shows it.", AsRecordedConfig),),
    describe=lambda c: "as recorded",
    fast_replay=fast_replay,
    changed_noun="message(s) dropped by the log's compactions",
    why_nothing=_why_nothing,
)
"""The run as recorded, as the registry lists it."""
