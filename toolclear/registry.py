"""Policies from other packages: the ``toolclear.policies`` entry-point group.

A package that declares an entry point in this group, pointing at a ``PolicyInfo``,
gets its policy into ``toolclear.replay`` / ``apply`` / ``compare``, the corpus sweep,
the CLI's ``--policy`` and the app's picker, with no change to toolclear::

    [project.entry-points."toolclear.policies"]
    keep-last = "my_package.policy:POLICY"

The policy is a frozen dataclass config and an engine factory; the engine is advanced
over the prefix length of each model call and answers which messages now look
different (see ``toolclear.policies._engine.Engine``). The README has a complete example.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from .errors import ConfigError

__all__ = ["ENTRY_POINT_GROUP", "PolicyInfo", "plugin_for", "plugins"]

ENTRY_POINT_GROUP = "toolclear.policies"


@dataclass(frozen=True)
class PolicyInfo:
    """Everything toolclear needs to know about a policy from another package."""

    name: str
    """Its name in ``--policy`` specs and the app (lower case, no ':' or ',')."""
    config: type
    """A frozen dataclass: the policy's settings, each with a default."""
    engine: Callable[[tuple[Any, ...], Any, Any], Any]
    """``engine(messages, config, counter)`` -> an object with ``advance(length)`` (a
    mapping: message index -> the message as the policy shows it, or None for the
    original; only what changed since the previous call) and ``status(index, changed)``
    (a ``MessageStatus``)."""
    label: str = ""
    """The app's picker label (default: the name)."""
    help: str = ""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Short option names in a spec -> the config's field names."""
    knobs: tuple[tuple[str, str, str, str], ...] = ()
    """The app's sliders: (field, label, what it ranges over: "tokens", "uses" or
    "messages", help). Default: every whole-number field, over "uses"."""
    sticky: bool = False
    """Its edits stay in the agent's history (as eino's do); else each call starts afresh."""
    source: str = ""
    """The distribution that declared it (filled in when loaded)."""

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in ":, ") or self.name != self.name.lower():
            raise ConfigError(f"policy name {self.name!r}: lower case, without ':', ',' or spaces")
        if not (isinstance(self.config, type) and is_dataclass(self.config)):
            raise ConfigError(f"policy {self.name}: config must be a dataclass type")
        if not callable(self.engine):
            raise ConfigError(f"policy {self.name}: engine must be callable")

    @property
    def sliders(self) -> tuple[tuple[str, str, str, str], ...]:
        if self.knobs:
            return self.knobs
        base = self.config()
        return tuple((f.name, f.name.replace("_", " "), "uses", "")
                     for f in fields(self.config) if type(getattr(base, f.name)) is int)


_LOADED: dict[str, PolicyInfo] | None = None
BUILT_IN = frozenset({"eino", "eino-reduction", "anthropic", "langchain", "masking", "openhands", "swe-agent"})


def plugins() -> dict[str, PolicyInfo]:
    """Every policy other packages declare (loaded once; one that fails to load is left
    out with a warning naming it, never breaking toolclear)."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    from importlib.metadata import entry_points

    found: dict[str, PolicyInfo] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            info = ep.load()
            if callable(info) and not isinstance(info, PolicyInfo):
                info = info()
            if not isinstance(info, PolicyInfo):
                raise ConfigError(f"expected a toolclear.registry.PolicyInfo, got {type(info).__name__}")
            if info.name in BUILT_IN or info.name in found:
                raise ConfigError(f"the name {info.name!r} is taken")
        except Exception as exc:
            warnings.warn(f"toolclear: policy plugin {ep.name!r} ({ep.value}) not loaded: {exc}", stacklevel=2)
            continue
        dist = getattr(ep, "dist", None)
        found[info.name] = PolicyInfo(**{**info.__dict__, "source": getattr(dist, "name", "") or ep.value})
    _LOADED = found
    return found


def plugin_for(config: Any) -> PolicyInfo | None:
    """The plugin whose config this is (None for toolclear's own policies)."""
    for info in plugins().values():
        if type(config) is info.config:
            return info
    return None
