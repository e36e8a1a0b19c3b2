"""What every compaction shares, recorded or simulated: the context it leaves (the
messages it keeps, a summary in place of the rest), the engine that keeps that call by
call, and the summary's size where no model writes it.

A compaction is an edit like any other here: the messages it drops are left out of the
request (``_engine.left_out``) and the last of them holds the summary, so indices still
line up with the run's history and the assembler, pricing and losses need nothing new.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ..cost.logfacts import compactions_of, log_compactions
from ..counters import TokenCounter, count_tokens
from ..model import Message, MessageStatus
from ..result import Compaction, Result
from ._engine import left_out

__all__ = ["DEFAULT_SUMMARY_RATIO", "CompactingEngine", "Rule", "summary_message", "summary_ratio"]

DEFAULT_SUMMARY_RATIO = 0.02
"""The summary's tokens per token it replaces when the run records no compaction of its
own to read the ratio from: about what Claude Code's summaries come to (3,000 of
~170,000 on the project's sessions, 0.018)."""
MIN_SUMMARY, MAX_SUMMARY = 500, 20_000
"""The bounds put on a modelled summary: a summary model writes at least a few
paragraphs and at most what its instructions allow."""

STAND_IN = ("[toolclear: this message stands for the summary the model would have written of {n:,} earlier "
            "message(s); its size, {tokens:,} tokens, is modelled, not written]")


def summary_ratio(messages: Sequence[Message], counts: Sequence[int]) -> float:
    """The run's own summary size per token summarised, read from the compactions its
    log records (the summary's tokens over the log's pre-compaction figure), else
    ``DEFAULT_SUMMARY_RATIO``."""
    ratios = [counts[c.position] / c.pre_tokens for c in log_compactions(messages) if c.summary and c.pre_tokens > 0]
    return sum(ratios) / len(ratios) if ratios else DEFAULT_SUMMARY_RATIO


def summary_message(dropped: int, tokens: int, source: str) -> Message:
    """The stand-in for a simulated summary: its text says what it is, every counter
    counts it as ``tokens``."""
    return Message(role="user", content=STAND_IN.format(n=dropped, tokens=tokens),
                   meta={"stands_for_tokens": tokens, "summary_of": dropped, "simulated_by": source})


class Rule(Protocol):
    """A compaction policy's own decisions; the engine does the rest."""

    def fires(self, engine: CompactingEngine, length: int, sent: int) -> bool:
        """Whether the call whose context is ``messages[:length]`` (``sent`` tokens as
        sent) is preceded by a compaction."""
        ...

    def keep(self, engine: CompactingEngine, length: int) -> set[int]:
        """Of ``engine.visible``, the messages the compacted context keeps."""
        ...


