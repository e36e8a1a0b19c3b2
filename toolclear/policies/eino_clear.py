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

from array import array
from bisect import bisect_left
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from typing import Any

from .._gc import paused_gc
from .._kept import KeptFor
from ..counters import (
    DEFAULT_COUNTER,
    TokenCounter,
    count_tokens,
    counter_name,
    get_counter,
    is_builtin,
    prefix_sums,
)
from ..errors import ConfigError
from ..model import COPIES_KEPT_ELSEWHERE, Message, MessageStatus
from ..result import Result, Step, Trace
from ._eino_steps import EinoSteps, window_start
from ._engine import model_calls
from ._export import go_int, go_str
from ._spec import Knob, Option, PolicySpec, Preset
from .offload import OffloadRecord, StorageBackend, ToolResultOffloadingConfig, offload_messages

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_THRESHOLD",
    "SPEC",
    "ClearToolResultConfig",
    "EinoClearEngine",
    "SequenceIndex",
    "fast_replay",
    "go_snippet",
    "model_calls",
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
        self.prefix = prefix_sums(counts)  # the array every replay of these counts shares
        self._tools: dict[Any, Any] = {}  # per placeholder: (indices, total), the prefix, the cleared
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

    def tool_prefix(self, placeholder: str) -> Sequence[int]:
        """``out[i]``: the tokens of ``tools(placeholder)`` before message i (kept: every
        replay of a slider move asks, 8 ms at 100,000 messages)."""
        key = ("prefix", placeholder)
        hit = self._tools.get(key)
        if hit is None:
            weights = [0] * len(self.seq)
            counts = self.counts
            for i in self.tools(placeholder)[0]:
                weights[i] = counts[i]
            hit = (array("q", accumulate(weights, initial=0)), 0)
            self._tools[key] = hit
        return hit[0]

    def already_cleared(self, placeholder: str) -> list[int]:
        """The tool results that hold the placeholder already (kept, as ``tools`` is)."""
        key = ("already", placeholder)
        hit = self._tools.get(key)
        if hit is None:
            seq = self.seq
            hit = ([i for i in self.tool_positions if seq[i].content == placeholder], 0)
            self._tools[key] = hit
        return hit[0]

    def tool_sum(self, placeholder: str, k: int) -> int:
        """The tokens of the first ``k`` of ``tools(placeholder)``."""
        key = ("sums", placeholder)
        sums = self._tools.get(key)
        if sums is None:
            idx = self.tools(placeholder)[0]
            sums = (list(accumulate((self.counts[i] for i in idx), initial=0)), 0)
            self._tools[key] = sums
        return sums[0][k]

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


_indexes: KeptFor[SequenceIndex] = KeptFor(4)


def _forget_outputs(messages: Sequence[Message]) -> None:
    for ix in _indexes.values_for(messages):
        ix._outputs.clear()


COPIES_KEPT_ELSEWHERE.append(_forget_outputs)


def sequence_index(messages: tuple[Message, ...], counter: TokenCounter) -> SequenceIndex:
    """The (cached) index of this very sequence for this counter."""
    return _indexes.get(messages, lambda: SequenceIndex(messages, count_tokens(messages, counter)),
                        getattr(counter, "name", counter))


_calling_kept: KeptFor[frozenset[int]] = KeptFor(8)


def _calling(messages: Sequence[Message]) -> frozenset[int]:
    """The messages that carry tool calls, found once per transcript."""
    return _calling_kept.get(messages, lambda: frozenset(i for i, m in enumerate(messages) if m.tool_calls))


