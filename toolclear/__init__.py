"""toolclear: see what context policies (eino's, Anthropic's, LangChain's, observation masking) do to real agent runs."""

from __future__ import annotations

from .corpus.sweeps import grid, load_corpus, sweep_corpus
from .cost import PRICING, Cost, Pricing, calibrate, cost, pricing_for, recorded_cost
from .counters import count_tokens
from .errors import ConfigError, TranscriptError
from .formats import dump, dump_all, load, load_all
from .model import Message, MessageStatus, ToolCall, Transcript, Usage
from .policies.anthropic import AnthropicClearToolUsesConfig
from .policies.eino_clear import ClearToolResultConfig, reduce_by_tokens
from .policies.eino_reduction import EinoReductionConfig, truncate
from .policies.langchain import LangChainClearToolUsesConfig
from .policies.masking import ObservationMaskingConfig
from .policies.offload import LocalDirBackend, MemoryBackend, ToolResultOffloadingConfig, offload
from .result import Result
from .runs.lab import Comparison, apply, compare, parse_policy, recorded, replay
from .runs.losses import Losses, losses
from .runs.verdict import Verdict, verdict

# The types the functions above return or take, their constants and their errors:
# importable from here (the app and the docs' examples use a few), each documented in
# the module named, and left out of ``__all__`` so the public face stays one screen.
# isort: split
from .corpus.sweeps import Corpus as Corpus
from .corpus.sweeps import CorpusSweep as CorpusSweep
from .corpus.sweeps import Recommendation as Recommendation
from .cost import CONTEXT_WINDOWS as CONTEXT_WINDOWS
from .cost import Calibration as Calibration
from .cost import CallCost as CallCost
from .cost import context_window as context_window
from .cost import run_context_window as run_context_window
from .cost import run_model as run_model
from .counters import CounterInfo as CounterInfo
from .counters import TokenCounter as TokenCounter
from .counters import eino_tokens as eino_tokens
from .counters import get_counter as get_counter
from .counters import list_counters as list_counters
from .errors import CounterUnavailableError as CounterUnavailableError
from .errors import OffloadError as OffloadError
from .errors import ToolclearError as ToolclearError
from .formats import FormatInfo as FormatInfo
from .formats import list_formats as list_formats
from .model import Role as Role
from .policies.eino_clear import DEFAULT_KEEP_RECENT_TOKENS as DEFAULT_KEEP_RECENT_TOKENS
from .policies.eino_clear import DEFAULT_PLACEHOLDER as DEFAULT_PLACEHOLDER
from .policies.eino_clear import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from .policies.eino_reduction import Truncated as Truncated
from .policies.offload import Offloaded as Offloaded
from .policies.offload import OffloadRecord as OffloadRecord
from .policies.offload import StorageBackend as StorageBackend
from .result import Compaction as Compaction
from .result import Step as Step
from .runs.losses import LostReference as LostReference


def _version() -> str:
    """The installed distribution's version (its metadata: what pip and ``--version``
    report), or the checkout's when it runs from source without being installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolclear")
    except PackageNotFoundError:
        return "0.1.0"


__version__ = _version()

# The public face: what the README and the docs teach, in one screen.
__all__ = [
    "AnthropicClearToolUsesConfig",
    "apply",
    "calibrate",
    "ClearToolResultConfig",
    "compare",
    "Comparison",
    "ConfigError",
    "Cost",
    "cost",
    "count_tokens",
    "dump",
    "dump_all",
    "EinoReductionConfig",
    "grid",
    "LangChainClearToolUsesConfig",
    "load",
    "load_all",
    "load_corpus",
    "LocalDirBackend",
    "Losses",
    "losses",
    "MemoryBackend",
    "Message",
    "MessageStatus",
    "ObservationMaskingConfig",
    "offload",
    "parse_policy",
    "PRICING",
    "Pricing",
    "pricing_for",
    "recorded",
    "recorded_cost",
    "reduce_by_tokens",
    "replay",
    "Result",
    "sweep_corpus",
    "ToolCall",
    "ToolResultOffloadingConfig",
    "Transcript",
    "TranscriptError",
    "truncate",
    "Usage",
    "Verdict",
    "verdict",
    "__version__",
]
