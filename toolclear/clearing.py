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

from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from typing import Any

from ._gc import paused_gc
from ._kept import KeptFor
from ._offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages
from .counters import DEFAULT_COUNTER, TokenCounter, count_tokens, counter_name, get_counter, is_builtin
from .errors import ConfigError
from .model import Message, MessageStatus

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_THRESHOLD",
    "ClearToolResultConfig",
    "Reduction",
    "SequenceIndex",
    "reduce_by_tokens",
    "sequence_index",
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
        return counter_name(self.token_counter)


class SequenceIndex:
    """What one message sequence needs for the policy, computed once per counter:
    token counts, their prefix sums and, per placeholder, the countable tool results.

    The last few sequences are kept (by identity), so moving a slider over the same
    transcript, or replaying it after a single pass, counts and scans nothing again.
    """

    __slots__ = ("seq", "counts", "prefix", "_tools", "_outputs", "_tool_positions")

    def __init__(self, seq: tuple[Message, ...], counts: tuple[int, ...]) -> None:
        self.seq = seq
        self.counts = counts
        self.prefix = (0, *accumulate(counts))
        self._tools: dict[str, tuple[list[int], int]] = {}
        self._outputs: OrderedDict[Any, tuple[Message, ...]] = OrderedDict()
        self._tool_positions: list[int] | None = None

    @property
    def tool_positions(self) -> list[int]:
        """Indices of every tool result (placeholder or not)."""
        if self._tool_positions is None:
            self._tool_positions = [i for i, m in enumerate(self.seq) if m.role == "tool"]
        return self._tool_positions

    def tools(self, placeholder: str) -> tuple[list[int], int]:
        """Indices of tool results not holding the placeholder, and their token total."""
        hit = self._tools.get(placeholder)
        if hit is None:
            seq, counts = self.seq, self.counts
            idx = [i for i, m in enumerate(seq) if m.role == "tool" and m.content != placeholder]
            hit = (idx, sum([counts[i] for i in idx]))
            if len(self._tools) > 8:
                self._tools.clear()
            self._tools[placeholder] = hit
        return hit

    def window_start(self, end: int, keep: int, lo: int = 0) -> int:
        return window_start(self.prefix, end, keep, lo)

    def output(self, cleared: tuple[int, ...], placeholder: str) -> tuple[Message, ...]:
        key = (placeholder, cleared)
        hit = self._outputs.get(key)
        if hit is None:
            out = list(self.seq)
            with paused_gc():
                for i in cleared:
                    out[i] = out[i].replaced(placeholder)
            hit = tuple(out)
            self._outputs[key] = hit
            while len(self._outputs) > 4:
                self._outputs.popitem(last=False)
        return hit


def window_start(prefix: Sequence[int], end: int, keep: int, lo: int = 0) -> int:
    """The reference's walk back from ``end`` over the prefix sums of the counts: the
    first message (from the end) that overflows ``keep`` starts the window; 0 when
    everything fits. Searched in [lo, end), which is exact whenever the answer is known
    to be >= lo."""
    start = bisect_left(prefix, prefix[end] - keep, lo, end) - 1
    return start if start >= lo else lo


_indexes: KeptFor[SequenceIndex] = KeptFor(4)


def sequence_index(messages: tuple[Message, ...], counter: TokenCounter) -> SequenceIndex:
    """The (cached) index of this very sequence for this counter."""
    return _indexes.get(messages, lambda: SequenceIndex(messages, count_tokens(messages, counter)),
                        getattr(counter, "name", counter))


def cleared_counter(counter: TokenCounter, placeholder: str) -> Callable[[Sequence[Message], Sequence[int]], list[int]]:
    """A function giving the tokens of listed messages once cleared. A built-in counter
    sees only content and arguments, so a cleared result without tool calls always
    counts the same: it is counted once."""
    if is_builtin(counter):
        fixed = count_tokens((Message(role="tool", content=placeholder),), counter)[0]

        def builtin(messages: Sequence[Message], indices: Sequence[int]) -> list[int]:
            out = [fixed] * len(indices)
            for k, i in enumerate(indices):
                if messages[i].tool_calls:
                    out[k] = count_tokens((messages[i].replaced(placeholder),), counter)[0]
            return out

        return builtin

    def custom(messages: Sequence[Message], indices: Sequence[int]) -> list[int]:
        return list(count_tokens([messages[i].replaced(placeholder) for i in indices], counter))

    return custom


