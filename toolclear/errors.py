"""Error types. Each also subclasses a builtin so callers can catch either."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "CounterUnavailableError",
    "OffloadError",
    "ToolclearError",
    "TranscriptError",
]


class ToolclearError(Exception):
    """Base class of every error toolclear raises on purpose."""


class ConfigError(ToolclearError, ValueError):
    """A configuration value is out of range or of the wrong type."""


class CounterUnavailableError(ToolclearError, ValueError):
    """A token counter was asked for by name but cannot be used here."""


class OffloadError(ToolclearError, OSError):
    """Writing an offloaded tool result to its backend failed."""


class TranscriptError(ToolclearError, ValueError):
    """A transcript could not be read or written.

    The message is one line naming the source, the format tried, where it failed
    (line, column or JSON path) and what was wrong.
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        format: str | None = None,
        where: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.format = format
        self.where = where
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [p for p in (self.source, self.format, self.where) if p]
        head = ": ".join(parts)
        text = f"{head}: {self.problem}" if head else self.problem
        return " ".join(text.split("\n"))

    def with_context(
        self, *, source: str | None = None, format: str | None = None
    ) -> TranscriptError:
        """A copy that also names the source and format, keeping what is set."""
        return TranscriptError(
            self.problem,
            source=self.source or source,
            format=self.format or format,
            where=self.where,
        )
