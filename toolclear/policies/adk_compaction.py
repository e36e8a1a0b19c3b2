"""Google ADK's event compaction (``EventsCompactionConfig``, google-adk 2.13,
``google/adk/apps/compaction.py``), after each invocation (one user turn and what the
agent did for it):

- token mode (``token_threshold`` and ``event_retention_size``): when the latest prompt
  reached the threshold, every event since the last compaction but the latest
  ``event_retention_size`` becomes one summary (the previous summary folded in); the
  split moves earlier so no kept function response loses its call;
- sliding window (``compaction_interval``, ``overlap_size``): once ``compaction_interval``
  new invocations have ended, everything up to the end of the latest becomes one summary
  (``overlap_size`` earlier invocations are summarised again with it, which changes what
  the summary says, not what is sent).

Exact: when each mode fires and what it keeps, counting each message of the run as one
event and each user message as the start of an invocation. Assumed: ADK's "latest prompt
token count" is the run's tokens as sent at the call before the check (ADK reads the
last reply's ``prompt_token_count``, estimating bytes / 4 where none is recorded).
Modelled: the summary's size. Not reproduced: ADK's check that a range is worth
compacting and its dropping of calls it can prove dead.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ._checks import whole
from ._compaction import CompactingEngine, engine_of, safe_start, system_messages
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "AdkCompactionConfig"]


@dataclass(frozen=True)
class AdkCompactionConfig:
    """``EventsCompactionConfig``: 0 leaves a mode unset (ADK's None)."""

    compaction_interval: int = 0
    overlap_size: int = 0
    token_threshold: int = 100_000
    event_retention_size: int = 10
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("compaction_interval", "overlap_size", "token_threshold", "event_retention_size",
                     "summary_tokens"):
            whole(name, getattr(self, name))
        if not self.compaction_interval and not self.token_threshold:
            raise ConfigError("set token_threshold (token mode) or compaction_interval (sliding window)")


class _Rule:
    def __init__(self, c: AdkCompactionConfig) -> None:
        self.c = c
        self.turns_since = 0
        self.last_sent = 0
        self.seen = 0
        self.started = False

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        # an invocation ended where a new user message starts the next one: the check runs then
        new_turn = any(e.msgs[i].role == "user" for i in range(self.seen, length))
        self.seen = length
        prompt, self.last_sent = self.last_sent, sent
        if not new_turn:
            return False
        ended, self.started = self.started, True  # the first user message ends nothing
        if not ended:
            return False
        self.turns_since += 1
        c = self.c
        if c.token_threshold and prompt >= c.token_threshold and self._token_keep(e) is not None:
            self.mode = "token"
            return True
        if c.compaction_interval and self.turns_since >= c.compaction_interval:
            self.mode = "window"
            return True
        return False

    def _current_turn(self, e: CompactingEngine) -> int:
        """Position in ``e.visible`` where the invocation now starting begins."""
        vis = e.visible
        k = len(vis)
        while k > 0 and e.msgs[vis[k - 1]].role != "user":
            k -= 1
        return k - 1 if k else 0

    def _token_keep(self, e: CompactingEngine) -> set[int] | None:
        vis = e.visible
        done = self._current_turn(e)  # the events of the invocations that ended
        candidates = [i for i in vis[:done] if i not in e.summaries]
        n = self.c.event_retention_size
        if len(candidates) <= n:
            return None
        split = len(vis[:done]) - n
        split = safe_start(e, split)
        return set(vis[split:])

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        self.turns_since = 0
        if getattr(self, "mode", "") == "token":
            return (self._token_keep(e) or set(e.visible)) | system_messages(e)
        return set(e.visible[self._current_turn(e):]) | system_messages(e)


def _python(c: AdkCompactionConfig) -> str:
    parts = []
    if c.compaction_interval:
        parts += [f"compaction_interval={c.compaction_interval}", f"overlap_size={c.overlap_size}"]
    if c.token_threshold:
        parts += [f"token_threshold={c.token_threshold}", f"event_retention_size={c.event_retention_size}"]
    return ("from google.adk.apps.app import App, EventsCompactionConfig\n\n"
            "app = App(name=\"app\", root_agent=agent,\n          events_compaction_config=EventsCompactionConfig("
            + ", ".join(parts) + "))\n")


SPEC = PolicySpec(
    name="adk-compaction",
    config=AdkCompactionConfig,
    engine=engine_of(_Rule, "adk-compaction"),
    presets=(Preset("adk-compaction", "Google ADK event compaction",
                    "Google ADK's EventsCompactionConfig: after an invocation, past the token threshold (or every "
                    "few invocations) older events become one summary.", AdkCompactionConfig,
                    export=lambda c: [("Google ADK: EventsCompactionConfig", "python", _python(c))],
                    knobs=(Knob("token_threshold", "Token threshold (0: off)", "tokens"),
                           Knob("event_retention_size", "Events kept", "messages"))),),
    aliases={"threshold": "token_threshold", "keep": "event_retention_size", "interval": "compaction_interval",
             "overlap": "overlap_size", "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    describe=lambda c: (f"adk-compaction {c.token_threshold:,}/{c.event_retention_size}" if c.token_threshold
                        else f"adk-compaction every {c.compaction_interval} invocations"),
    changed_noun="event(s) compacted",
    why_nothing=lambda c, sizes: "no invocation ended past the token threshold (or the interval).",
)
"""Google ADK's event compaction, as the registry lists it."""
