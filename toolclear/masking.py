"""Observation masking: keep the latest tool results whole, mask the older ones.

Two shapes agents run, each a preset:

* OpenHands' ``ObservationMaskingCondenser``: an observation whose event is not among
  the last ``attention_window`` events becomes ``<MASKED>`` (``unit="messages"``: the
  window counts every message, as OpenHands counts every event).
* SWE-agent's ``LastNObservations`` history processor: all observations but the last
  ``n`` (updated only every ``polling`` steps, so the prompt cache survives between
  updates) become ``Old environment output: (N lines omitted)``; the first observation
  (SWE-agent's instance template) is always kept.

Both recompute the mask from the full history at every step, so nothing is sticky.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from . import checks
from .errors import ConfigError
from .model import Message, MessageStatus

__all__ = ["ObservationMaskingConfig"]

SWE_AGENT_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"


@dataclass(frozen=True)
class ObservationMaskingConfig:
    """Keep the last ``keep_last`` observations (tool results; with ``unit="messages"``,
    observations among the last ``keep_last`` messages) and mask the rest.

    ``placeholder`` may hold ``{lines}``, the masked result's line count.
    """

    keep_last: int = 5
    placeholder: str = "<MASKED>"
    polling: int = 1
    keep_first: bool = False
    unit: Literal["results", "messages"] = "results"

    def __post_init__(self) -> None:
        for name, low in (("keep_last", 0), ("polling", 1)):
            checks.whole(name, getattr(self, name), minimum=low)
        checks.flag("keep_first", self.keep_first)
        if self.unit not in ("results", "messages"):
            raise ConfigError(f"unit: expected 'results' or 'messages', got {self.unit!r}")
        checks.text("placeholder", self.placeholder)

    @classmethod
    def openhands(cls, attention_window: int = 10) -> ObservationMaskingConfig:
        """OpenHands' observation-masking condenser (``attention_window`` defaults to 10
        in ``ObservationMaskingCondenserConfig``)."""
        return cls(keep_last=attention_window, placeholder="<MASKED>", unit="messages")

    @classmethod
    def swe_agent(cls, n: int = 5, polling: int = 1) -> ObservationMaskingConfig:
        """SWE-agent's ``LastNObservations`` (the paper ran n=5)."""
        return cls(keep_last=n, placeholder=SWE_AGENT_PLACEHOLDER, polling=polling, keep_first=True)

    def masked_text(self, m: Message) -> str:
        """What the model sees instead of ``m``. A result that already holds this mask
        (a history the policy edited before, kept by the agent) keeps it: masking it
        again must not count the mask's own lines."""
        ph = self.placeholder
        if "{lines}" not in ph:
            return ph
        key = ("mask", ph)
        hit: str | None = m._memo.get(key)
        if hit is None:
            hit = m.content if _mask_pattern(ph).fullmatch(m.content) else ph.replace(
                "{lines}", str(len(m.content.splitlines())))
            m._memo[key] = hit
        return hit


@lru_cache(maxsize=32)
def _mask_pattern(placeholder: str) -> re.Pattern[str]:
    return re.compile(r"\d+".join(re.escape(p) for p in placeholder.split("{lines}")))


def is_observation(m: Message) -> bool:
    """A tool result, or what SWE-agent itself marked an observation."""
    if m.role == "tool":
        return True
    return m._raw is not None and m._raw.get("message_type") == "observation"


class MaskingEngine:
    """The masked observations are always the oldest ones (from the first, or the
    second with ``keep_first``), so each call only adds to the set."""

    def __init__(self, messages: tuple[Message, ...], config: ObservationMaskingConfig) -> None:
        self.msgs, self.config = messages, config
        self.obs: list[int] = []
        self.scan = 0
        self.masked = 0  # self.obs[first:masked] are masked
        self.first = 1 if config.keep_first else 0

    def _upto(self, length: int) -> int:
        c = self.config
        if c.unit == "messages":
            limit = length - c.keep_last
            k = self.masked
            while k < len(self.obs) and self.obs[k] < limit:
                k += 1
            return k
        return max(0, (len(self.obs) // c.polling) * c.polling - c.keep_last)

    def advance(self, length: int) -> dict[int, Message | None]:
        while self.scan < length:
            if is_observation(self.msgs[self.scan]):
                self.obs.append(self.scan)
            self.scan += 1
        upto = max(self._upto(length), self.first)
        delta: dict[int, Message | None] = {}
        for k in range(max(self.masked, self.first), upto):
            m = self.msgs[self.obs[k]]
            new = m.replaced(self.config.masked_text(m))
            if new is not m:  # masked already (a history the policy edited before)
                delta[self.obs[k]] = new
        self.masked = max(self.masked, upto)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if not is_observation(self.msgs[index]):
            return MessageStatus.KEPT
        if changed:
            return MessageStatus.CLEARED
        k = bisect_left(self.obs, index)
        masked = self.first <= k < self.masked and k < len(self.obs) and self.obs[k] == index
        return MessageStatus.ALREADY_CLEARED if masked else MessageStatus.PROTECTED
