"""toolclear: see and tune eino's clear-tool-result policy on real agent transcripts."""

from __future__ import annotations

from ._offload import (
    LocalDirBackend,
    MemoryBackend,
    Offloaded,
    OffloadRecord,
    StorageBackend,
    ToolResultOffloadingConfig,
    offload,
)
from ._replay import Replay, ReplayStep, replay
from .clearing import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_PLACEHOLDER,
    DEFAULT_THRESHOLD,
    ClearToolResultConfig,
    Reduction,
    reduce_by_tokens,
)
from .counters import CounterInfo, TokenCounter, count_tokens, eino_tokens, get_counter, list_counters
from .errors import (
    ConfigError,
    CounterUnavailableError,
    OffloadError,
    ToolclearError,
    TranscriptError,
)
from .formats import FormatInfo, dump, dump_all, list_formats, load, load_all
from .model import Message, MessageStatus, Role, ToolCall, Transcript, Usage
from .reduction import EinoReductionConfig, Truncated, truncate
from .windows import CONTEXT_WINDOWS, context_window, run_model

__version__ = "0.1.0"

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_THRESHOLD",
    "EinoReductionConfig",
    "ClearToolResultConfig",
    "FormatInfo",
    "ConfigError",
    "CounterInfo",
    "CounterUnavailableError",
    "LocalDirBackend",
    "MemoryBackend",
    "Message",
    "MessageStatus",
    "OffloadError",
    "OffloadRecord",
    "Offloaded",
    "Reduction",
    "Replay",
    "ReplayStep",
    "Role",
    "StorageBackend",
    "TokenCounter",
    "ToolCall",
    "ToolResultOffloadingConfig",
    "ToolclearError",
    "Transcript",
    "TranscriptError",
    "Truncated",
    "Usage",
    "__version__",
    "context_window",
    "count_tokens",
    "dump",
    "dump_all",
    "eino_tokens",
    "get_counter",
    "list_counters",
    "list_formats",
    "load",
    "load_all",
    "offload",
    "reduce_by_tokens",
    "replay",
    "run_model",
    "truncate",
]