def counts_after(
    counts: tuple[int, ...], seen: Sequence[Message], cleared: Sequence[int], config: ClearToolResultConfig
) -> tuple[int, ...]:
    """Token counts once the listed messages hold the placeholder."""
    if not cleared:
        return counts
    after = list(counts)
    counter = get_counter(config.token_counter)
    for i, n in zip(cleared, cleared_counter(counter, config.placeholder)(seen, cleared)):
        after[i] = n
    return tuple(after)


def statuses_of(
    messages: Sequence[Message],
    config: ClearToolResultConfig,
    triggered: bool,
    start: int,
    cleared: Sequence[int],
    records: Sequence[OffloadRecord | None] = (),
    tools: Sequence[int] | None = None,
) -> tuple[MessageStatus, ...]:
    """One status per message, in this order of precedence: cleared, already cleared,
    excluded, offloaded, protected (in the window), kept (written lowest first)."""
    ph = config.placeholder
    out = [MessageStatus.KEPT] * len(messages)
    if tools is None:
        tools = [i for i, m in enumerate(messages) if m.role == "tool"]
    if triggered:
        for i in tools[bisect_left(tools, start):]:
            out[i] = MessageStatus.PROTECTED
    if records:
        for r in records:
            if r is not None and r.offloaded:
                out[r.index] = MessageStatus.OFFLOADED
    if config.exclude_tools:
        excluded = frozenset(config.exclude_tools)
        for i in tools:
            if messages[i].tool_name in excluded:
                out[i] = MessageStatus.EXCLUDED
    for i in tools:
        if messages[i].content == ph:
            out[i] = MessageStatus.ALREADY_CLEARED
    for i in cleared:
        out[i] = MessageStatus.CLEARED
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Reduction:
    """What one run of the policy did. The input is untouched; ``messages`` is new.

    ``statuses`` and ``token_counts_after`` are worked out on first use.
    """

    messages: tuple[Message, ...]
    token_counts: tuple[int, ...]
    """Tokens of each input message (as the policy saw it, after any offloading)."""
    total_tool_result_tokens: int
    triggered: bool
    recent_start_index: int | None
    cleared_indices: tuple[int, ...]
    config: ClearToolResultConfig = field(repr=False)
    offloads: tuple[OffloadRecord | None, ...] = field(default=(), repr=False)
    """Per message, what offloading did (empty when offloading was off)."""
    token_counts_original: tuple[int, ...] = field(default=(), repr=False)
    """Tokens of each input message before offloading (equals token_counts without it)."""
    _seen: tuple[Message, ...] = field(default=(), repr=False)
    _index: SequenceIndex | None = field(default=None, repr=False)

    @cached_property
    def statuses(self) -> tuple[MessageStatus, ...]:
        """Per message: protected, cleared, already cleared, excluded, offloaded or kept."""
        return statuses_of(self._seen, self.config, self.triggered, self.recent_start_index or 0,
                           self.cleared_indices, self.offloads,
                           self._index.tool_positions if self._index is not None else None)

    @cached_property
    def token_counts_after(self) -> tuple[int, ...]:
        """Tokens of each output message."""
        return counts_after(self.token_counts, self._seen, self.cleared_indices, self.config)

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
    ix = sequence_index(msgs, counter)
    counts = ix.counts
    before = count_tokens(original, counter) if records else counts
    ph = config.placeholder
    tool_idx, total = ix.tools(ph)
    triggered = bool(msgs) and total > config.tool_result_token_threshold
    if not triggered:
        return Reduction(msgs, counts, total, False, None, (), config, records, before, msgs, ix)
    start = ix.window_start(len(msgs), config.keep_recent_tokens)
    candidates = tool_idx[: bisect_left(tool_idx, start)]
    if config.exclude_tools:
        excluded = frozenset(config.exclude_tools)
        cleared = tuple([i for i in candidates if msgs[i].tool_name not in excluded])
    else:
        cleared = tuple(candidates)
    return Reduction(ix.output(cleared, ph), counts, total, True, start, cleared, config, records, before, msgs, ix)
