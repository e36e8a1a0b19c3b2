"""The ``--policy`` syntax: ``name:field=value,...`` to a policy's config and back.

``parse_policy`` reads a spec such as ``anthropic:trigger=50000,keep=5`` into the config
of a policy in the registry (built-in or a plugin's); ``policy_spec`` writes a config as
the spec that reads back to it. The CLI's ``--policy``, the corpus's grids, the app's
picker and every export speak it.
"""

from __future__ import annotations

from typing import Any, Union

from ..errors import ConfigError
from . import preset_named, spec_for
from .anthropic import AnthropicClearToolUsesConfig
from .eino_clear import ClearToolResultConfig
from .eino_reduction import EinoReductionConfig
from .langchain import LangChainClearToolUsesConfig
from .masking import ObservationMaskingConfig

__all__ = ["PolicyConfig", "parse_policy", "policy_spec"]

PolicyConfig = Union[
    ClearToolResultConfig, EinoReductionConfig, AnthropicClearToolUsesConfig,
    LangChainClearToolUsesConfig, ObservationMaskingConfig,
]
"""The built-in clearing configs (a plugin's or another family's config works alike)."""


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets (a JSON list may hold commas)."""
    parts, depth, cur, quoted, escaped = [], 0, "", False, False
    for ch in text:
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return parts


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:40] + "…" + text[-10:]


def _value(field: str, text: str, default: Any, hint: str = "") -> Any:
    """One option's text as the type its field has (by the field's default, or by its
    annotation where the default is None: a list of names that may be unset)."""
    import json

    low = text.strip().lower()
    if text.strip()[:1] in ("[", "{", '"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise ConfigError(f"{field}: {_short(text)!r} is not valid JSON") from None
        except RecursionError:
            raise ConfigError(f"{field}: JSON nested too deeply ({_short(text)!r})") from None
        return tuple(value) if isinstance(value, list) else value
    if isinstance(default, str):
        return text
    if isinstance(default, bool) or field == "clear_tool_inputs":
        if low in ("true", "yes", "1", "on"):
            return True
        if low in ("false", "no", "0", "off"):
            return False
        if field != "clear_tool_inputs":
            raise ConfigError(f"{field}: expected true or false, got {text!r}")
    if default is None and "tuple" in hint:
        return None if low == "none" else tuple(p for p in text.split("|") if p)
    if isinstance(default, tuple) or field == "clear_tool_inputs":
        return tuple(p for p in text.split("|") if p)
    if low == "none" and (default is None or isinstance(default, int)):
        return None
    if isinstance(default, int) or default is None:
        try:
            return int(text.replace("_", ""))
        except ValueError:
            raise ConfigError(f"{field}: expected a whole number, got {text!r}") from None
    return text


_WORDS = {"true", "false", "yes", "no", "1", "0", "on", "off", "none"}


def _needs_json(text: str) -> bool:
    """A string the plain spec syntax would read differently."""
    return (not text or any(c in text for c in ",|[]{}\"") or text != text.strip()
            or text.lower() in _WORDS)


def parse_policy(spec: str, **overrides: Any) -> PolicyConfig:
    """A policy from a spec such as ``anthropic:trigger=50000,keep=5`` or
    ``swe-agent:n=3``: the name of a policy or preset in the registry
    (``toolclear.policies``: ``eino``, ``openhands``, ``swe-agent``, a plugin's), then its fields by their own names (or the short
    ones ``threshold``, ``keep``, ``exclude``, ``at_least``), lists as ``a|b`` or JSON.
    ``overrides`` (field=value, already typed) are applied after the spec."""
    from dataclasses import fields, replace

    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    found, preset = preset_named(name)
    base: Any = preset.make()
    known = {f.name: getattr(base, f.name) for f in fields(base) if not f.name.startswith("_")}
    hints = {f.name: str(f.type) for f in fields(base)}
    aliases = dict(found.aliases)
    changes: dict[str, Any] = {}
    for part in _split_top(rest):
        if not part.strip():
            continue
        key, eq, text = part.partition("=")
        key = key.strip().replace("-", "_")
        field = aliases.get(key, key)
        if not eq or field not in known:
            raise ConfigError(f"policy {name}: unknown option {key!r}; it takes {', '.join(sorted(known))}"
                              + (f" (or {', '.join(sorted(aliases))})" if aliases else ""))
        changes[field] = _value(field, text, known[field], hints[field])
    for key, value in overrides.items():
        if value is None:
            continue
        field = aliases.get(key, key)
        if field in known:
            changes[field] = value
    try:
        return replace(base, **changes)
    except TypeError as exc:
        raise ConfigError(f"policy {name}: {exc}") from None


def policy_spec(config: PolicyConfig) -> str:
    """The spec ``parse_policy`` reads back to ``config``: the policy's name and the
    fields that differ from its defaults (the masking presets by their own names)."""
    import json
    from dataclasses import fields

    preset = spec_for(config).preset_of(config)
    name, base = preset.name, preset.make()
    parts = []
    for f in fields(config):
        if f.name.startswith("_"):
            continue
        v, d = getattr(config, f.name), getattr(base, f.name)
        if v == d or callable(v):
            continue
        native = config.spec_value(f.name) if hasattr(config, "spec_value") else None
        if native is not None:  # a setting in its framework's own form (LangChain's clauses)
            text = json.dumps(native)
        elif isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, tuple):
            text = json.dumps(list(v), ensure_ascii=False) if not v or any(_needs_json(x) for x in v) else "|".join(v)
        elif isinstance(v, dict):
            text = json.dumps(v)
        elif v is None:
            text = "none"
        elif isinstance(v, str) and _needs_json(v):
            text = json.dumps(v, ensure_ascii=False)
        else:
            text = str(v)
        parts.append(f"{f.name}={text}")
    return name + (":" + ",".join(parts) if parts else "")