def cleared_counter(counter: TokenCounter, placeholder: str) -> Callable[[Sequence[Message], Sequence[int]], list[int]]:
    """A function giving the tokens of listed messages once cleared. A built-in counter
    sees only content and arguments, so a cleared result without tool calls always
    counts the same: it is counted once."""
    if is_builtin(counter):
        fixed = count_tokens((Message(role="tool", content=placeholder),), counter)[0]
        seen: list[Any] = [None, frozenset()]  # the last run asked about, and its calling messages

        def builtin(messages: Sequence[Message], indices: Sequence[int]) -> list[int]:
            out = [fixed] * len(indices)
            if seen[0] is not messages:  # a replay asks at every clearing step: looked up once
                seen[0], seen[1] = messages, _calling(messages)
            hits = seen[1].intersection(indices) if seen[1] else None
            if hits:  # the rare results that carry tool calls count them too
                for k, i in enumerate(indices):
                    if i in hits:
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
    records: Sequence[OffloadRecord | None],
    tools: Sequence[int],
    already: Sequence[int],
) -> tuple[MessageStatus, ...]:
    """One status per message, in this order of precedence: cleared, already cleared,
    excluded, offloaded, protected (in the window), kept (written lowest first).
    ``tools``: every tool result; ``already``: those holding the placeholder (both as the
    sequence's index keeps them)."""
    out = [MessageStatus.KEPT] * len(messages)
    put = out.__setitem__  # the long stretches are written by map, not a Python loop
    if triggered:
        deque(map(put, tools[bisect_left(tools, start):], repeat(MessageStatus.PROTECTED)), maxlen=0)
    if records:
        for r in records:
            if r is not None and r.offloaded:
                out[r.index] = MessageStatus.OFFLOADED
    if config.exclude_tools:
        excluded = frozenset(config.exclude_tools)
        for i in tools:
            if messages[i].tool_name in excluded:
                out[i] = MessageStatus.EXCLUDED
    for i in already:
        out[i] = MessageStatus.ALREADY_CLEARED
    deque(map(put, cleared, repeat(MessageStatus.CLEARED)), maxlen=0)
    return tuple(out)


"""The earlier name of a single pass's result: one ``Result`` type for every policy and mode."""


def _prepared(messages: Sequence[Message], config: ClearToolResultConfig | None,
              offloading: ToolResultOffloadingConfig | None, backend: StorageBackend | None,
              ) -> tuple[ClearToolResultConfig, tuple[Message, ...], tuple[OffloadRecord | None, ...],
                         tuple[Message, ...], TokenCounter, Any]:
    """What a pass and a replay both start from: the config, the messages as given and
    as the model saw them after offloading (with its records), the counter, the index."""
    config = config or ClearToolResultConfig()
    original = tuple(messages)
    records: tuple[OffloadRecord | None, ...] = ()
    msgs = original
    if offloading is not None:
        msgs, records = offload_messages(original, offloading, backend)
    counter = get_counter(config.token_counter)
    return config, original, records, msgs, counter, sequence_index(msgs, counter)


def reduce_by_tokens(
    messages: Sequence[Message],
    config: ClearToolResultConfig | None = None,
    *,
    offloading: ToolResultOffloadingConfig | None = None,
    backend: StorageBackend | None = None,
) -> Result:
    """Run the policy once over ``messages`` (the context of one model call): a
    ``Result`` in mode "single pass", its one step the call after the last message.

    With ``offloading``, tool results too large are first offloaded to ``backend`` (a
    ``MemoryBackend`` if none is given), as they would have been when they arrived.
    """
    config, original, records, msgs, counter, ix = _prepared(messages, config, offloading, backend)
    counts = ix.counts
    before = count_tokens(original, counter) if records else counts
    ph = config.placeholder
    tool_idx, total = ix.tools(ph)
    triggered = bool(msgs) and total > config.tool_result_token_threshold
    n = len(msgs)
    start: int | None = None
    cleared: tuple[int, ...] = ()
    if triggered:
        start = ix.window_start(n, config.keep_recent_tokens)
        candidates = tool_idx[: bisect_left(tool_idx, start)]
        if config.exclude_tools:
            excluded = frozenset(config.exclude_tools)
            cleared = tuple([i for i in candidates if msgs[i].tool_name not in excluded])
        else:
            cleared = tuple(candidates)
    after_cleared = cleared_counter(counter, ph)(msgs, cleared) if cleared else []
    before_cleared = ix.tool_sum(ph, len(cleared)) if not config.exclude_tools else sum(
        map(counts.__getitem__, cleared))
    saved = before_cleared - sum(after_cleared)
    cleared_at: list[int | None] = [None] * n
    deque(map(cleared_at.__setitem__, cleared, repeat(n)), maxlen=0)  # each cleared one: at the one call

    def after() -> tuple[int, ...]:
        out = list(counts)
        deque(map(out.__setitem__, cleared, after_cleared), maxlen=0)
        return tuple(out)
    # the one step: the call after the last message, as a replay's final step
    unreduced = ix.prefix[n] if before is counts else sum(before)
    step = Step(n, cleared, ix.prefix[n] - saved, unreduced, False, total, triggered, start)
    return Result(
        messages=ix.output(cleared, ph) if cleared else msgs, steps=(step,), token_counts=counts,
        cleared_at=tuple(cleared_at), config=config, offloads=records, token_counts_original=before,
        mode="single pass", _seen=msgs, _changed=cleared, _counts_after=after,
        _statuses=lambda: statuses_of(msgs, config, triggered, start or 0, cleared, records, ix.tool_positions,
                                      ix.already_cleared(config.placeholder)),
    )


