"""The clear-tool-result policy of eino's ADK reduction middleware, faithfully.

Before a model call: if the tool results in the history add up to more than a
threshold, every tool result outside a protected window of recent messages gets its
content replaced by a placeholder. What the reference really does (pinned by the
conformance vectors in tests/data):

* tokens are ``ceil(UTF-8 bytes / 4)`` per message (content + tool-call arguments);
* the total counts only tool results whose content is not exactly the placeholder;
* the trigger is strict: ``total > threshold``;
* the window walks back from the last message and stops at the first message that
  overflows ``keep_recent_tokens``; that message is *kept* (it is the window start);
* exclusions match the exact tool name, a missing name being "".

Values are taken literally; ``ClearToolResultConfig.from_eino`` reads them the way eino
does (0 or "" mean the default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .counters import DEFAULT_COUNTER, TokenCounter, count_tokens, get_counter
from .errors import ConfigError
from .model import Message, MessageStatus
from .offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_THRESHOLD",
    "ClearToolResultConfig",
    "Reduction",
    "reduce_by_tokens",
]

DEFAULT_THRESHOLD = 20_000
DEFAULT_KEEP_RECENT_TOKENS = 40_000
DEFAULT_PLACEHOLDER = "[Old tool result content cleared]"


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name}: expected a whole number >= 0, got {value!r}")
    if value < 0:
        raise ConfigError(f"{name}: expected a whole number >= 0, got {value}")
    return value


def _check_names(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ConfigError(f"{name}: expected a list of tool names, got the single string {value!r}")
    try:
        names = tuple(value)
    except TypeError:
        raise ConfigError(f"{name}: expected a list of tool names, got {value!r}") from None
    for item in names:
        if not isinstance(item, str):
            raise ConfigError(f"{name}: every tool name must be a string, got {item!r}")
    return names


@dataclass(frozen=True, slots=True)
class ClearToolResultConfig:
    """Settings of the clearing policy, taken literally (0 means 0)."""

    tool_result_token_threshold: int = DEFAULT_THRESHOLD
    """Clear only when the tool results together hold more tokens than this."""

    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    """Token budget of the protected window, counted back from the last message."""

    placeholder: str = DEFAULT_PLACEHOLDER
    """What a cleared tool result holds afterwards; a result holding exactly this is
    'already cleared' and no longer counted."""

    exclude_tools: tuple[str, ...] = ()
    """Tool names whose results are never cleared (exact, case-sensitive)."""

    token_counter: str | TokenCounter = DEFAULT_COUNTER
    """A counter name from ``list_counters()`` or a callable ``Message -> int``."""

    def __post_init__(self) -> None:
        _check_int("tool_result_token_threshold", self.tool_result_token_threshold)
        _check_int("keep_recent_tokens", self.keep_recent_tokens)
        if not isinstance(self.placeholder, str):
            raise ConfigError(f"placeholder: expected a string, got {self.placeholder!r}")
        object.__setattr__(self, "exclude_tools", _check_names("exclude_tools", self.exclude_tools))
        if not (isinstance(self.token_counter, str) or callable(self.token_counter)):
            raise ConfigError(
                f"token_counter: expected a counter name or a callable, got {self.token_counter!r}"
            )

    @classmethod
    def from_eino(
        cls,
        tool_result_token_threshold: int = 0,
        keep_recent_tokens: int = 0,
        placeholder: str = "",
        exclude_tools: Sequence[str] | None = None,
        token_counter: str | TokenCounter | None = None,
    ) -> ClearToolResultConfig:
        """Read settings the way eino's ``ClearToolResultConfig`` does: 0 and "" (and
        a missing counter) mean the defaults 20000 / 40000 / the default placeholder."""
        return cls(
            tool_result_token_threshold=_check_int(
                "tool_result_token_threshold", tool_result_token_threshold
            )
            or DEFAULT_THRESHOLD,
            keep_recent_tokens=_check_int("keep_recent_tokens", keep_recent_tokens)
            or DEFAULT_KEEP_RECENT_TOKENS,
            placeholder=placeholder or DEFAULT_PLACEHOLDER,
            exclude_tools=tuple(exclude_tools or ()),
            token_counter=token_counter or DEFAULT_COUNTER,
        )

    @property
    def counter_name(self) -> str:
        c = self.token_counter
        return c if isinstance(c, str) else getattr(c, "name", None) or getattr(c, "__name__", repr(c))


@dataclass(frozen=True, slots=True)
class Reduction:
    """What one run of the policy did. The input is untouched; ``messages`` is new."""

    messages: tuple[Message, ...]
    token_counts: tuple[int, ...]
    """Tokens of each input message."""
    token_counts_after: tuple[int, ...]
    """Tokens of each output message."""
    total_tool_result_tokens: int
    triggered: bool
    recent_start_index: int | None
    cleared_indices: tuple[int, ...]
    statuses: tuple[MessageStatus, ...]
    config: ClearToolResultConfig = field(repr=False)
    offloads: tuple[OffloadRecord | None, ...] = field(default=(), repr=False)
    """Per message, what offloading did (empty when offloading was off)."""
    token_counts_original: tuple[int, ...] = field(default=(), repr=False)
    """Tokens of each input message before offloading (equals token_counts without it)."""

    @property
    def tokens_before(self) -> int:
        return sum(self.token_counts_original or self.token_counts)

    @property
    def tokens_after(self) -> int:
        return sum(self.token_counts_after)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def tool_result_count(self) -> int:
        return sum(1 for m in self.messages if m.role == "tool")


def _window_start(counts: Sequence[int], keep: int) -> int:
    """Walk back from the end; the first message that overflows ``keep`` is the start."""
    cum = 0
    for i in range(len(counts) - 1, -1, -1):
        c = counts[i]
        if cum + c > keep:
            return i
        cum += c
    return 0


def _statuses(
    messages: Sequence[Message],
    config: ClearToolResultConfig,
    triggered: bool,
    start: int,
    cleared: set[int] | frozenset[int],
    records: Sequence[OffloadRecord | None] = (),
) -> tuple[MessageStatus, ...]:
    ph = config.placeholder
    excluded = frozenset(config.exclude_tools)
    out = []
    for i, m in enumerate(messages):
        if m.role != "tool":
            out.append(MessageStatus.KEPT)
        elif i in cleared:
            out.append(MessageStatus.CLEARED)
        elif m.content == ph:
            out.append(MessageStatus.ALREADY_CLEARED)
        elif m.tool_name in excluded:
            out.append(MessageStatus.EXCLUDED)
        elif records and (r := records[i]) is not None and r.offloaded:
            out.append(MessageStatus.OFFLOADED)
        elif triggered and i >= start:
            out.append(MessageStatus.PROTECTED)
        else:
            out.append(MessageStatus.KEPT)
    return tuple(out)


def reduce_by_tokens(
    messages: Sequence[Message],
    config: ClearToolResultConfig | None = None,
    *,
    offloading: ToolResultOffloadingConfig | None = None,
    backend: StorageBackend | None = None,
) -> Reduction:
    """Run the policy once over ``messages`` (the context of one model call).

    With ``offloading``, tool results too large are first offloaded to ``backend`` (a
    ``MemoryBackend`` if none is given), as they would have been when they arrived.
    """
    config = config or ClearToolResultConfig()
    original = tuple(messages)
    records: tuple[OffloadRecord | None, ...] = ()
    msgs = original
    if offloading is not None:
        msgs, records = offload_messages(original, offloading, backend)
    counter = get_counter(config.token_counter)
    counts = count_tokens(msgs, counter)
    ph = config.placeholder

    total = 0
    tool_idx = []
    for i, m in enumerate(msgs):
        if m.role == "tool" and m.content != ph:
            total += counts[i]
            tool_idx.append(i)
    triggered = bool(msgs) and total > config.tool_result_token_threshold
    if not triggered:
        return Reduction(
            messages=msgs,
            token_counts=counts,
            token_counts_after=counts,
            total_tool_result_tokens=total,
            triggered=False,
            recent_start_index=None,
            cleared_indices=(),
            statuses=_statuses(msgs, config, False, 0, frozenset(), records),
            config=config,
            offloads=records,
            token_counts_original=count_tokens(original, counter) if records else counts,
        )

    start = _window_start(counts, config.keep_recent_tokens)
    excluded = frozenset(config.exclude_tools)
    cleared = tuple(i for i in tool_idx if i < start and msgs[i].tool_name not in excluded)
    out = list(msgs)
    after = list(counts)
    for i in cleared:
        new = msgs[i].with_content(ph)
        out[i] = new
        after[i] = count_tokens((new,), counter)[0]
    return Reduction(
        messages=tuple(out),
        token_counts=counts,
        token_counts_after=tuple(after),
        total_tool_result_tokens=total,
        triggered=True,
        recent_start_index=start,
        cleared_indices=cleared,
        statuses=_statuses(msgs, config, True, start, frozenset(cleared), records),
        config=config,
        offloads=records,
        token_counts_original=count_tokens(original, counter) if records else counts,
    )
