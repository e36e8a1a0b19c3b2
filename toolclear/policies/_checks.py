"""Config validation written once: each check names the field and says what it expects,
in the same words for every policy (a ``ConfigError``, one line)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError

__all__ = ["flag", "names", "text", "whole"]


def whole(name: str, value: Any, *, minimum: int = 0, none_ok: bool = False) -> None:
    """A whole number >= ``minimum`` (or None where the field may be unset)."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name}: expected a whole number" + (f" >= {minimum:,}" if minimum > -(2**63) else "")
                          + (" or none" if none_ok else "") + f", got {value!r}")


def flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"{name}: expected true or false, got {value!r}")


def text(name: str, value: Any, *, limit: int = 100_000) -> None:
    """A string, of a size a placeholder can sensibly have."""
    if not isinstance(value, str):
        raise ConfigError(f"{name}: expected a string, got {value!r}")
    if len(value) > limit:
        raise ConfigError(f"{name}: {len(value):,} characters, more than the {limit:,} it may hold")


def names(name: str, value: Any) -> tuple[str, ...]:
    """A list of tool names (None for none), as a tuple."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(f"{name}: expected a list of tool names, got {value!r}")
    out = tuple(value)
    if not all(isinstance(v, str) for v in out):
        raise ConfigError(f"{name}: expected a list of tool names, got {value!r}")
    return out
