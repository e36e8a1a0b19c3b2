"""What toolclear knows about a policy, in one value: its config, its engine, its names,
its knobs, what it exports. Each family module ends with its ``SPEC``; the registry
(``toolclear.policies``) lists them, and the CLI, the inspector, ``compare``, the corpus
and the live adapters ask it, not the config's class."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

from ..errors import ConfigError

__all__ = ["Knob", "Option", "OptionKind", "PolicySpec", "Preset", "SliderUnit"]

SliderUnit = Literal["tokens", "tool_tokens", "lc_tokens", "rd_tokens", "rounds", "uses", "messages", "steps"]
"""What a slider's range is sized to on the loaded conversation: its tokens (by the
replay's counter, of its tool results alone, LangChain's approximation, eino's reduction
counter), its rounds, tool results, messages, or a small step count."""


@dataclass(frozen=True)
class Knob:
    """One of a policy's main numbers: the app's slider and the sweep's axis."""

    field: str
    label: str
    unit: SliderUnit = "uses"
    help: str = ""


OptionKind = Literal["number", "number_or_none", "tools", "toggle", "text", "json", "saves_files"]
"""How the app asks for an option: a whole number (``number_or_none``: 0 means None), a
choice of the run's tool names, a switch, a text, a setting in its framework's own JSON
form (shown by the config's ``spec_value``), or the switch that gives the policy a
storage backend (its field takes the switch's negation: ``skip_truncation``)."""


@dataclass(frozen=True)
class Option:
    """One of a policy's other settings, as the app's "More options" asks for it."""

    field: str
    label: str
    kind: OptionKind
    help: str = ""
    key: str = ""
    """The widget's key suffix (default: the field)."""
    needs_files: bool = False
    """Only meaningful while the policy saves files (greyed out otherwise)."""


@dataclass(frozen=True)
class Preset:
    """A name a user picks the policy by (``--policy NAME``, the app's picker): the
    policy with some of its settings fixed (OpenHands' and SWE-agent's masking)."""

    name: str
    label: str
    help: str
    make: Callable[[], Any]
    knobs: tuple[Knob, ...] = ()
    fixed: tuple[str, ...] = ()
    """The settings that tell this preset from the policy's others."""
    export: Callable[[Any], list[tuple[str, str, str]]] | None = None
    """(title, language, code) of the config in its own framework's form."""

    def matches(self, config: Any) -> bool:
        """Whether ``config`` is this preset (its fixed settings as the preset has them)."""
        base = self.make()
        return type(base) is type(config) and all(getattr(base, f) == getattr(config, f) for f in self.fixed)


EngineFactory = Callable[..., Any]
"""``engine(messages, config, counter, *, backend, tools, mode)`` -> an object with
``advance(length)`` and ``status(index, changed)`` (``toolclear.policies._engine``)."""


def _check(name: str, config: Any, engine: Any) -> None:
    """What every policy, however declared, must be: a usable name, a dataclass of
    settings, an engine."""
    if not name or any(c in name for c in ":, ") or name != name.lower():
        raise ConfigError(f"policy name {name!r}: lower case, without ':', ',' or spaces")
    if not (isinstance(config, type) and is_dataclass(config)):
        raise ConfigError(f"policy {name}: config must be a dataclass type")
    if not callable(engine):
        raise ConfigError(f"policy {name}: engine must be callable")


