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
from typing import Any, Literal

from ..errors import ConfigError
from ..model import OMITTED, Message, MessageStatus, Slot, memo_put
from . import _checks as checks
from ._engine import left_out
from ._spec import Knob, Option, PolicySpec, Preset

__all__ = ["SPEC", "openhands_toml", "swe_agent_yaml", "ObservationMaskingConfig"]

SWE_AGENT_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
OPENHANDS_PLACEHOLDER = "<MASKED>"
OPENHANDS_WINDOW = 100
"""``ObservationMaskingCondenserConfig.attention_window``'s default (10 before OpenHands
commit 3d38a105cf, 2025-03-03; the condenser class's own default is 5)."""


@dataclass(frozen=True)
class ObservationMaskingConfig:
    """Keep the last ``keep_last`` observations (tool results; with ``unit="messages"``,
    observations among the last ``keep_last`` messages; with ``unit="events"``, among
    the last ``keep_last`` events of OpenHands' view, sent as OpenHands sends them) and
    mask the rest.

    ``placeholder`` may hold ``{lines}``, the masked result's line count.
    """

    keep_last: int = 5
    placeholder: str = "<MASKED>"
    polling: int = 1
    keep_first: bool = False
    unit: Literal["results", "messages", "events"] = "results"

    def __post_init__(self) -> None:
        for name, low in (("keep_last", 0), ("polling", 1)):
            checks.whole(name, getattr(self, name), minimum=low)
        checks.flag("keep_first", self.keep_first)
        if self.unit not in ("results", "messages", "events"):
            raise ConfigError(f"unit: expected 'results', 'messages' or 'events', got {self.unit!r}")
        checks.text("placeholder", self.placeholder)

    @classmethod
    def openhands(cls, attention_window: int = OPENHANDS_WINDOW) -> ObservationMaskingConfig:
        """OpenHands' ``ObservationMaskingCondenser`` as ``config.toml`` builds it
        (``attention_window`` defaults to 100 in ``ObservationMaskingCondenserConfig``; the
        class's own default is 5). The window counts events of the agent's view, and what
        is sent follows OpenHands' ``ConversationMemory``."""
        checks.whole("attention_window", attention_window, minimum=1)
        return cls(keep_last=attention_window, placeholder=OPENHANDS_PLACEHOLDER, unit="events")

    @classmethod
    def swe_agent(cls, n: int = 5, polling: int = 1) -> ObservationMaskingConfig:
        """SWE-agent's ``LastNObservations`` (the paper ran n=5); SWE-agent refuses
        ``n <= 0`` and fails on every call with ``polling = 0``."""
        checks.whole("n", n, minimum=1)
        checks.whole("polling", polling, minimum=1)
        return cls(keep_last=n, placeholder=SWE_AGENT_PLACEHOLDER, polling=polling, keep_first=True)

    def masked_text(self, m: Message) -> str:
        """What the model sees instead of ``m``. A result that already holds this mask
        (a history the policy edited before, kept by the agent) keeps it: masking it
        again must not count the mask's own lines. SWE-agent counts the lines of the text
        parts only and names the images it leaves out."""
        ph = self.placeholder
        if "{lines}" not in ph:
            return ph
        key = (Slot.MASK, ph)
        hit: str | None = m._memo.get(key)
        if hit is None:
            meta = m.meta or {}
            if _mask_pattern(ph).fullmatch(m.content):
                hit = m.content
            elif "lines" in meta:
                hit = ph.replace("{lines}", str(meta["lines"]))
                if meta.get("images"):
                    hit += f" ({meta['images']} images omitted)"
            else:
                hit = ph.replace("{lines}", str(len(m.content.splitlines())))
            memo_put(m, key, hit)
        return hit


@lru_cache(maxsize=32)
def _mask_pattern(placeholder: str) -> re.Pattern[str]:
    body = r"\d+".join(re.escape(p) for p in placeholder.split("{lines}"))
    return re.compile(body + r"(?: \(\d+ images omitted\))?")