# ------------------------------------------------------------------ the replay
# The policy as an agent runs it: before every model call, on the history so far.
# 
# What one call clears stays cleared for every later call. ``replay`` gives exactly the
# result of calling ``reduce_by_tokens`` step by step (the tests prove it), in O(n) after
# counting instead of O(n^2), because of two facts of the reference:
# 
# * the window start never moves left from one call to the next (the messages between
#   the last start and the last call are untouched and new ones only add tokens), so
#   every message is cleared at most once and only the ones in [last start, new start)
#   need looking at;
# * inside the window nothing has changed, so the walk back is a pointer moving forward
#   over prefix sums of the original counts: O(n) for the whole run.


def fast_replay(
    messages: Sequence[Message],
    config: ClearToolResultConfig | None = None,
    *,
    offloading: ToolResultOffloadingConfig | None = None,
    backend: StorageBackend | None = None,
) -> Result:
    """Simulate the policy before every model call of a whole run.

    With ``offloading``, each tool result is first offloaded as it arrives (written to
    ``backend``, a ``MemoryBackend`` if none is given) and clearing then runs on what the
    model would have seen, as eino's combined middleware does.
    """
    config, original, records, msgs, counter, ix = _prepared(messages, config, offloading, backend)
    counts, prefix = ix.counts, ix.prefix
    n = len(msgs)
    ph = config.placeholder
    keep = config.keep_recent_tokens
    threshold = config.tool_result_token_threshold
    excluded = frozenset(config.exclude_tools)
    tool_idx, _ = ix.tools(ph)
    clearable = [i for i in tool_idx if msgs[i].tool_name not in excluded] if excluded else tool_idx
    tool_prefix = ix.tool_prefix(ph)  # countable tool-result tokens before each index

    n_clearable = len(clearable)
    cleared_at: list[int | None] = [None] * n
    newly_all: list[int] = []
    frontier = 0  # every clearable message below this is cleared already
    pos = 0  # clearable[:pos] are cleared
    cleared_tool_tokens = 0
    saved = 0
    after_count = cleared_counter(counter, ph)
    calls = model_calls(msgs)
    at = array("q")  # the steps that cleared something, for the Trace
    at_low = array("q")
    at_high = array("q")
    at_saved = array("q")
    at_cleared = array("q")  # the tool-result tokens cleared so far, at each of them
    each_saved = array("q")  # the tokens saved once each of newly_all is cleared (a running total)

    fired = bytearray()  # per call: did its trigger fire (the rest of each Step follows: EinoSteps)
    fire = fired.append
    with paused_gc():  # the newly cleared stretches: small tuples, no cycles
        for call in calls:
            if call > 0 and tool_prefix[call] - cleared_tool_tokens > threshold:
                # the start is the last i in [frontier, call) whose suffix overflows keep;
                # it never moves left, so walking a pointer forward is O(n) over the run
                start = frontier
                limit = prefix[call] - keep
                while start + 1 < call and prefix[start + 1] < limit:
                    start += 1
                end = pos
                while end < n_clearable and clearable[end] < start:
                    end += 1
                if end > pos:
                    newly = tuple(clearable[pos:end])
                    pos = end
                    for i in newly:
                        cleared_at[i] = call
                        cleared_tool_tokens += counts[i]
                    newly_all.extend(newly)
                    for i, c in zip(newly, after_count(msgs, newly)):
                        saved += counts[i] - c
                        each_saved.append(saved)
                    at.append(len(fired))
                    at_cleared.append(cleared_tool_tokens)
                    at_low.append(newly[0])
                    at_high.append(newly[-1])
                    at_saved.append(saved)
                frontier = start
                fire(1)
            else:
                fire(0)

    changed = tuple(newly_all)  # ascending: each step clears the next stretch of ``clearable``
    final = ix.output(changed, ph)
    trace = Trace(array("q", calls), prefix, at, at_low, at_high, at_saved, array("q", newly_all), each_saved)
    all_steps = EinoSteps(trace, fired, tool_prefix, keep, at_cleared)
    return Result(
        messages=final,
        steps=all_steps,
        token_counts=counts,
        cleared_at=tuple(cleared_at),
        config=config,
        offloads=records,
        token_counts_original=count_tokens(original, counter) if records else counts,
        _seen=msgs,
        _trace=trace,
        _traced=all_steps,
        _changed=changed,
        _statuses=lambda: statuses_of(msgs, config, bool(fired and fired[-1]),
                                      all_steps[-1].recent_start_index or 0 if fired else 0, changed, records,
                                      ix.tool_positions, ix.already_cleared(ph)),
        _counts_after=lambda: counts_after(counts, msgs, changed, config),
    )


