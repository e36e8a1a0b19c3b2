"""``hybrid``: a clearing policy with a compaction behind it, as "The Complexity Trap"
(arXiv 2508.21433) compared them: observation masking keeps the context small call by
call, and a compaction, when the context still grows past its own trigger, summarises
what is left. The clearing policy (``base``: masking, eino's, Anthropic's, ...) decides
what each call shows; the compaction policy (``compaction``) counts that context, not
the raw one, and once it compacts, what it dropped stays dropped whatever the clearing
policy would show.

toolclear's own composition of two reference policies: each keeps its own rules (and
its own checks); what is modelled is what each models.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..counters import TokenCounter, count_tokens
from ..errors import ConfigError
from ..model import Message, MessageStatus
from ..result import Result
from ._checks import whole
from ._compaction import CompactingEngine
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "HybridConfig"]


def _named(name: str, options: dict[str, Any], what: str) -> Any:
    from . import preset_named  # the registry: a hybrid composes any two of its policies

    spec, preset = preset_named(name)
    config = preset.make()
    for option, value in options.items():
        if value is None:
            continue
        field = spec.aliases.get(option, option)
        if not hasattr(config, field):
            raise ConfigError(f"{what}: {name} has no option {option!r}")
        config = replace(config, **{field: value})
    return spec, config


@dataclass(frozen=True)
class HybridConfig:
    """A clearing policy (``base``, with its ``threshold`` and ``keep`` when given) and a
    compaction policy (``compaction``, with its trigger ``compact_at`` when given)."""

    base: str = "swe-agent"
    threshold: int | None = None
    keep: int = 5
    """What the clearing policy keeps (its ``keep`` option)."""
    compaction: str = "claude-code-compact"
    compact_at: int = 0
    """The compaction's trigger (its ``threshold`` option); 0: its default."""
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        if self.threshold is not None:
            whole("threshold", self.threshold)
        for name in ("keep", "compact_at"):
            whole(name, getattr(self, name))
        whole("summary_tokens", self.summary_tokens)
        from . import preset_named

        base_spec, _ = preset_named(self.base)
        comp_spec, _ = preset_named(self.compaction)
        if base_spec.compacts or base_spec.name in ("hybrid", "as-recorded"):
            raise ConfigError(f"base: expected a clearing policy (masking, eino, anthropic, ...), got {self.base}")
        if not comp_spec.compacts or comp_spec.name == "hybrid":
            raise ConfigError(f"compaction: expected a compaction policy (claude-code-compact, codex-compact, ...), "
                              f"got {self.compaction}")
        self.base_config(), self.compaction_config()  # their options, checked by each policy

    def base_config(self) -> tuple[Any, Any]:
        return _named(self.base, {"threshold": self.threshold, "keep": self.keep}, "base")

    def compaction_config(self) -> tuple[Any, Any]:
        spec, config = _named(self.compaction, {"threshold": self.compact_at or None}, "compaction")
        if self.summary_tokens and hasattr(config, "summary_tokens"):
            config = replace(config, summary_tokens=self.summary_tokens)
        return spec, config


class HybridEngine:
    """The clearing policy's engine and the compaction's, advanced together: the
    compaction sees each message as the clearing policy shows it."""

    def __init__(self, messages: tuple[Message, ...], config: HybridConfig, counter: TokenCounter, **kw: Any) -> None:
        base_spec, base_config = config.base_config()
        comp_spec, comp_config = config.compaction_config()
        self.msgs, self.counter = messages, counter
        self.base = base_spec.engine(messages, base_config, counter, **kw)
        self.comp: CompactingEngine = comp_spec.engine(messages, comp_config, counter, **kw)
        self.shown: dict[int, Message] = {}  # what the clearing policy shows, where it differs
        self.comp.count_of = self._shown_count

    def _shown_count(self, i: int) -> int:
        m = self.shown.get(i)
        return self.comp.counts[i] if m is None else count_tokens([m], self.counter)[0]

    @property
    def affine(self) -> tuple[int, float]:
        return self.comp.affine

    @affine.setter
    def affine(self, value: tuple[int, float]) -> None:
        self.comp.affine = value

    @property
    def anchor(self) -> Any:
        return self.comp.anchor

    @anchor.setter
    def anchor(self, value: Any) -> None:
        self.comp.anchor = value

    def advance(self, length: int) -> dict[int, Message | None]:
        comp = self.comp
        cleared = self.base.advance(length)
        for i, m in cleared.items():
            if m is None:
                self.shown.pop(i, None)
            else:
                self.shown[i] = m
        # the compaction counts what the clearing policy shows (the messages it has seen so far)
        seen = [i for i in cleared if i in comp.count and i not in comp.summaries]
        if seen:
            now = count_tokens([self.shown.get(i, self.msgs[i]) for i in seen], self.counter)
            for i, c in zip(seen, now):
                comp.tokens += c - comp.count[i]
                comp.count[i] = c
        compacted = comp.advance(length)  # new messages counted as shown (``count_of``)
        out: dict[int, Message | None] = {i: m for i, m in cleared.items()
                                           if i not in comp.dropped and i not in comp.summaries}
        out.update(compacted)
        return out

    def status(self, index: int, changed: bool) -> MessageStatus:
        if index in self.comp.dropped or index in self.comp.summaries or index in self.comp.logged:
            return MessageStatus.COMPACTED
        return self.base.status(index, changed)

    def finish(self, result: Result) -> Result:
        return self.comp.finish(result)


SPEC = PolicySpec(
    name="hybrid",
    config=HybridConfig,
    engine=lambda messages, config, counter, **kw: HybridEngine(tuple(messages), config, counter, **kw),
    presets=(Preset("hybrid", "Hybrid: clearing with a compaction behind it",
                    "A clearing policy (observation masking by default) keeps each call small; a compaction "
                    "(Claude Code's by default) summarises when the context still grows past its trigger.",
                    HybridConfig,
                    knobs=(Knob("keep", "Clearing: kept (the base's keep)", "uses"),
                           Knob("compact_at", "Compaction trigger (tokens; 0: its default)", "tokens"))),),
    aliases={"summary": "summary_tokens", "trigger": "compact_at"},
    sticky=True,
    stateful=True,
    compacts=True,
    describe=lambda c: (f"hybrid {c.base} keep {c.keep}"
                        + f" + {c.compaction}" + (f" at {c.compact_at:,}" if c.compact_at else "")),
    changed_noun="message(s) cleared or compacted",
    why_nothing=lambda c, sizes: "neither the clearing policy nor the compaction changed anything.",
)
"""The hybrid of a clearing policy and a compaction, as the registry lists it."""