def is_observation(m: Message) -> bool:
    """A tool result, or what the agent itself calls an observation (SWE-agent's
    ``message_type``, not a demonstration; an OpenHands observation event)."""
    meta = m.meta
    if meta is not None:
        if "message_type" in meta:
            return meta["message_type"] == "observation" and not meta["is_demo"]
        if "openhands_observation" in meta:
            return bool(meta["openhands_observation"])
    if m.role == "tool":
        return True
    return m._raw is not None and m._raw.get("message_type") == "observation"


def _tags(m: Message) -> tuple[str, ...]:
    meta = m.meta
    return meta.get("tags", ()) if meta is not None else ()


class MaskingEngine:
    """The masked observations are always the oldest ones (from the first, or the
    second with ``keep_first``), so each call only adds to the set. SWE-agent's tags
    override it: ``keep_output`` keeps an entry, ``remove_output`` masks it whatever
    its place (and wins over ``keep_output``)."""

    def __init__(self, messages: tuple[Message, ...], config: ObservationMaskingConfig) -> None:
        self.msgs, self.config = messages, config
        self.obs: list[int] = []
        self.scan = 0
        self.masked = 0  # self.obs[first:masked] are masked (but for kept tags)
        self.first = 1 if config.keep_first else 0
        self.forced: set[int] = set()

    def _upto(self, length: int) -> int:
        c = self.config
        if c.unit == "messages":
            limit = length - c.keep_last
            k = self.masked
            while k < len(self.obs) and self.obs[k] < limit:
                k += 1
            return k
        return max(0, (len(self.obs) // c.polling) * c.polling - c.keep_last)

    def _mask(self, i: int) -> Message:
        m = self.msgs[i]
        return m.replaced(self.config.masked_text(m))

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        while self.scan < length:
            m = self.msgs[self.scan]
            if is_observation(m):
                self.obs.append(self.scan)
            if "remove_output" in _tags(m):
                self.forced.add(self.scan)
                new = self._mask(self.scan)
                if new is not m:
                    delta[self.scan] = new
            self.scan += 1
        upto = max(self._upto(length), self.first)
        for k in range(max(self.masked, self.first), upto):
            i = self.obs[k]
            if i in self.forced or "keep_output" in _tags(self.msgs[i]):
                continue
            new = self._mask(i)
            if new is not self.msgs[i]:  # masked already (a history the policy edited before)
                delta[i] = new
        self.masked = max(self.masked, upto)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        if not is_observation(self.msgs[index]):
            return MessageStatus.KEPT
        k = bisect_left(self.obs, index)
        masked = self.first <= k < self.masked and k < len(self.obs) and self.obs[k] == index
        if masked and "keep_output" in _tags(self.msgs[index]):
            return MessageStatus.PROTECTED
        return MessageStatus.ALREADY_CLEARED if masked else MessageStatus.PROTECTED


class OpenHandsEngine:
    """OpenHands' condenser and the memory that turns its view into a request.

    The window counts events of the agent's view (each call of a parallel response,
    recall observations, user and agent messages; the reader notes each message's place),
    and every observation before it is masked, oldest first. What is sent then follows
    ``ConversationMemory``: a masked observation is a user ``<MASKED>`` turn (after
    another user turn, with a blank line before it); a response whose calls do not all
    have an unmasked result is left out with its results (``OMITTED``), and so is a
    result without its call."""

    def __init__(self, messages: tuple[Message, ...], config: ObservationMaskingConfig) -> None:
        self.msgs, self.config = messages, config
        self.obs: list[int] = []
        self.scan = 0
        self.masked = 0  # self.obs[:masked] are masked
        self.call_at: dict[str, int] = {}  # call id -> its assistant message
        self.pending: dict[int, set[str]] = {}  # response -> calls still without a result
        self.results: dict[int, list[int]] = {}  # response -> its results so far
        self.answers: dict[int, int] = {}  # result -> its response
        self.lost: set[int] = set()  # responses with a masked result: left out for good
        self.gone: set[int] = set()  # messages left out for good (lost responses, results without a call)
        self.open: set[int] = set()  # responses still waiting for a result
        self.transient: set[int] = set()  # messages of open responses, left out for now
        self.masked_set: set[int] = set()
        self.state: dict[int, Message] = {}  # what is sent instead of the message
        self.callless = 0  # results without a call: OpenHands leaves them out at once

    def finish(self, result: Any) -> Any:
        """The replay, with a note when the run records results without their calls."""
        if not self.callless:
            return result
        from dataclasses import replace

        results = sum(1 for m in self.msgs if m.role == "tool")
        note = (f"{self.callless:,} of the {results:,} tool results of this run have no structured tool call (its "
                "format records none): OpenHands' memory leaves a result without its call out of the request at "
                "once, so they are dropped one call after they arrive whatever the window, and the losses counted "
                "for them come from the preset meeting this format, not from masking")
        return replace(result, notes=(*result.notes, note))

    def _place(self, i: int) -> tuple[int, int]:
        meta = self.msgs[i].meta or {}
        return int(meta.get("openhands_event", i)), int(meta.get("openhands_view", i + 1))

    def _masked(self, i: int) -> Message:
        j = i - 1
        while j >= 0 and self.state.get(j, self.msgs[j]).role == OMITTED:
            j -= 1
        after_user = j >= 0 and self.state.get(j, self.msgs[j]).role == "user"
        text = ("\n\n" if after_user else "") + self.config.placeholder
        m = self.msgs[i]
        hit = m._memo.get(Slot.MASKED)
        if hit is None or hit.content != text:
            hit = Message(role="user", content=text, meta=m.meta)
            memo_put(m, Slot.MASKED, hit)
        return hit

    def _members(self, a: int) -> tuple[int, ...]:
        return (a, *self.results[a])

    def _scan(self, length: int, touched: set[int]) -> None:
        """Pair the new messages: each result with its response (or none)."""
        msgs = self.msgs
        while self.scan < length:
            i, m = self.scan, msgs[self.scan]
            if m.role == "assistant" and m.tool_calls:
                self.pending[i] = {c.id for c in m.tool_calls}
                self.results[i] = []
                self.open.add(i)
                for c in m.tool_calls:
                    self.call_at[c.id] = i
            elif m.role == "tool":
                a = self.call_at.get(m.tool_call_id)
                if a is not None and m.tool_call_id in self.pending.get(a, ()):
                    self.pending[a].discard(m.tool_call_id)
                    self.results[a].append(i)
                    self.answers[i] = a
                    if not self.pending[a]:
                        del self.pending[a]  # answered: an empty set each held 11 MB of a long run
                        self.open.discard(a)
                        touched.update(self._members(a))
                    if a in self.lost:
                        self.gone.add(i)
                        touched.add(i)
                else:  # a result without its call
                    self.gone.add(i)
                    self.callless += 1
                    touched.add(i)
            if is_observation(m):
                self.obs.append(i)
            self.scan += 1

    def advance(self, length: int) -> dict[int, Message | None]:
        touched: set[int] = set()
        self._scan(length, touched)
        view = self._place(length - 1)[1] if length else 0
        limit = view - self.config.keep_last
        while self.masked < len(self.obs) and self._place(self.obs[self.masked])[0] < limit:
            i = self.obs[self.masked]
            self.masked += 1
            self.masked_set.add(i)
            touched.add(i)
            a = self.answers.get(i)
            if a is not None and a not in self.lost:
                self.lost.add(a)
                self.gone.update(self._members(a))
                touched.update(self._members(a))
        transient = {j for a in self.open if a < length for j in self._members(a)}
        touched |= transient ^ self.transient
        self.transient = transient
        delta: dict[int, Message | None] = {}
        for i in sorted(touched):
            if i in self.masked_set:
                new: Message | None = self.state[i] if i in self.state and self.state[i].role == "user" \
                    else self._masked(i)
            elif i in self.gone or i in transient:
                new = left_out(self.msgs[i])
            else:
                new = None
            if self.state.get(i) is not new:
                delta[i] = new
                if new is None:
                    self.state.pop(i, None)
                else:
                    self.state[i] = new
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        return MessageStatus.PROTECTED if is_observation(self.msgs[index]) else MessageStatus.KEPT


def openhands_toml(config: ObservationMaskingConfig) -> str:
    return ("# config.toml of OpenHands\n[condenser]\ntype = \"observation_masking\"\n"
            f"attention_window = {config.keep_last}\n")


def swe_agent_yaml(config: ObservationMaskingConfig) -> str:
    return ("# SWE-agent config\nagent:\n  history_processors:\n    - type: last_n_observations\n"
            f"      n: {config.keep_last}\n      polling: {config.polling}\n")


def _engine(messages: Any, config: ObservationMaskingConfig, counter: Any,
            **_: object) -> MaskingEngine | OpenHandsEngine:
    # the live adapters hand over the agent's list, read as it grows
    return OpenHandsEngine(messages, config) if config.unit == "events" else MaskingEngine(messages, config)


def _openhands(config: ObservationMaskingConfig) -> list[tuple[str, str, str]]:
    return [("OpenHands: the observation-masking condenser", "toml", openhands_toml(config))]


def _swe_agent(config: ObservationMaskingConfig) -> list[tuple[str, str, str]]:
    return [("SWE-agent: the LastNObservations history processor", "yaml", swe_agent_yaml(config))]


_PRESET_FIELDS = ("placeholder", "unit", "keep_first")

SPEC = PolicySpec(
    name="masking",
    config=ObservationMaskingConfig,
    engine=_engine,
    presets=(
        Preset("masking", "Observation masking",
               "Keeps the last N observations whole and masks the rest.", ObservationMaskingConfig,
               knobs=(Knob("keep_last", "Observations kept", "uses", "the most recent observations left whole."),),
               fixed=_PRESET_FIELDS),
        Preset("openhands", "Observation masking (OpenHands)",
               "OpenHands' observation-masking condenser: observations older than the attention window (in "
               "events) become <MASKED>.", ObservationMaskingConfig.openhands, export=_openhands,
               knobs=(Knob("keep_last", "Attention window (events)", "messages",
                           "attention_window: observations among the last this many events stay whole."),),
               fixed=_PRESET_FIELDS),
        Preset("swe-agent", "Observation masking (SWE-agent)",
               "SWE-agent's LastNObservations: all but the last n observations become 'Old environment output', "
               "updated every `polling` steps; the first is kept.", ObservationMaskingConfig.swe_agent, export=_swe_agent,
               knobs=(Knob("keep_last", "Observations kept (n)", "uses",
                           "n: the most recent observations left whole."),
                      Knob("polling", "Polling (steps between updates)", "steps",
                           "polling: the mask moves only every this many observations, so the prompt cache lasts "
                           "between.")),
               fixed=_PRESET_FIELDS),
    ),
    aliases={"keep": "keep_last", "n": "keep_last", "attention_window": "keep_last"},
    describe=lambda c: f"masking last {c.keep_last} {c.unit}",
    exports=("toml", "yaml"),
    options=(Option("placeholder", "Placeholder ({lines}: the result's line count)", "text", key="opt_ph"),),
    why_nothing=lambda c, sizes: f"{sizes['uses']} observation(s), the last {c.keep_last} ({c.unit}) kept.",
)
"""Observation masking (and its OpenHands and SWE-agent presets), as the registry lists it."""
