"""Claude Code's time-based microcompact: when a model call comes more than
``gap_threshold_minutes`` (60) after the one before it, every tool result but the most
recent ``keep_recent`` (5) is replaced with ``[Old tool result content cleared]``. After
such a gap the prompt cache has expired anyway (its lifetime is 5 minutes, or an hour),
so the clear breaks nothing that was still paid for.

Claude Code is not open source: this follows its documented behaviour
(``gapThresholdMinutes``, ``keepRecent``, the placeholder) and assumes what the
documentation leaves open:
- the gap is measured between the times the log records for two consecutive replies
  (the reply's own time, as the usage of each call carries it): the idle time plus the
  second reply's generation, a minute at most against an hour;
- what is cleared stays cleared (Claude Code edits the history it keeps), and a result
  already holding the placeholder is not counted among the ones kept;
- ``tools`` (default: every tool) limits it to some tools' results, as Claude Code limits
  it to its file, shell and search tools;
- a run whose log records no reply times is never microcompacted (nothing says a gap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..model import Message, MessageStatus, reply_time
from ._checks import whole
from ._engine import Pairing
from ._spec import Knob, PolicySpec, Preset

__all__ = ["PLACEHOLDER", "SPEC", "MicrocompactConfig"]

PLACEHOLDER = "[Old tool result content cleared]"


@dataclass(frozen=True)
class MicrocompactConfig:
    """The time-based microcompact's settings, with Claude Code's defaults."""

    gap_threshold_minutes: int = 60
    keep_recent: int = 5
    placeholder: str = PLACEHOLDER
    tools: tuple[str, ...] | None = None
    """Only these tools' results are cleared; None: every tool's."""

    def __post_init__(self) -> None:
        whole("gap_threshold_minutes", self.gap_threshold_minutes)
        whole("keep_recent", self.keep_recent)
        if not isinstance(self.placeholder, str):
            raise ConfigError("placeholder: expected text")
        if isinstance(self.tools, str):
            object.__setattr__(self, "tools", (self.tools,))
        elif self.tools is not None:
            if not all(isinstance(t, str) for t in self.tools):
                raise ConfigError("tools: expected tool names")
            object.__setattr__(self, "tools", tuple(self.tools))


class MicrocompactEngine:
    """Advanced call by call: each call looks at the time since the reply before it and,
    past the gap, clears the results it has not cleared yet but the most recent ones."""

    def __init__(self, messages: tuple[Message, ...], config: MicrocompactConfig) -> None:
        self.msgs, self.config = messages, config
        self.pairs = Pairing(messages)
        self.scan = 0
        self.results: list[int] = []  # tool results so far, in order
        self.last_reply: float | None = None
        self.cleared: set[int] = set()
        self.allowed = frozenset(config.tools) if config.tools is not None else None
        self.fired = 0

    def _clearable(self, i: int) -> bool:
        m = self.msgs[i]
        if m.content == self.config.placeholder:
            return False
        if self.allowed is None:
            return True
        pair = self.pairs[i]
        return (pair[1].name if pair is not None else m.tool_name) in self.allowed

    def advance(self, length: int) -> dict[int, Message | None]:
        msgs, c = self.msgs, self.config
        gap = False
        while self.scan < length:
            m = msgs[self.scan]
            if m.role == "tool":
                self.results.append(self.scan)
            elif m.role == "assistant" and (t := reply_time(m)) is not None:
                self.last_reply = t
            self.scan += 1
        reply = msgs[length] if length < len(msgs) else None
        now = reply_time(reply) if reply is not None and reply.role == "assistant" else None
        if now is not None and self.last_reply is not None:
            gap = now - self.last_reply > c.gap_threshold_minutes * 60
        delta: dict[int, Message | None] = {}
        if gap:
            live = [i for i in self.results if i not in self.cleared and msgs[i].content != c.placeholder]
            old = live[:len(live) - c.keep_recent] if c.keep_recent else live
            for i in old:
                if self._clearable(i):
                    delta[i] = msgs[i].replaced(c.placeholder)
                    self.cleared.add(i)
            self.fired += 1
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        m = self.msgs[index]
        if m.role == "tool" and m.content == self.config.placeholder:
            return MessageStatus.ALREADY_CLEARED
        return MessageStatus.KEPT


def _engine(messages: Any, config: MicrocompactConfig, counter: Any, **_: Any) -> MicrocompactEngine:
    return MicrocompactEngine(tuple(messages), config)


def _why_nothing(config: MicrocompactConfig, sizes: Any) -> str:
    return (f"no model call came more than {config.gap_threshold_minutes} minutes after the one before it "
            "(or the log records no reply times).")


SPEC = PolicySpec(
    name="claude-code-microcompact",
    config=MicrocompactConfig,
    engine=_engine,
    presets=(Preset("claude-code-microcompact", "Claude Code time-based microcompact",
                    "Claude Code's time-based microcompact: after an idle gap longer than the threshold (the "
                    "prompt cache has expired), every tool result but the most recent few is cleared; what is "
                    "cleared stays cleared.", MicrocompactConfig,
                    knobs=(Knob("gap_threshold_minutes", "Idle gap (minutes)", "steps",
                                "gapThresholdMinutes: a call this long after the previous reply clears old "
                                "results."),
                           Knob("keep_recent", "Recent results kept", "uses",
                                "keepRecent: the most recent tool results left whole.")),),),
    aliases={"gap": "gap_threshold_minutes", "threshold": "gap_threshold_minutes", "keep": "keep_recent",
             "only": "tools"},
    sticky=True,
    describe=lambda c: f"microcompact after {c.gap_threshold_minutes} min, keep {c.keep_recent}",
    changed_noun="tool result(s) cleared",
    why_nothing=_why_nothing,
)
"""Claude Code's time-based microcompact, as the registry lists it."""
