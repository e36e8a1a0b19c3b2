"""toolclear: see what context policies (eino's, Anthropic's, LangChain's, observation masking) do to real agent runs."""

from __future__ import annotations

from .corpus.sweeps import Corpus, CorpusSweep, Recommendation, grid, load_corpus, sweep_corpus
from .cost import (
    CONTEXT_WINDOWS,
    PRICING,
    Calibration,
    CallCost,
    Cost,
    Pricing,
    calibrate,
    context_window,
    cost,
    pricing_for,
    recorded_cost,
    run_context_window,
    run_model,
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
from .policies.anthropic import AnthropicClearToolUsesConfig
from .policies.eino_clear import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_PLACEHOLDER,
    DEFAULT_THRESHOLD,
    ClearToolResultConfig,
    reduce_by_tokens,
)
from .policies.eino_reduction import EinoReductionConfig, Truncated, truncate
from .policies.langchain import LangChainClearToolUsesConfig
from .policies.masking import ObservationMaskingConfig
from .policies.offload import (
    LocalDirBackend,
    MemoryBackend,
    Offloaded,
    OffloadRecord,
    StorageBackend,
    ToolResultOffloadingConfig,
    offload,
)
from .result import Compaction, Result, Step
from .runs.lab import Comparison, apply, compare, parse_policy, recorded, replay
from .runs.losses import Losses, LostReference, losses
from .runs.verdict import Verdict, verdict


def _version() -> str:
    """The installed distribution's version (its metadata: what pip and ``--version``
    report), or the checkout's when it runs from source without being installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolclear")
    except PackageNotFoundError:
        return "0.1.0"


__version__ = _version()

__all__ = [
    "AnthropicClearToolUsesConfig",
    "CONTEXT_WINDOWS",
    "Calibration",
    "CallCost",
    "ClearToolResultConfig",
    "Comparison",
    "Compaction",
    "ConfigError",
    "Corpus",
    "CorpusSweep",
    "Cost",
    "CounterInfo",
    "CounterUnavailableError",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_THRESHOLD",
    "EinoReductionConfig",
    "FormatInfo",
    "LangChainClearToolUsesConfig",
    "LocalDirBackend",
    "MemoryBackend",
    "Message",
    "MessageStatus",
    "ObservationMaskingConfig",
    "OffloadError",
    "OffloadRecord",
    "Offloaded",
    "PRICING",
    "pricing_for",
    "Pricing",
    "Recommendation",
    "Result",
    "Role",
    "Step",
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
    "apply",
    "calibrate",
    "compare",
    "context_window",
    "cost",
    "count_tokens",
    "dump",
    "dump_all",
    "eino_tokens",
    "get_counter",
    "grid",
    "list_counters",
    "list_formats",
    "load",
    "load_all",
    "load_corpus",
    "offload",
    "recorded",
    "recorded_cost",
    "reduce_by_tokens",
    "replay",
    "losses",
    "Losses",
    "LostReference",
    "run_context_window",
    "run_model",
    "sweep_corpus",
    "truncate",
    "parse_policy",
    "verdict",
    "Verdict",
]