def go_snippet(
    config: ClearToolResultConfig, offloading: ToolResultOffloadingConfig | None = None
) -> str:
    """eino Go: ``ClearToolResultConfig`` alone, or ``ToolResultConfig`` with offloading."""
    notes: list[str] = []
    excl = ", ".join(go_str(n) for n in config.exclude_tools)
    threshold = go_int(config.tool_result_token_threshold, DEFAULT_THRESHOLD, "threshold", notes)
    keep = go_int(config.keep_recent_tokens, DEFAULT_KEEP_RECENT_TOKENS, "keep", notes)
    if config.placeholder == "":
        notes.append(f"// placeholder: eino reads \"\" as {go_str(DEFAULT_PLACEHOLDER)}")
    counter = ""
    if config.counter_name != "eino":
        counter = f"\t// counted here with {config.counter_name}; pass a matching TokenCounter\n"
    if offloading is None:
        body = (
            "cfg := &reduction.ClearToolResultConfig{\n"
            f"\tToolResultTokenThreshold:   {threshold},\n"
            f"\tKeepRecentTokens:           {keep},\n"
            f"\tClearToolResultPlaceholder: {go_str(config.placeholder)},\n"
            f"\tExcludeTools:               []string{{{excl}}},\n"
            f"{counter}"
            "}\n"
            "mw, err := reduction.NewClearToolResult(ctx, cfg)\n"
        )
    else:
        limit = go_int(offloading.offloading_token_limit, 20000, "offloading limit", notes)
        body = (
            "cfg := &reduction.ToolResultConfig{\n"
            f"\tClearingTokenThreshold:     {threshold},\n"
            f"\tKeepRecentTokens:           {keep},\n"
            f"\tClearToolResultPlaceholder: {go_str(config.placeholder)},\n"
            f"\tExcludeTools:               []string{{{excl}}},\n"
            f"\tOffloadingTokenLimit:       {limit}, // offloads results over {4 * offloading.offloading_token_limit:,} tokens\n"
            f"\tReadFileToolName:           {go_str(offloading.read_file_tool_name)},\n"
            "\tBackend:                    myBackend, // your storage\n"
            f"{counter}"
            "}\n"
            "mw, err := reduction.NewChatModelAgentMiddleware(ctx, cfg)\n"
        )
    return "\n".join(notes + [body]).rstrip() + "\n"