@dataclass(frozen=True)
class PolicySpec:
    """Everything toolclear needs to know about one policy family."""

    name: str
    """Its name in results, reports and the corpus table."""
    config: type
    """A frozen dataclass: the policy's settings, each with a default."""
    engine: EngineFactory
    """Builds the engine a replay advances call by call."""
    presets: tuple[Preset, ...] = ()
    """The names it is picked by (the first is the policy itself). Left empty (a plugin's
    shortest form), the policy itself under its name, every whole-number setting a
    slider over "uses"."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Short option names in a ``--policy`` spec -> the config's field names."""
    sticky: bool = False
    """Its edits stay in the agent's history (eino's); else each call starts afresh."""
    stateful: bool = False
    """What it does at a call depends on what it did at the calls before (cache-aware's
    held-back clears): only its replay, call by call, says what a call is sent, and a
    live adapter keeps one engine across the calls of a conversation."""
    compacts: bool = False
    """It compacts the context (a summary in place of what it drops) and so stands in for
    the compactions the log records: its replay leaves the log's summaries out and is
    priced without the log's compactions; the run without it keeps them."""
    resends_after_compaction: bool = False
    """After each compaction the agent sends again what the log's compactions show it
    sending (Claude Code attaches the files it read and its todos): priced so."""
    exports: tuple[str, ...] = ()
    """What the Export view writes for it besides toolclear's own snippet (a framework's
    settings: "go", "anthropic-json", "python", "toml", "yaml")."""
    needs_backend: Callable[[Any], bool] = field(default=lambda config: False)
    """Whether a replay of ``config`` needs a storage backend for the files it saves."""
    steps_counter: Callable[[Any], Any] = field(default=lambda config: "")
    """The counter the policy counts its steps in when its config names one (eino's
    clear policy: its ``token_counter``), a name or the callable itself; "" when it
    counts with the caller's counter. A trigger that keeps a counter of its own
    (LangChain's approximate count) says so in its engine, not here."""
    saves_files: bool = False
    """It saves what it truncates or clears in a storage backend (eino's reduction)."""
    offloads: bool = False
    """It takes an offloading config (eino's clear policy and its companion)."""
    window: bool = False
    """It clears by a tool-result trigger and a protected window of recent tokens, which
    the reports and charts draw (eino's clear policy)."""
    changed_noun: str = "message(s) changed"
    """What the CLI's summary calls the messages it changed."""
    describe: Callable[[Any], str] | None = None
    """A short label of ``config`` for tables (default: its name and main numbers)."""
    fast_replay: Callable[..., Any] | None = None
    """A faster replay than the engine's, equal to it (a test holds them equal)."""
    fast_apply: Callable[..., Any] | None = None
    """A single pass of its own (the engine's first call otherwise)."""
    options: tuple[Option, ...] = ()
    """Its settings besides the knobs, as the app's "More options" asks for them."""
    why_nothing: Callable[[Any, Mapping[str, int]], str] | None = None
    """Why ``config`` changed nothing on a run whose sizes (keyed by ``SliderUnit``) are
    given: the app's answer when a setting does nothing."""
    sweep_base: Callable[[Any], Any] = field(default=lambda config: config)
    """The config a corpus sweep starts from (without storage, eino's reduction skips
    truncation)."""
    source: str = "toolclear"
    """The distribution that declared it."""

    def __post_init__(self) -> None:
        _check(self.name, self.config, self.engine)
        if not self.presets:
            object.__setattr__(self, "presets", (Preset(self.name, self.name, "", self.config,
                                                        default_knobs(self.config)),))

    def preset_of(self, config: Any) -> Preset:
        """The named preset ``config`` is (OpenHands', SWE-agent's), else the policy itself."""
        return next((p for p in self.presets[1:] if p.matches(config)), self.presets[0])

    @property
    def knobs(self) -> tuple[Knob, ...]:
        return self.presets[0].knobs

    def label(self, config: Any) -> str:
        """A short label of ``config``: the policy's own, or its preset and main numbers."""
        if self.describe is not None:
            return self.describe(config)
        preset = self.preset_of(config)
        values = [getattr(config, k.field) for k in preset.knobs]
        shown = "/".join(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v) for v in values)
        return f"{preset.name} {shown}".strip()


def default_knobs(config: type, unit: SliderUnit = "uses") -> tuple[Knob, ...]:
    """Every whole-number setting of ``config``, as a slider over ``unit``."""
    base = config()
    return tuple(Knob(f.name, f.name.replace("_", " "), unit) for f in fields(config)
                 if type(getattr(base, f.name)) is int)


def names_of(specs: Sequence[PolicySpec]) -> list[str]:
    return [p.name for s in specs for p in s.presets]
