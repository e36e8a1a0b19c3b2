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

from ..counters import TokenCounter, count_tokens
from ..logfacts import log_compactions
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
        self.counts = count_tokens(messages, counter)

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        while self.next < len(self.cuts) and self.cuts[self.next].position < length:
            cut = self.cuts[self.next]
            kept = set(cut.kept)
            for i in range(self.start, cut.position):
                if i not in kept and i not in self.dropped:
                    delta[i] = left_out(self.msgs[i])
                    self.dropped[i] = self.next
            self.start = cut.position
            self.next += 1
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        return MessageStatus.COMPACTED if index in self.dropped else MessageStatus.KEPT

    def finish(self, result: Result) -> Result:
        """The Result with one ``Compaction`` per compaction the log records."""
        out = []
        ends = [s.call_index for s in result.model_call_steps]
        log = result._seen or result.messages
        for k, cut in enumerate(self.cuts):
            pos = bisect_right(ends, cut.position)
            if pos >= len(ends):
                continue  # nothing was sent after it
            at = ends[pos]
            before = cut.pre_tokens or (result.steps[pos - 1].context_tokens if pos else 0)
            if not cut.pre_tokens and pos:  # as sent where the call before it recorded its prompt
                u = log[ends[pos - 1]].usage
                before = u.prompt_tokens if u is not None and u.prompt_tokens else before
            dropped = tuple(i for i, n in self.dropped.items() if n == k)
            out.append(Compaction(at, cut.trigger, before, result.steps[pos].context_tokens,
                                  self.counts[cut.position] if cut.summary else 0, tuple(sorted(dropped)),
                                  cut.position if cut.summary else None, cut.source))
        return replace(result, compactions=tuple(out))


def _engine(messages: Any, config: AsRecordedConfig, counter: TokenCounter, **_: Any) -> RecordedEngine:
    return RecordedEngine(tuple(messages), counter)


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
    changed_noun="message(s) dropped by the log's compactions",
    why_nothing=_why_nothing,
)
"""The run as recorded, as the registry lists it."""