class EinoClearEngine:
    """eino's clear policy as an engine like the others', advanced call by call over a
    growing raw history (the live adapters hand it the agent's list). The replay above
    is the fast path; a test holds the two equal, call by call. The window
    start (over the raw counts: inside the window nothing was cleared) and the clearing
    frontier only move forward, so each result is cleared once. With the edit kept
    (``persist``) the trigger counts the results not cleared yet, as ``toolclear.replay``
    does (proven equal to the policy applied call by call on the kept history); per
    call it counts them all, each call seeing the raw history."""

    def __init__(self, msgs: Sequence[Message], config: Any, persist: bool = True) -> None:
        self.msgs, self.config, self.persist = msgs, config, persist
        self.counter = get_counter(config.token_counter)
        self.counts: list[int] = []
        self.prefix = [0]
        self.tools: list[int] = []  # tool results not holding the placeholder
        self.tool_prefix = [0]  # their tokens before each index
        self.pos = 0  # self.tools[:pos] are cleared (or excluded)
        self.frontier = 0  # the window start never moves left
        self.cleared = 0  # tool tokens cleared so far

    def advance(self, length: int) -> dict[int, Message | None]:
        c, msgs, prefix, tools = self.config, self.msgs, self.prefix, self.tools
        have = len(self.counts)
        if length > have:
            new = count_tokens(msgs[have:length], self.counter)
            self.counts += new
            for i, n in enumerate(new, have):
                m = msgs[i]
                prefix.append(prefix[-1] + n)
                countable = m.role == "tool" and m.content != c.placeholder
                self.tool_prefix.append(self.tool_prefix[-1] + (n if countable else 0))
                if countable:
                    tools.append(i)
        total = self.tool_prefix[length] - (self.cleared if self.persist else 0)
        if not length or total <= c.tool_result_token_threshold:
            return {}
        start = window_start(prefix, length, c.keep_recent_tokens, self.frontier)
        end = bisect_left(tools, start, self.pos)
        excluded = frozenset(c.exclude_tools)
        newly = [t for t in tools[self.pos:end] if msgs[t].tool_name not in excluded]
        self.pos, self.frontier = end, start
        self.cleared += sum(self.counts[t] for t in newly)
        return {t: msgs[t].replaced(c.placeholder) for t in newly}

    def status(self, index: int, changed: bool) -> MessageStatus:
        return MessageStatus.CLEARED if changed else MessageStatus.KEPT


def _engine(messages: Sequence[Message], config: ClearToolResultConfig, counter: TokenCounter, *,
            persist: bool = True, **_: object) -> EinoClearEngine:
    return EinoClearEngine(messages, config, persist)


def _spec() -> PolicySpec:
    return PolicySpec(
        name="eino",
        config=ClearToolResultConfig,
        engine=_engine,
        presets=(Preset(
            "eino", "eino clear-tool-result",
            "eino's clear-tool-result: once the tool results add up to more than the threshold, every result "
            "outside the protected window of recent tokens becomes the placeholder; what it clears stays cleared.",
            ClearToolResultConfig,
            knobs=(Knob("tool_result_token_threshold", "Tool-result token threshold", "tool_tokens",
                        "clearing starts once the tool results add up to more than this."),
                   Knob("keep_recent_tokens", "Keep-recent token budget", "tokens",
                        "the protected window: the most recent messages within this many tokens are never "
                        "cleared.")),
        ),),
        aliases={"threshold": "tool_result_token_threshold", "keep": "keep_recent_tokens", "exclude": "exclude_tools",
                 "counter": "token_counter"},
        sticky=True,
        describe=lambda c: f"eino {c.tool_result_token_threshold:,}/{c.keep_recent_tokens:,}",
        exports=("go",),
        steps_counter=lambda config: config.token_counter,
        fast_replay=fast_replay,
        fast_apply=reduce_by_tokens,
        offloads=True,
        window=True,
        changed_noun="tool result(s) cleared",
        options=(Option("exclude_tools", "Never clear these tools", "tools", key="opt_exclude"),
                 Option("placeholder", "Placeholder", "text", "What a cleared tool result holds afterwards.",
                        key="opt_ph")),
        why_nothing=lambda c, sizes: (
            f"the tool results hold {sizes['tool_tokens']:,} tokens, not more than the threshold "
            f"{c.tool_result_token_threshold:,}. The threshold only decides *whether* clearing happens; "
            + (f"set it below {sizes['tool_tokens']:,} to see what the keep budget would clear."
               if sizes["tool_tokens"] else "this conversation has no tool results to clear.")
            if sizes["tool_tokens"] <= c.tool_result_token_threshold else
            f"every tool result outside the protected window ({c.keep_recent_tokens:,} tokens) is already the "
            "placeholder or excluded, or the window holds them all."),
    )


SPEC = _spec()
"""eino's clear-tool-result, as the registry lists it."""
