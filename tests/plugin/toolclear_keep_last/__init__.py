"""A toolclear policy from another package: every tool result but the last ``n``
becomes ``placeholder`` once there are more than ``after`` of them (the README's
example of the ``toolclear.policies`` entry point)."""

from __future__ import annotations

from dataclasses import dataclass

from toolclear import Message, MessageStatus
from toolclear.policies import Knob, PolicySpec, Preset


@dataclass(frozen=True)
class KeepLastConfig:
    n: int = 3
    after: int = 5
    placeholder: str = "[gone]"


class KeepLastEngine:
    """Advanced over each call's prefix; answers only what changed since the last call."""

    def __init__(self, messages: tuple[Message, ...], config: KeepLastConfig, counter: object, **_: object) -> None:
        self.msgs, self.config = messages, config
        self.results: list[int] = []
        self.scan = 0
        self.cleared = 0  # self.results[:cleared] hold the placeholder

    def advance(self, length: int) -> dict[int, Message | None]:
        while self.scan < length:
            if self.msgs[self.scan].role == "tool":
                self.results.append(self.scan)
            self.scan += 1
        c = self.config
        upto = max(0, len(self.results) - c.n) if len(self.results) > c.after else 0
        delta: dict[int, Message | None] = {}
        for k in range(self.cleared, upto):
            i = self.results[k]
            delta[i] = self.msgs[i].with_content(c.placeholder)
        self.cleared = max(self.cleared, upto)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        return MessageStatus.PROTECTED if self.msgs[index].role == "tool" else MessageStatus.KEPT


POLICY = PolicySpec(
    name="keep-last",
    config=KeepLastConfig,
    engine=KeepLastEngine,
    presets=(Preset(
        "keep-last", "Keep the last N results (plugin)",
        "Every tool result but the last n becomes a placeholder once there are more than `after`.",
        KeepLastConfig,
        (Knob("n", "Results kept", "uses", "The latest results left whole."),
         Knob("after", "Start after (results)", "uses", "Nothing is cleared until there are more results.")),
    ),),
    aliases={"keep": "n"},
)
