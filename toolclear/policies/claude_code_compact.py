"""Claude Code's auto-compact: when the context reaches its trigger, the model is asked
for a summary of the whole conversation and the next call is sent that summary alone
(with the system prompt and tools, and the files Claude Code attaches again).

Claude Code is not open source: the trigger is read from what its logs record
(``compactMetadata.preTokens`` of ``trigger: auto`` compactions): near 155,000 tokens in
2.1.2-2.1.12, 167,000-177,000 from 2.1.20 on; toolclear takes 155,000 up to 2.1.19 and
167,000 from 2.1.20 (``trigger_tokens`` 0: by the log's version, newer when it names
none). ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` sets the trigger as a percentage of the
200,000-token window (``autocompact_pct_override``). Exact: nothing of the conversation
is kept; the check runs after a reply, on the usage it reports, so the call that crosses
the trigger is sent whole and the next one the summary (the usage counts the reply's output
too, as ``preTokens`` does). Modelled: the summary's size (``summary_tokens``, else the log's own summaries
per token they replaced); the files attached again after a compaction are priced where
the log shows them (``cost`` reads each stretch's overhead), not in a simulated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError
from ..model import Message
from ._checks import whole
from ._compaction import CompactingEngine, engine_of, system_messages
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "ClaudeCodeCompactConfig", "claude_code_version", "trigger_for_version"]

WINDOW = 200_000
EARLY_TRIGGER, LATE_TRIGGER = 155_000, 167_000


@dataclass(frozen=True)
class ClaudeCodeCompactConfig:
    """Claude Code's auto-compact settings."""

    trigger_tokens: int = 0
    """The context (tokens as sent) that triggers it; 0: by the log's Claude Code version."""
    autocompact_pct_override: int = 0
    """``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``: the trigger as a percentage (1-100) of the
    200,000-token window; 0: unset."""
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("trigger_tokens", self.trigger_tokens)
        whole("summary_tokens", self.summary_tokens)
        whole("autocompact_pct_override", self.autocompact_pct_override)
        if self.autocompact_pct_override > 100:
            raise ConfigError(f"autocompact_pct_override: a percentage 0-100, got {self.autocompact_pct_override}")


_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


def claude_code_version(messages: tuple[Message, ...]) -> tuple[int, int, int] | None:
    """The Claude Code version the log was written by (its lines' ``version``)."""
    for m in messages:
        raw = m._raw
        v = raw.get("version") if raw else None
        if isinstance(v, str) and (found := _VERSION.match(v)):
            return int(found[1]), int(found[2]), int(found[3])
    return None


def trigger_for_version(version: tuple[int, int, int] | None) -> int:
    return EARLY_TRIGGER if version is not None and version < (2, 1, 20) else LATE_TRIGGER


class _Rule:
    """Claude Code checks the context after a reply, by the usage that reply reports:
    the call that crosses the trigger is sent whole, the next one the summary."""

    def __init__(self, config: ClaudeCodeCompactConfig) -> None:
        self.c = config
        self.threshold: int | None = None
        self.last = 0

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        if self.threshold is None:
            c = self.c
            self.threshold = (WINDOW * c.autocompact_pct_override // 100 if c.autocompact_pct_override else
                              c.trigger_tokens or trigger_for_version(claude_code_version(e.msgs)))
        reply = e.msgs[length] if length < len(e.msgs) else None
        out = reply.usage.output_tokens if reply is not None and reply.usage is not None else 0
        last, self.last = self.last, sent + out  # what this reply will report: its prompt and its output
        if last >= self.threshold:
            self.last = 0  # this call is sent the summary: the next check reads that
            return True
        return False

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        return system_messages(e)


def _describe(c: ClaudeCodeCompactConfig) -> str:
    if c.autocompact_pct_override:
        return f"claude-code-compact at {c.autocompact_pct_override}% of 200k"
    return f"claude-code-compact at {c.trigger_tokens:,}" if c.trigger_tokens else "claude-code-compact (its version's trigger)"


SPEC = PolicySpec(
    name="claude-code-compact",
    config=ClaudeCodeCompactConfig,
    engine=engine_of(_Rule, "claude-code-compact"),
    presets=(Preset("claude-code-compact", "Claude Code auto-compact",
                    "Claude Code's auto-compact: at its trigger the whole conversation becomes one summary.",
                    ClaudeCodeCompactConfig,
                    knobs=(Knob("trigger_tokens", "Trigger (tokens as sent; 0: its version's)", "tokens",
                                "The context that triggers the compaction: 155,000 up to 2.1.19, 167,000 after."),
                           Knob("summary_tokens", "Summary tokens (0: modelled)", "tokens"))),),
    aliases={"trigger": "trigger_tokens", "threshold": "trigger_tokens", "pct": "autocompact_pct_override",
             "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    resends_after_compaction=True,
    describe=_describe,
    changed_noun="message(s) compacted",
    why_nothing=lambda c, sizes: f"the context never reached the trigger ({_describe(c)}).",
)
"""Claude Code's auto-compact, as the registry lists it."""


