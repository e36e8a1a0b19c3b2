"""SWE-agent's ``RemoveRegex`` history processor (``sweagent/agent/history_processors.py``
at 3ea751c0): before every model call, every history item but the last ``keep_last``
has each pattern of ``remove`` deleted from its text (``re.sub(pattern, "", text,
flags=re.DOTALL)``, the patterns in order).

Reproduced as the reference does it, checked against vectors recorded from its code
(``tests/data/swe_agent_processors_vectors.jsonl.gz``):
- every role is edited, the system prompt and the agent's own actions too, and demos;
- the patterns are Python regular expressions with ``re.DOTALL``, so the default
  ``<diff>.*</diff>`` is greedy across lines: from the first ``<diff>`` to the last
  ``</diff>`` of the item;
- it works on the whole history before every call and keeps nothing (not sticky): an
  item edited once is edited the same way on every later call.

What toolclear adds: a pattern that does not compile is refused when the setting is
made, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..model import Message, MessageStatus
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "RemoveRegexConfig"]


@dataclass(frozen=True)
class RemoveRegexConfig:
    """``RemoveRegex``'s settings, with its defaults."""

    remove: tuple[str, ...] = ("<diff>.*</diff>",)
    """Regular expressions deleted from every item's text (re.DOTALL), in order."""
    keep_last: int = 0
    """The last this many history items are left as they are."""

    def __post_init__(self) -> None:
        if isinstance(self.remove, str):
            object.__setattr__(self, "remove", (self.remove,))
        if not all(isinstance(p, str) for p in self.remove):
            raise ConfigError("remove: expected regular expressions (strings)")
        object.__setattr__(self, "remove", tuple(self.remove))
        for pattern in self.remove:
            try:
                re.compile(pattern, re.DOTALL)
            except re.error as exc:
                raise ConfigError(f"remove: {pattern!r} is not a regular expression ({exc})") from None
        if isinstance(self.keep_last, bool) or not isinstance(self.keep_last, int):
            raise ConfigError(f"keep_last: expected a whole number, got {self.keep_last!r}")


def removed_text(text: str, patterns: tuple[re.Pattern[str], ...]) -> str:
    """The text with every pattern deleted, one pattern after the other."""
    for pattern in patterns:
        text = pattern.sub("", text)
    return text


class RemoveRegexEngine:
    """Advanced over each call's prefix: an item is edited once it is older than the
    last ``keep_last``, and stays edited (the reference edits it the same way on every
    later call), so each call looks only at the items that just became old."""

    def __init__(self, messages: tuple[Message, ...], config: RemoveRegexConfig) -> None:
        self.msgs, self.config = messages, config
        self.patterns = tuple(re.compile(p, re.DOTALL) for p in config.remove)
        self.done = 0
        self.edited: set[int] = set()

    def advance(self, length: int) -> dict[int, Message | None]:
        # keep_last <= 0: every item (the reference's i_entry < keep_last never holds)
        boundary = length - max(self.config.keep_last, 0)
        delta: dict[int, Message | None] = {}
        for i in range(self.done, boundary):
            m = self.msgs[i]
            text = removed_text(m.content, self.patterns)
            if text != m.content:
                delta[i] = m.replaced(text)
                self.edited.add(i)
        self.done = max(self.done, boundary)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        if index >= self.done:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT


def _engine(messages: Any, config: RemoveRegexConfig, counter: Any, **_: Any) -> RemoveRegexEngine:
    return RemoveRegexEngine(tuple(messages), config)


def _yaml(config: RemoveRegexConfig) -> list[tuple[str, str, str]]:
    import json

    patterns = "\n".join(f"        - {json.dumps(p)}" for p in config.remove)
    text = ("# SWE-agent config\nagent:\n  history_processors:\n    - type: remove_regex\n      remove:\n"
            f"{patterns}\n      keep_last: {config.keep_last}\n")
    return [("SWE-agent: the RemoveRegex history processor", "yaml", text)]


def _why_nothing(config: RemoveRegexConfig, sizes: Any) -> str:
    return ("no message older than the last " + f"{config.keep_last} holds text matching "
            + ", ".join(config.remove) + ".")


SPEC = PolicySpec(
    name="swe-agent-remove-regex",
    config=RemoveRegexConfig,
    engine=_engine,
    presets=(Preset("swe-agent-remove-regex", "SWE-agent RemoveRegex",
                    "SWE-agent's RemoveRegex history processor: the patterns (by default <diff>...</diff>) are "
                    "deleted from every message but the last keep_last, before every call; nothing is sticky.",
                    RemoveRegexConfig,
                    knobs=(Knob("keep_last", "Last messages left whole", "messages",
                                "keep_last: the most recent history items are not edited."),),
                    export=_yaml),),
    aliases={"keep": "keep_last", "patterns": "remove", "pattern": "remove"},
    describe=lambda c: f"remove-regex {'|'.join(c.remove)} keep {c.keep_last}",
    exports=("yaml",),
    changed_noun="message(s) edited",
    why_nothing=_why_nothing,
)
"""SWE-agent's RemoveRegex, as the registry lists it."""
