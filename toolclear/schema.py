"""The finite names and the public JSON shapes, defined once.

Modes and format names are ``Literal`` types the core, the CLI and the app share. The
report JSON (``toolclear reduce --report``, the app's JSON download) is a public
artifact read by other programs, so its shape is written here as TypedDicts, with a
``schema_version`` that changes whenever a field changes meaning or disappears.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "FORMAT_NAMES",
    "MODES",
    "SCHEMA_VERSION",
    "FormatName",
    "Mode",
    "OffloadFailureDict",
    "OffloadedDict",
    "OffloadingDict",
    "ReportDict",
    "RowDict",
    "SettingsDict",
    "StepDict",
    "SummaryDict",
]

Mode = Literal["single pass", "replay"]
MODES: tuple[Mode, ...] = ("single pass", "replay")

FormatName = Literal[
    "claude-code", "codex", "gemini-cli", "openhands", "swe-agent", "mini-swe-agent", "smolagents",
    "google-adk", "pydantic-ai", "langchain", "openai-responses", "gemini-api", "anthropic", "otel", "eino", "openai",
]
FORMAT_NAMES: tuple[FormatName, ...] = (
    "claude-code", "codex", "gemini-cli", "openhands", "swe-agent", "mini-swe-agent", "smolagents",
    "google-adk", "pydantic-ai", "langchain", "openai-responses", "gemini-api", "anthropic", "otel", "eino", "openai",
)
"""In the order auto-detection tries them (most specific first)."""

SCHEMA_VERSION = 1


class OffloadingDict(TypedDict):
    offloading_token_limit: int
    read_file_tool_name: str
    trigger_tokens: int


class _SettingsBase(TypedDict, total=False):
    """eino's clear policy's settings; another policy gives ``policy`` and ``options``."""

    policy: str
    """The policy's short name (see ``toolclear.runs.lab.POLICIES``)."""
    options: dict[str, Any]
    """Every field of the policy's config, by its own names."""
    tool_result_token_threshold: int
    keep_recent_tokens: int
    placeholder: str
    exclude_tools: list[str]
    token_counter: str


class SettingsDict(_SettingsBase, total=False):
    offloading: OffloadingDict


class OffloadFailureDict(TypedDict):
    index: int
    error: str | None


class _SummaryBase(TypedDict):
    mode: Mode
    messages: int
    tool_results: int
    tokens_before: int
    """Tokens of the final history without the policy."""
    tokens_after: int
    """Tokens of the final history with the policy."""
    tokens_saved: int
    saved_percent: float
    cleared: int
    changed: int
    """Messages the policy changed at some call (cleared, masked, truncated): the same
    meaning for every policy, sticky or not."""
    status_counts: dict[str, int]
    recent_start_index: int | None
    triggered: bool
    total_tool_result_tokens: int
    cleared_indices: list[int]


class SummaryDict(_SummaryBase, total=False):
    model_calls: int
    """Replay only: model calls of the run."""
    cache_breaks: int
    tokens_sent: int
    """Replay only: tokens sent over every call with the policy."""
    tokens_sent_unreduced: int
    offloaded: int
    offload_failures: list[OffloadFailureDict]


class StepDict(TypedDict):
    call_index: int
    final: bool
    context_tokens: int
    context_tokens_unreduced: int
    total_tool_result_tokens: int
    triggered: bool
    recent_start_index: int | None
    cleared_indices: list[int]
    cache_break: bool


class OffloadedDict(TypedDict):
    index: int
    path: str
    bytes: int
    tokens: int


class RowDict(TypedDict):
    """One message of the report (also the CSV's columns, in this order)."""

    index: int
    role: str
    tool_name: str
    tool_call_id: str
    tokens_before: int
    tokens_after: int
    status: str
    in_window: bool
    cleared_at_call: int | None
    """Replay: the model call before which it was cleared; None in single pass."""
    offloaded_path: str | None
    origin: str
    preview: str
    why: str
    """Why the message has its status (empty for messages the policy never touches)."""


class _ReportBase(TypedDict):
    schema_version: int
    settings: SettingsDict
    summary: SummaryDict
    messages: list[RowDict]


class ReportDict(_ReportBase, total=False):
    cost: dict[str, Any]
    """With a pricing: totals with and without the policy, and one row per model call."""
    source: str
    format: str
    conversation: str
    steps: list[StepDict]
    offloaded: list[OffloadedDict]
