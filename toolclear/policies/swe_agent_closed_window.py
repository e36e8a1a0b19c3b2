"""SWE-agent's ``ClosedWindowHistoryProcessor`` (``sweagent/agent/history_processors.py``
at 3ea751c0): before every model call, a file-viewer window (an observation holding
numbered lines, ``12:...``, under a ``[File: path (N lines total)]`` header) that a
later window of the same file replaces becomes ``Outdated window with N lines
omitted...``; the last window of each file stays open.

Reproduced as the reference does it, quirks included, checked against vectors recorded
from its code (``tests/data/swe_agent_processors_vectors.jsonl.gz``):
- only ``user`` messages are looked at (SWE-agent's observations without function
  calling); with function calling they are ``tool`` messages, which it leaves alone;
  demonstrations (``is_demo``) too;
- the numbered lines are every line starting with digits and a colon; the text from the
  first to the last of them (and that last line's newline) is replaced;
- **a user message with numbered lines but no ``[File: ...]`` header is dropped from the
  request** (the reference's loop ``continue``s before keeping it): toolclear shows it
  as left out;
- it works on the whole history before every call and keeps nothing (not sticky); a
  window stays outdated once a later one of its file exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..model import Message, MessageStatus
from ._engine import left_out
from ._spec import PolicySpec, Preset

__all__ = ["SPEC", "ClosedWindowConfig", "window_of"]

_LINE = re.compile(r"^(\d+)\:.*?(\n|$)", re.MULTILINE)
_FILE = re.compile(r"\[File:\s+(.*)\s+\(\d+\s+lines\ total\)\]")


@dataclass(frozen=True)
class ClosedWindowConfig:
    """``ClosedWindowHistoryProcessor`` has no settings."""


def window_of(text: str) -> tuple[str | None, int, int, int] | None:
    """(file or None, first, end, numbered lines) of a window in ``text``, or None when it
    holds no numbered line; file is None when there is no ``[File: ...]`` header."""
    matches = list(_LINE.finditer(text))
    if not matches:
        return None
    found = _FILE.search(text)
    return (found.group(1) if found else None), matches[0].start(), matches[-1].end(), len(matches)


def _looked_at(m: Message) -> bool:
    """A user message of SWE-agent's history that is not a demonstration. An observation
    toolclear reads as a tool result (no function calling) is a user message to SWE-agent:
    its reader keeps the entry's own role."""
    meta = m.meta
    role = meta.get("role") if meta is not None and isinstance(meta.get("role"), str) else m.role
    return role == "user" and not (meta is not None and meta.get("is_demo"))


class ClosedWindowEngine:
    """Advanced over each call's prefix: each new user message's window, once read, closes
    every earlier window of the same file (which stays closed), and a headerless window
    is left out as soon as it arrives."""

    def __init__(self, messages: tuple[Message, ...], config: ClosedWindowConfig) -> None:
        self.msgs = messages
        self.scan = 0
        self.last: dict[str, int] = {}  # file -> its latest window so far
        self.windows: dict[int, tuple[int, int, int]] = {}  # message -> its window's span and lines
        self.closed: set[int] = set()
        self.dropped: set[int] = set()

    def _outdated(self, i: int) -> Message:
        m = self.msgs[i]
        start, end, lines = self.windows[i]
        return m.replaced(m.content[:start] + f"Outdated window with {lines} lines omitted...\n" + m.content[end:])

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        while self.scan < length:
            i, self.scan = self.scan, self.scan + 1
            m = self.msgs[i]
            if not _looked_at(m):
                continue
            window = window_of(m.content)
            if window is None:
                continue
            file, start, end, lines = window
            if file is None:
                delta[i] = left_out(self.msgs[i])
                self.dropped.add(i)
                continue
            self.windows[i] = (start, end, lines)
            before = self.last.get(file)
            if before is not None:
                delta[before] = self._outdated(before)
                self.closed.add(before)
            self.last[file] = i
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        if index in self.windows:
            return MessageStatus.PROTECTED  # the open window of its file
        return MessageStatus.KEPT


def _engine(messages: Any, config: ClosedWindowConfig, counter: Any, **_: Any) -> ClosedWindowEngine:
    return ClosedWindowEngine(tuple(messages), config)


def _yaml(config: ClosedWindowConfig) -> list[tuple[str, str, str]]:
    text = "# SWE-agent config\nagent:\n  history_processors:\n    - type: closed_window\n"
    return [("SWE-agent: the ClosedWindowHistoryProcessor", "yaml", text)]


SPEC = PolicySpec(
    name="swe-agent-closed-window",
    config=ClosedWindowConfig,
    engine=_engine,
    presets=(Preset("swe-agent-closed-window", "SWE-agent ClosedWindowHistoryProcessor",
                    "SWE-agent's closed_window history processor: a file-viewer window that a later window of the "
                    "same file replaces is summarised as 'Outdated window with N lines omitted...', before every "
                    "call; a numbered window without a [File: ...] header is left out of the request, as the "
                    "reference does.", ClosedWindowConfig, export=_yaml),),
    describe=lambda c: "swe-agent closed windows",
    exports=("yaml",),
    changed_noun="window(s) closed or left out",
    why_nothing=lambda c, sizes: "no file window is followed by a later window of the same file.",
)
"""SWE-agent's ClosedWindowHistoryProcessor, as the registry lists it."""
