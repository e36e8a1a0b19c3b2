"""The policies, one module per family, and the registry that lists them.

Each family module (``eino_clear``, ``eino_reduction``, ``anthropic``, ``langchain``,
``masking``) holds the whole policy: its config, its engine, and its ``SPEC`` (names,
knobs, exports). The registry lists those, the policies added with ``register`` and
the ones other packages declare in the ``toolclear.policies`` entry-point group; the
CLI, the inspector, ``compare``, the corpus and the live adapters find a policy here.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from importlib import import_module
from typing import Any

from ..errors import ConfigError
from ._spec import Knob, PolicySpec, Preset, SliderUnit

__all__ = ["BUILT_IN", "ENTRY_POINT_GROUP", "Knob", "PolicyName", "PolicySpec", "Preset", "PresetName",
           "SliderUnit", "plugin_for", "plugins", "preset_named", "preset_names", "register", "registered",
           "spec_for", "unregister"]

ENTRY_POINT_GROUP = "toolclear.policies"

FAMILIES = (
    "eino_clear",
    "eino_reduction",
    "anthropic",
    "langchain",
    "masking",
    "openai_trimmer",
    "swe_agent_remove_regex",
    "swe_agent_closed_window",
    "claude_code_microcompact",
    "cache_aware",
    "deepagents_evict",
    "anthropic_thinking",
    "as_recorded",
    "langchain_summarization",
    "anthropic_compaction",
    "claude_code_compact",
    "codex_compact",
    "eino_summarization",
    "openhands_summarizing",
    "openai_compaction",
    "adk_compaction",
    "hybrid",
)
"""toolclear's own policies, one module each (ending in its ``SPEC``): a new policy is a
module here and its name on one line of this tuple, nothing else."""

PolicyName = str
"""A policy family's name, as its ``SPEC`` gives it (``registered()`` lists them)."""
PresetName = str
"""What ``--policy`` and the app's picker take (``preset_names()`` lists them)."""

BUILT_IN: tuple[PolicySpec, ...] = tuple(import_module(f"{__name__}.{module}").SPEC for module in FAMILIES)
"""toolclear's own policies, in the order the app and the CLI list them."""

_ADDED: dict[str, PolicySpec] = {}


_LOADED: dict[str, PolicySpec] | None = None


def plugins() -> dict[str, PolicySpec]:
    """Every policy other packages declare, by name (loaded once; one that fails to load
    or takes a name already taken is left out with a warning naming it, never breaking
    toolclear). An entry point names a ``PolicySpec`` (the shape toolclear's own policies
    register with) or a callable returning one."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    from importlib.metadata import entry_points

    found: dict[str, PolicySpec] = {}
    taken = {p.name for s in BUILT_IN for p in s.presets}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, PolicySpec):
                obj = obj()
            if not isinstance(obj, PolicySpec):
                raise ConfigError(f"expected a toolclear.policies.PolicySpec, got {type(obj).__name__}")
            dist = getattr(ep, "dist", None)
            source = getattr(dist, "name", "") or ep.value
            spec = replace(obj, source=source)
            clash = [p.name for p in spec.presets if p.name in taken]
            if clash:
                raise ConfigError(f"the name {clash[0]!r} is taken")
        except Exception as exc:
            warnings.warn(f"toolclear: policy plugin {ep.name!r} ({ep.value}) not loaded: {exc}", stacklevel=2)
            continue
        taken.update(p.name for p in spec.presets)
        found[spec.name] = spec
    _LOADED = found
    return found


def plugin_for(config: Any) -> PolicySpec | None:
    """The plugin whose config this is (None for toolclear's own policies)."""
    return next((s for s in plugins().values() if type(config) is s.config), None)


def registered() -> tuple[PolicySpec, ...]:
    """Every policy toolclear knows: its own, the ones ``register`` added, and the ones
    other packages declare (loaded once)."""
    return (*BUILT_IN, *_ADDED.values(), *plugins().values())


def preset_names() -> list[str]:
    return [p.name for s in registered() for p in s.presets]


def register(spec: PolicySpec) -> PolicySpec:
    """Add a policy in this process (a package declares one with the entry point)."""
    taken = set(preset_names())
    clash = [p.name for p in spec.presets if p.name in taken]
    if clash or any(s.config is spec.config for s in registered()):
        raise ConfigError(f"policy {spec.name}: the name {clash[0]!r} is taken" if clash else
                          f"policy {spec.name}: {spec.config.__name__} is another policy's config")
    _ADDED[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Take out a policy ``register`` added."""
    _ADDED.pop(name, None)


def spec_for(config: Any) -> PolicySpec:
    """The policy whose config ``config`` is."""
    specs = registered()
    found = next((s for s in specs if type(config) is s.config), None) or next(
        (s for s in specs if isinstance(config, s.config)), None)
    if found is None:
        raise ConfigError(f"not a policy config: {type(config).__name__}")
    return found


def preset_named(name: str) -> tuple[PolicySpec, Preset]:
    """The policy and preset a name picks (``eino``, ``swe-agent``, a plugin's name)."""
    key = name.strip().lower()
    for spec in registered():
        for preset in spec.presets:
            if preset.name == key:
                return spec, preset
    raise ConfigError(f"unknown policy {key!r}; expected one of {', '.join(preset_names())}")
