"""A sixth policy, whole in one module, as a newcomer would add one: every tool result
longer than ``limit`` characters, except the last ``keep`` results, becomes the
placeholder, before every call, recomputed on the full history (not sticky).

``tests/policies/test_registry.py`` adds it with one line, ``register(SPEC)``."""

from __future__ import annotations

from dataclasses import dataclass

from toolclear import Message, MessageStatus
from toolclear.policies import Knob, PolicySpec, Preset
from toolclear.policies._checks import text, whole


@dataclass(frozen=True)
class DropLongConfig:
    limit: int = 200
    keep: int = 2
    placeholder: str = "[long result dropped]"

    def __post_init__(self) -> None:
        whole("limit", self.limit)
        whole("keep", self.keep)
        text("placeholder", self.placeholder)


class DropLongEngine:
    """Advanced over each call's prefix; answers what looks different since the last call."""

    def __init__(self, messages: tuple[Message, ...], config: DropLongConfig) -> None:
        self.msgs, self.config = messages, config
        self.results: list[int] = []
        self.scan = 0
        self.shown: set[int] = set()

    def _dropped(self) -> set[int]:
        c = self.config
        older = self.results[:max(0, len(self.results) - c.keep)]
        return {i for i in older if len(self.msgs[i].content) > c.limit}

    def advance(self, length: int) -> dict[int, Message | None]:
        while self.scan < length:
            if self.msgs[self.scan].role == "tool":
                self.results.append(self.scan)
            self.scan += 1
        now = self._dropped()
        delta: dict[int, Message | None] = {i: self.msgs[i].replaced(self.config.placeholder)
                                            for i in now - self.shown}
        delta.update({i: None for i in self.shown - now})
        self.shown = now
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        if self.msgs[index].role == "tool" and index in self.results[-self.config.keep:] and self.config.keep:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT


def _python(config: DropLongConfig) -> list[tuple[str, str, str]]:
    return [("Your agent's settings", "python", f"DropLong(limit={config.limit}, keep={config.keep})\n")]


SPEC = PolicySpec(
    name="drop-long",
    config=DropLongConfig,
    engine=lambda messages, config, counter, **_: DropLongEngine(tuple(messages), config),
    presets=(Preset("drop-long", "Drop long results (toy)",
                    "Older tool results longer than the limit become a placeholder.", DropLongConfig,
                    knobs=(Knob("limit", "Longer than (characters)", "tokens", "results longer than this go."),
                           Knob("keep", "Results kept", "uses", "the latest results always stay.")),
                    export=_python),),
    aliases={"threshold": "limit"},
    exports=("python",),
    why_nothing=lambda c, sizes: f"no older result is longer than {c.limit:,} characters.",
)