class CompactingEngine:
    """A compaction policy over a run, call by call. Before each call the rule is asked
    whether to compact; if so every visible message it does not keep is dropped, the
    last of them holding the summary. The log's own compactions are left out (they are
    what this policy replaces): their summaries are not sent.

    ``affine`` (overhead, scale; set by a calibrated replay) turns the context's tokens
    into tokens as sent: what a trigger on the provider's count compares; ``anchor``
    (length -> overhead) holds it to each call's recorded prompt where there is one."""

    def __init__(self, messages: tuple[Message, ...], counter: TokenCounter, rule: Rule, name: str,
                 summary_tokens: int = 0, trigger: str = "auto", cached: bool = True) -> None:
        self.msgs, self.rule, self.name, self.trigger, self.cached = messages, rule, name, trigger, cached
        self.trigger_now = trigger
        self.counts = list(count_tokens(messages, counter))
        self.logged = frozenset(compactions_of(messages))
        self.ratio = summary_ratio(messages, self.counts) if not summary_tokens else 0.0
        self.fixed_summary = summary_tokens
        self.visible: list[int] = []
        self.count: dict[int, int] = {}  # the visible messages' tokens (a summary's is its own)
        self.tokens = 0
        self.scan = 0
        self.dropped: set[int] = set()
        self.summaries: set[int] = set()
        self.compactions: list[Compaction] = []
        self.current: dict[int, Message] = {}  # the summaries, where they stand
        self.read_tokens = 0  # what the summarisation call reads, when the rule says less than all
        self.fixed_text: int | None = None  # a summary the rule writes itself (no call), by its tokens
        self.affine: tuple[int, float] = (0, 1.0)
        self.anchor: Callable[[int, bool], int] | None = None
        self.count_of: Callable[[int], int] | None = None
        """A message's tokens as another policy shows it (a hybrid's clearing), else its own."""

    def sent(self, tokens: int, length: int | None = None) -> int:
        """``tokens`` of the context as sent: at the call whose context is
        ``messages[:length]`` what the log says the run sent beyond its transcript there
        (``anchor``), else the fitted overhead; the counter's tokens at the fitted scale."""
        overhead, scale = self.affine
        if self.anchor is not None and length is not None:
            overhead = self.anchor(length, bool(self.compactions))
        return overhead + round(scale * tokens)

    def summary_size(self, before: int) -> int:
        if self.fixed_summary:
            return self.fixed_summary
        return max(MIN_SUMMARY, min(MAX_SUMMARY, round(self.ratio * before)))

    def summary_of(self, i: int) -> Message:
        """Message ``i`` as the compacted context holds it (a summary, or the message)."""
        return self.current.get(i) or self.msgs[i]

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        while self.scan < length:
            i = self.scan
            if i in self.logged:
                delta[i] = left_out(self.msgs[i])
            else:
                c = self.counts[i] if self.count_of is None else self.count_of(i)
                self.visible.append(i)
                self.count[i] = c
                self.tokens += c
            self.scan += 1
        sent = self.sent(self.tokens, length)
        self.read_tokens, self.fixed_text, self.trigger_now = 0, None, self.trigger
        if not self.visible or not self.rule.fires(self, length, sent):
            return delta
        keep = self.rule.keep(self, length)
        drop = [i for i in self.visible if i not in keep]
        if not drop:
            return delta
        before_tokens = self.tokens
        size = self.fixed_text if self.fixed_text is not None else self.summary_size(before_tokens)
        # a summary is never longer than what it stands for
        size = max(1, min(size, sum(self.count[i] for i in drop))) if self.fixed_text is None else size
        slot = drop[-1]
        summary = summary_message(len(drop), size, self.name)
        for i in drop[:-1]:
            delta[i] = left_out(self.msgs[i])
        delta[slot] = summary
        self.current[slot] = summary
        self.dropped.update(drop[:-1])
        self.summaries.add(slot)
        kept = [i for i in self.visible if i in keep or i == slot]
        self.visible = kept
        self.count = {i: (size if i == slot else self.count[i]) for i in kept}
        self.tokens = sum(self.count.values())
        self.compactions.append(Compaction(length, self.trigger_now, sent, self.sent(self.tokens, length), size,
                                           tuple(drop), slot, self.name, self.read_tokens,
                                           self.fixed_text is None, self.cached))
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if index in self.dropped or index in self.summaries or index in self.logged:
            return MessageStatus.COMPACTED
        return MessageStatus.KEPT

    def finish(self, result: Result) -> Result:
        """The Result with its compactions (one the final pass over the whole history
        made is not one a model call was sent)."""
        n = len(self.msgs)
        return replace(result, compactions=tuple(c for c in self.compactions if c.at < n))


def safe_start(engine: CompactingEngine, start: int) -> int:
    """``start`` (a position in ``engine.visible``) moved back past tool results, so the
    kept tail starts at the call that asked for them."""
    vis, msgs = engine.visible, engine.msgs
    while 0 < start < len(vis) and msgs[vis[start]].role == "tool":
        start -= 1
    return start


def engine_of(rule_for: Callable[[Any], Rule], name: str, trigger: str = "auto",
              cached: bool = True) -> Callable[..., CompactingEngine]:
    """A spec's ``engine`` for a compaction policy whose decisions ``rule_for(config)`` makes."""
    def make(messages: Any, config: Any, counter: TokenCounter, **_: Any) -> CompactingEngine:
        return CompactingEngine(tuple(messages), counter, rule_for(config), name,
                                summary_tokens=getattr(config, "summary_tokens", 0) or 0, trigger=trigger,
                                cached=cached)
    return make


class TokenTrigger:
    """The rule most compactions share: past ``threshold`` tokens as sent, everything
    visible is summarised but what ``keep`` (a function of the engine) keeps."""

    def __init__(self, threshold: Callable[[CompactingEngine], int | None],
                 keep: Callable[[CompactingEngine], set[int]] = lambda e: set(), strict: bool = True) -> None:
        self.threshold, self._keep, self.strict = threshold, keep, strict

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        limit = self.threshold(e)
        return limit is not None and (sent > limit if self.strict else sent >= limit)

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        return self._keep(e)


def system_messages(e: CompactingEngine) -> set[int]:
    """The visible system messages: the instructions every compaction keeps."""
    return {i for i in e.visible if e.msgs[i].role == "system"}
