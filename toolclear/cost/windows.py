"""Context windows of the models logs name, to draw the limit a run is heading for.

Prefixes of model names, longest first; input-token limits from each vendor's model
pages (2025-2026). A model not listed has no window: the charts then draw none and
the app asks for one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .._kept import KeptFor
from ..model import Message

__all__ = ["CONTEXT_WINDOWS", "context_window", "run_context_window", "run_model"]

CONTEXT_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-oss": 131_072,
    "codex-mini": 200_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2": 1_048_576,
    "gemini-3": 1_048_576,
}


def context_window(model: str) -> int | None:
    """The context window of ``model`` (a vendor name such as ``claude-sonnet-4-5``,
    optionally behind a provider prefix such as ``anthropic/``), or None if unknown."""
    name = model.lower().rsplit("/", 1)[-1]
    for prefix in sorted(CONTEXT_WINDOWS, key=len, reverse=True):
        if name.startswith(prefix):
            return CONTEXT_WINDOWS[prefix]
    return None


_models: KeptFor[str] = KeptFor(8)


def run_model(messages: Sequence[Message]) -> str:
    """The model most of the run's recorded calls name ('' when none is recorded); read
    once per transcript."""
    def read() -> str:
        names = Counter(m.usage.model for m in messages if m.usage is not None and m.usage.model)
        return names.most_common(1)[0][0] if names else ""
    return _models.get(messages, read)


def run_context_window(messages: Sequence[Message]) -> int | None:
    """The context window the log itself records (Codex's ``model_context_window``), or
    else the window of the model it names; None when neither is known."""
    recorded = Counter(m.usage.context_window for m in messages if m.usage is not None and m.usage.context_window)
    if recorded:
        return recorded.most_common(1)[0][0]
    model = run_model(messages)
    return context_window(model) if model else None
