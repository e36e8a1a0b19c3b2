"""What a run costs in money, with the provider's prompt cache, call by call.

Every provider caches the prompt prefix, and clearing an old tool result changes it:
the next call pays to write (Anthropic) or to send uncached (OpenAI, Gemini) the rest
of the prompt again. ``cost`` prices each model call of a ``Result`` (any policy) and
the same run without the policy; ``recorded_cost`` prices what a log recorded.

The cache, per kind:

* ``anthropic``: each call writes its whole prompt as a cache entry (a breakpoint at its
  end, as Claude Code and automatic caching do); a later call reads the longest earlier
  entry that is still a prefix of its prompt and still alive (TTL, refreshed on a hit),
  and writes the rest at the write price. Prompts under ``min_cacheable`` are neither
  read nor written.
* ``openai``: automatic prefix caching: the longest prefix shared with an earlier prompt
  still alive, in 128-token steps, from 1,024 tokens; no write fee, the rest uncached.
* ``gemini``: implicit caching: the same, without the 128-token steps.
* ``none``: everything uncached.

Times come from the log's recorded usage where it has them; where it does not, calls
are taken to follow each other within the TTL (said in ``Cost.assumptions``).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from itertools import accumulate, chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ._gc import paused_gc
from ._kept import KeptFor
from .calibration import MAX_SCALE, MIN_SCALE, cut_before, fit_line, prefix_sums
from .errors import ConfigError
from .model import Message
from .prices import MAX_PRICE, PRICING, CacheKind, Pricing, pricing_for, resolve
from .result import Result

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_PRICE", "PRICING", "CacheKind", "CallCost", "Cost", "Pricing", "cost", "pricing_for", "recorded_cost"]

COMPACTION_TEXT = "This session is being continued from a previous conversation"
"""How Claude Code's compaction summary starts: calls after it no longer send what came before."""


class CallCost(NamedTuple):
    """One model call, priced."""

    call_index: int
    prompt_tokens: int
    uncached_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    dollars: float
    input_dollars: float
    cache_break: bool = False
    break_dollars: float = 0.0
    """What the break cost: this call's input dollars less what it would have cost had
    the previous prompt still been its prefix."""


_COLUMNS = CallCost._fields


@dataclass(frozen=True)
class Cost:
    """A run priced call by call, with the policy and without it.

    Held as columns (numpy arrays when numpy is there, else lists); ``calls`` and
    ``calls_without_policy`` give one ``CallCost`` row per model call."""

    columns: Mapping[str, Any]
    columns_without_policy: Mapping[str, Any]
    pricing: Pricing
    assumptions: tuple[str, ...] = ()
    overhead_tokens: int = 0
    scale: float = 1.0
    calibrated_on: int = 0
    """How many calls' recorded usage the overhead and scale were fitted on (0: none)."""
    _result: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def losses(self) -> Any:
        """What the policy lost (``toolclear.losses`` of the priced replay), found when
        first asked: pricing alone never pays for it."""
        from .lost import losses

        return losses(self._result)

    @property
    def refetch_tokens(self) -> int:
        """The needed results' tokens: what the agent re-reads to get them back once."""
        return int(self.losses.refetch_tokens) if self._result is not None else 0

    @property
    def refetch_dollars(self) -> float:
        """Each needed result re-read once, as uncached input at the run's price."""
        return self.refetch_tokens * self.scale * self.pricing.input / 1e6

    @property
    def net_dollars_saved(self) -> float:
        """The saving less what re-fetching the needed results costs."""
        return self.dollars_saved - self.refetch_dollars

    @cached_property
    def calls(self) -> tuple[CallCost, ...]:
        return _rows(self.columns)

    @cached_property
    def calls_without_policy(self) -> tuple[CallCost, ...]:
        return _rows(self.columns_without_policy)

    def _sum(self, key: str, without: bool = False) -> float:
        col = (self.columns_without_policy if without else self.columns).get(key, ())
        return float(sum(col)) if isinstance(col, list) else float(col.sum()) if len(col) else 0.0

    @property
    def dollars(self) -> float:
        return self._sum("dollars")

    @property
    def input_dollars(self) -> float:
        return self._sum("input_dollars")

    @property
    def output_dollars(self) -> float:
        return self.dollars - self.input_dollars

    @property
    def dollars_without_policy(self) -> float:
        return self._sum("dollars", True)

    @property
    def input_dollars_without_policy(self) -> float:
        return self._sum("input_dollars", True)

    @property
    def dollars_saved(self) -> float:
        """Positive when the policy saves money; negative when it costs more than doing nothing."""
        return self.dollars_without_policy - self.dollars

    def totals(self, without_policy: bool = False) -> dict[str, float]:
        return {k: self._sum(k, without_policy) for k in (
            "uncached_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "dollars", "input_dollars")}

    @property
    def table(self) -> pd.DataFrame:
        """One row per call: the policy's tokens and dollars, and the same without it."""
        import pandas as pd

        df = pd.DataFrame({k: self.columns[k] for k in _COLUMNS})
        if len(self.columns_without_policy.get("dollars", ())):
            df["dollars_without_policy"] = self.columns_without_policy["dollars"]
        return df


def _rows(columns: Mapping[str, Any]) -> tuple[CallCost, ...]:
    cols = [columns[k] for k in _COLUMNS]
    out = []
    for values in zip(*cols):
        out.append(CallCost(*(v.item() if hasattr(v, "item") else v for v in values)))
    return tuple(out)


def _columns(rows: Sequence[CallCost]) -> dict[str, list[Any]]:
    return {k: [getattr(r, k) for r in rows] for k in _COLUMNS}


def _timestamp(m: Message) -> float | None:
    stamp = m.usage.timestamp if m.usage is not None else ""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _Fenwick:
    """Prefix sums of the tokens of the messages as the current call sees them."""

    def __init__(self, values: Sequence[int]) -> None:
        self.n = len(values)
        self.tree = [0] * (self.n + 1)
        self.values = list(values)
        for i, v in enumerate(values):
            j = i + 1
            while j <= self.n:
                self.tree[j] += v
                j += j & -j

    def set(self, i: int, v: int) -> None:
        d = v - self.values[i]
        if not d:
            return
        self.values[i] = v
        j = i + 1
        while j <= self.n:
            self.tree[j] += d
            j += j & -j

    def prefix(self, i: int) -> int:
        s, j = 0, i
        while j > 0:
            s += self.tree[j]
            j -= j & -j
        return s


def compactions_of(messages: Sequence[Message]) -> tuple[int, ...]:
    """Where the log's agent compacted its context (Claude Code's summary messages)."""
    return tuple(i for i, m in enumerate(messages) if m.role == "user" and m.content.startswith(COMPACTION_TEXT))


class _Cache:
    """The entries one provider's cache holds over a run."""

    def __init__(self, pricing: Pricing, overhead: int) -> None:
        self.p = pricing
        self.entries: list[tuple[int, int, float | None]] = []  # (end message index, prompt tokens, last use)
        self.base = overhead  # system prompt and tools: a prefix of every prompt
        self.base_used: float | None = None
        self.base_alive = False
        self.sent = False
        self.last: float | None = None  # when the last prompt was sent (openai, gemini)

    def _alive(self, last: float | None, now: float | None) -> bool:
        return last is None or now is None or now - last <= self.p.ttl_seconds

    def invalidate_from(self, index: int) -> None:
        """A message at ``index`` changed: entries that end after it are no longer prefixes."""
        while self.entries and self.entries[-1][0] > index:
            self.entries.pop()

    def call(self, end: int, prompt: int, shared: int, now: float | None,
             cap: int | None = None) -> tuple[int, int, int]:
        """(uncached, write, read) for a prompt of ``prompt`` tokens ending at message
        ``end``; ``shared`` is its common prefix with the last prompt (openai, gemini);
        ``cap``: the log's cache held only that much at this call (``cache_resets``)."""
        p = self.p
        if p.cache == "none":
            return prompt, 0, 0
        while self.entries and not self._alive(self.entries[-1][2], now):
            self.entries.clear()
        if cap is not None:
            self.entries.clear()
        hit = self.entries[-1][1] if self.entries else 0
        if self.base and self._alive(self.base_used, now) and self.base_alive:
            hit = max(hit, self.base)
        if cap is not None:
            hit = min(hit, cap)
        if p.cache == "anthropic":
            if prompt < p.min_cacheable:
                return prompt, 0, 0
            read = min(hit, prompt) if hit >= p.min_cacheable else 0  # a prompt shorter than the entry: thinking
            self.entries.append((end, prompt, now))
            self.base_used, self.base_alive = now, True
            return 0, prompt - read, read
        # prefix caching matches any prefix of the last prompt while it lives
        if self.sent:
            common = shared if self._alive(self.last, now) else 0
        else:
            common = self.base if self.base_alive else 0  # a warm start (calibration)
        self.sent, self.last = True, now
        if cap is not None:
            common = min(common, cap)
        if p.cache == "openai":
            common = (common // 128) * 128
        read = min(common, prompt) if common >= p.min_cacheable and prompt >= p.min_cacheable else 0
        self.entries.append((end, prompt, now))
        self.base_used, self.base_alive = now, True
        return prompt - read, 0, read


def _output_tokens(m: Message, count: int, scale: float) -> int:
    if m.usage is not None and (m.usage.output_tokens or m.usage.prompt_tokens):
        return m.usage.output_tokens
    return round(count * scale)


def _price_loop(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
                cuts: Sequence[int], warm: int = 0, resets: Mapping[int, int] | None = None,
                kept: ThinkingKept = "all") -> dict[str, list[Any]]:
    return _columns(_price_run(result, pricing, overhead, scale, with_policy, cuts, warm, resets, kept))


def _price_run(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
               cuts: Sequence[int], warm: int = 0, resets: Mapping[int, int] | None = None,
               kept: ThinkingKept = "all") -> tuple[CallCost, ...]:
    """The reference: one call at a time, the cache's entries kept as a stack."""
    steps = result.model_call_steps
    msgs = result.messages
    log = _log_of(result)  # each call's time and output as recorded (a policy may rebuild the message)
    counts = result.token_counts
    after = result.token_counts_after
    tree = _Fenwick(counts)
    thinking = _thinking_facts(msgs, counts) if kept != "all" else None
    cache_ = _Cache(pricing, overhead)
    if warm:  # the first call found this much already cached (an earlier session's system prompt)
        cache_.base, cache_.base_alive = min(warm, overhead) or warm, True
    out: list[CallCost] = []
    prev_end = -1
    prev_cut = 0
    prev_prompt = 0
    cut_pos = 0
    for step in steps:
        end = step.call_index
        while cut_pos < len(cuts) and cuts[cut_pos] < end:
            cut_pos += 1
        cut = cuts[cut_pos - 1] if cut_pos else 0
        first_change = end
        if with_policy and step.changed_indices:
            for i in step.changed_indices:
                tree.set(i, after[i] if result.cleared_at[i] is not None else counts[i])
            first_change = min(step.changed_indices)
        if cut != prev_cut:
            cache_.invalidate_from(-1)
            prev_end = -1
        elif with_policy and step.changed_indices:
            cache_.invalidate_from(first_change)
        base = tree.prefix(cut)
        # the step's own count of what it sent (exact); the tree only finds prefixes
        body = (step.context_tokens if with_policy else step.context_tokens_unreduced) - base
        body -= _not_sent(thinking, kept, cut, end, end)
        prompt = overhead + round(body * scale)
        shared_end = min(prev_end, first_change) if prev_end >= 0 else cut
        if prev_end >= 0 and first_change >= prev_end:
            shared = prev_prompt  # nothing the last call sent changed: all of it is a prefix
        else:
            upto = max(shared_end, cut)
            shared = overhead + round((tree.prefix(upto) - base - _not_sent(thinking, kept, cut, end, upto)) * scale)
        now = _timestamp(log[end]) if end < len(log) else None
        uncached, write, read = cache_.call(end, prompt, shared, now, resets.get(end) if resets else None)
        output = _output_tokens(log[end], counts[end], scale) if end < len(log) else 0
        at = pricing.for_prompt(prompt)
        input_dollars = at.dollars(uncached, write, read, 0)
        broke = bool(with_policy and step.cache_break)
        break_dollars = 0.0
        if broke and prev_end >= 0:
            lost = max(0, prev_prompt - read)  # what would have been read had the prefix stayed
            price = at.cache_write if at.cache == "anthropic" else at.input
            break_dollars = lost * (price - at.cache_read) / 1e6
        out.append(CallCost(end, prompt, uncached, write, read, output,
                            input_dollars + at.dollars(0, 0, 0, output), input_dollars, broke, break_dollars))
        prev_end, prev_cut, prev_prompt = end, cut, prompt
    return tuple(out)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with the app and pandas
        return None
    return numpy


_log_facts_kept: KeptFor[tuple[tuple[int, ...], tuple[int, ...]]] = KeptFor(4)
_arrays_kept: KeptFor[Any] = KeptFor(8)


def _log_facts(messages: Sequence[Message]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where the log compacted its context, and which messages recorded usage: read
    once per transcript (as its token counts are), since a sweep or the app prices many
    replays of the same run."""
    def read() -> tuple[tuple[int, ...], tuple[int, ...]]:
        usage = list(map(attrgetter("usage"), messages))
        recorded = tuple(i for i, u in enumerate(usage) if u is not None) if usage.count(None) < len(usage) else ()
        return compactions_of(messages), recorded
    return _log_facts_kept.get(messages, read)


class _LogArrays(NamedTuple):
    """Per message of a transcript, what its log recorded: the call's time (nan:
    unknown), its output tokens (-1: not recorded) and its prompt tokens (0: none)."""

    time: Any
    out: Any
    prompt: Any
    read: Any
    """Tokens read from the cache (0: none)."""
    billed: Any
    """An API call the provider billed: an assistant message with a prompt, not made up
    by the client (Claude Code's ``<synthetic>`` replies)."""
    assistant: Any
    """The assistant messages (each a model call)."""


_log_arrays_kept: KeptFor[_LogArrays] = KeptFor(4)


def _log_arrays(np: Any, messages: Sequence[Message]) -> _LogArrays:
    """The recorded usage as arrays, read once per transcript: every replay of a run
    prices the same recorded calls."""
    def read() -> _LogArrays:
        n = len(messages)
        time, out, prompt = np.full(n, np.nan), np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
        read, billed = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        at = list(_log_facts(messages)[1])
        if at:
            stamps = [_timestamp(messages[i]) for i in at]
            usage = [u for i in at if (u := messages[i].usage) is not None]  # all: they recorded usage
            time[at] = [np.nan if t is None else t for t in stamps]
            out[at] = [u.output_tokens if u.output_tokens or u.prompt_tokens else -1 for u in usage]
            prompt[at] = [u.prompt_tokens for u in usage]
            read[at] = [u.cache_read_tokens for u in usage]
            billed[at] = [messages[i].role == "assistant" and u.model != SYNTHETIC_MODEL and u.prompt_tokens > 0
                          for i, u in zip(at, usage)]
        assistant = np.fromiter((m.role == "assistant" for m in messages), dtype=bool, count=n)
        return _LogArrays(time, out, prompt, read, billed, assistant)
    return _log_arrays_kept.get(messages, read)


_resets_kept: KeptFor[dict[int, int]] = KeptFor(8)


def cache_resets(messages: Sequence[Message], ttl: int, cuts: Sequence[int] = ()) -> dict[int, int]:
    """The calls at which the log's cache held far less than the call before it left
    there (message index -> the tokens it read): a call that read less than half of the
    previous call's prompt, within the cache's lifetime and with no compaction between.
    The client or the provider dropped the cached prefix there (Claude Code does on some
    new user turns and on a resumed session, keeping only its system prompt and tools);
    it is a fact of the run, as its call times are, so a simulated run, with or without a
    policy, finds no more than that in the cache at that call."""
    cut_list = tuple(sorted(cuts))
    np = _numpy()

    def read() -> dict[int, int]:
        if np is not None:
            return _cache_resets_np(np, messages, ttl, cut_list)
        return _cache_resets_loop(messages, ttl, cut_list)
    if not isinstance(messages, tuple):
        return read()
    return _resets_kept.get(messages, read, extra=(ttl, cut_list))


def _cache_resets_np(np: Any, messages: Sequence[Message], ttl: int, cut_list: tuple[int, ...]) -> dict[int, int]:
    """``cache_resets`` over the recorded calls at once (the loop is the reference)."""
    la = _log_arrays(np, messages)
    at = np.flatnonzero(la.billed)
    if len(at) < 2:
        return {}
    now, then = la.time[at[1:]], la.time[at[:-1]]
    fresh = ~(now - then > ttl)  # an unknown time on either side: fresh
    cuts_a = np.asarray(cut_list, dtype=np.int64)
    cut_between = np.searchsorted(cuts_a, at[1:], side="right") > np.searchsorted(cuts_a, at[:-1], side="right")
    read = la.read[at[1:]]
    hit = fresh & ~cut_between & (2 * read < la.prompt[at[:-1]])
    return dict(zip(at[1:][hit].tolist(), read[hit].tolist()))


def _cache_resets_loop(messages: Sequence[Message], ttl: int, cut_list: tuple[int, ...]) -> dict[int, int]:
    """``cache_resets`` one recorded call at a time."""
    from bisect import bisect_right

    out: dict[int, int] = {}
    prev: tuple[int, int, float | None] | None = None
    for i in _log_facts(messages)[1]:
        m = messages[i]
        u = m.usage
        if m.role != "assistant" or u is None or u.model == SYNTHETIC_MODEL or u.prompt_tokens <= 0:
            continue
        now = _timestamp(m)
        if prev is not None:
            j, held, then = prev
            cut_between = bisect_right(cut_list, i) > bisect_right(cut_list, j)
            fresh = now is None or then is None or now - then <= ttl
            if fresh and not cut_between and 2 * u.cache_read_tokens < held:
                out[i] = u.cache_read_tokens
        prev = (i, u.prompt_tokens, now)
    return out


def _int_array(np: Any, values: Sequence[int]) -> Any:
    """``values`` as an int64 array, kept for the same (immutable) sequence: the prefix
    sums of a transcript are shared by every replay of it."""
    return _arrays_kept.get(values, lambda: np.fromiter(values, dtype=np.int64, count=len(values)))


def _ints(np: Any, values: Sequence[int]) -> Any:
    """An int64 array of ``values``: a view of a replay's array('q') columns, no copy."""
    if isinstance(values, array) and values.typecode == "q" and len(values):
        return np.frombuffer(values, dtype=np.int64)
    return np.fromiter(values, dtype=np.int64, count=len(values))


def _step_columns(np: Any, result: Result, k_n: int) -> tuple[Any, ...]:
    """(ends, context with the policy, without it, lowest and highest change, the count
    of each call's message) of the first ``k_n`` steps: from the replay's Trace when it
    left one (array operations only), else from the Step objects."""
    i64 = np.int64
    tr = result._trace
    if tr is not None:
        ends_all = _ints(np, tr.ends)
        prefix = _int_array(np, tr.prefix)
        ends = ends_all[:k_n]
        ctx_u = prefix[ends]
        at, saved_at = _ints(np, tr.at), _ints(np, tr.saved)
        # tokens saved at each step: constant from one change step to the next
        saved = np.repeat(np.concatenate(([0], saved_at)), np.diff(np.concatenate(([0], at, [len(ends_all)]))))[:k_n]
        lows = np.full(len(ends_all), -1, dtype=i64)
        highs = np.full(len(ends_all), -1, dtype=i64)
        lows[at] = _ints(np, tr.low)
        highs[at] = _ints(np, tr.high)
        n = len(prefix) - 1
        own = np.where(ends < n, prefix[np.minimum(ends + 1, n)] - prefix[ends], 0)
        return ends, ctx_u - saved, ctx_u, lows[:k_n], highs[:k_n], own
    steps = result.model_call_steps
    cols = list(zip(*steps))  # the steps transposed: one tuple per Step field
    ends = np.array(cols[0], dtype=i64)
    # changed indices are ascending: the lowest is the first of each, the highest the last
    sizes = np.fromiter(map(len, cols[1]), dtype=i64, count=k_n)
    flat = np.fromiter(chain.from_iterable(cols[1]), dtype=i64, count=int(sizes.sum()))
    stop = np.cumsum(sizes)
    has = sizes > 0
    lows = np.full(k_n, -1, dtype=i64)
    highs = np.full(k_n, -1, dtype=i64)
    lows[has] = flat[(stop - sizes)[has]]
    highs[has] = flat[stop[has] - 1]
    counts = result.token_counts
    n = len(counts)
    counts_a = np.fromiter(counts, dtype=i64, count=n)
    own = np.where(ends < n, counts_a[np.minimum(ends, max(n - 1, 0))], 0) if n else np.zeros(k_n, dtype=i64)
    return ends, np.array(cols[2], dtype=i64), np.array(cols[3], dtype=i64), lows, highs, own


def _calls_in(result: Result) -> int:
    """How many model calls (``len(result.model_call_steps)`` without the copy)."""
    return max(0, len(result.steps) - 1) if result.mode == "replay" else len(result.steps)


ThinkingKept = Literal["all", "turn", "none"]


def thinking_kept(model: str) -> ThinkingKept:
    """Which earlier thinking a provider re-sends and bills as input. Anthropic keeps the
    thinking of earlier assistant turns from Claude Opus 4.5 on (documented), taken here
    for every Claude model from 4.6 too; earlier Claude models strip it once a new user
    turn starts ("turn"). OpenAI passes reasoning back only within a turn's tool calls
    ("turn"); Gemini never re-sends thoughts, only their signatures ("none")."""
    import re

    from .media import provider_of

    provider = provider_of(model)
    if provider == "gemini":
        return "none"
    if provider == "openai":
        return "turn"
    found = re.search(r"claude-([a-z]+)-(\d+)(?:-(\d)(?!\d))?", model.lower())
    if found is None:
        return "turn"
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    return "all" if major >= 5 or (major, minor) >= (4, 6) or (family == "opus" and (major, minor) >= (4, 5)) \
        else "turn"


_has_thinking: KeptFor[bool] = KeptFor(8)


def _thinking_facts(messages: Sequence[Message], counts: Sequence[int]) -> tuple[list[int], list[int]] | None:
    """(thinking tokens before each message, the last user turn before each message),
    or None when no message holds thinking. A message's thinking tokens are its count's
    share of the thinking's characters."""
    if not _has_thinking.get(messages, lambda: any(m.meta and m.meta.get("thinking") for m in messages)):
        return None
    think = [0]
    last_user = [0]
    turn = 0
    for i, (m, c) in enumerate(zip(messages, counts)):
        parts = (m.meta or {}).get("thinking") if m.role == "assistant" else None
        chars = sum(map(len, parts)) if parts else 0
        think.append(think[-1] + (round(c * min(1.0, chars / max(1, len(m.content)))) if chars else 0))
        if m.role == "user":
            turn = i
        last_user.append(turn)
    return think, last_user


def _not_sent(facts: tuple[list[int], list[int]] | None, kept: ThinkingKept, cut: int, end: int, upto: int) -> int:
    """The thinking tokens of messages ``cut`` to ``upto - 1`` that a call ending at
    ``end`` does not send."""
    if facts is None or kept == "all":
        return 0
    think, last_user = facts
    limit = min(upto, end if kept == "none" else last_user[end])
    return max(0, think[max(limit, cut)] - think[cut])


def _log_of(result: Result) -> Sequence[Message]:
    """The messages as the log holds them (their usage), index for index with the replay's."""
    seen = result._seen
    return seen if seen and len(seen) == len(result.messages) else result.messages


def _call_facts(result: Result, scale: float, kept: ThinkingKept = "all") -> dict[str, Any]:
    """Per model call, once for both runs: its end, time (nan when unknown), output
    tokens, context with and without the policy, and its lowest and highest change.
    Array operations over the replay's Trace, as a long run has 50,000 calls."""
    np = _numpy()
    msgs, counts = result.messages, result.token_counts
    k_n = _calls_in(result)
    i64 = np.int64
    if not k_n:
        empty = np.zeros(0, dtype=i64)
        return {"ends": empty, "times": np.zeros(0), "outs": empty, "ctx_w": empty, "ctx_u": empty,
                "lows": empty, "highs": empty, "timed": False}
    with paused_gc():
        ends, ctx_w, ctx_u, lows, highs, own = _step_columns(np, result, k_n)
    outs = np.rint(own * scale).astype(i64)
    times = np.full(k_n, np.nan)
    log = _log_of(result)
    _, recorded = _log_facts(log)
    if recorded:  # only the calls whose message recorded usage
        la = _log_arrays(np, log)
        inside = ends < len(log)
        at = np.minimum(ends, len(log) - 1)
        times = np.where(inside, la.time[at], np.nan)
        out = np.where(inside, la.out[at], -1)
        outs = np.where(out >= 0, out, outs)
    thinking = _thinking_facts(msgs, counts) if kept != "all" else None
    strip = lim = None
    if thinking is not None:  # earlier thinking the provider does not re-send
        think = np.asarray(thinking[0], dtype=i64)
        lim = ends if kept == "none" else np.asarray(thinking[1], dtype=i64)[ends]
        strip = think[lim]
        ctx_w, ctx_u = ctx_w - strip, ctx_u - strip
    return {"ends": ends, "times": times, "outs": outs, "ctx_w": ctx_w, "ctx_u": ctx_u, "lows": lows, "highs": highs,
            "timed": bool(recorded) and not bool(np.isnan(times).all()),
            "think": None if thinking is None else think, "think_limit": lim}


def _anthropic_tops(np: Any, broke: Any, first: Any, ends: Any, times: Any | None, entry: Any, ttl: int,
                    reset: Any, new: Any | None = None) -> Any:
    """For each call, the call whose cache entry it reads from Anthropic's cache (-1:
    none), all calls at once.

    The cache is a stack of entries (each call's prompt, pushed when long enough); a
    change at message f pops the entries ending after f; an expired top empties it.
    With changes that never reach below an earlier change (what ``_breaks`` checks),
    the f of successive breaks only grows, so an entry's fate is settled at the first
    break after it: it dies there if it ends after that f, else it outlives every
    break. The top is the last entry since the latest break, or else the last entry
    before that break that outlived its own; an emptying (an expired top) kills every
    entry before it, as a compaction (``new``: the first call after one) does. Equal to
    the stack, call for call (the tests run both)."""
    k_n = len(entry)
    i32 = np.int32  # call positions: half the memory traffic of int64
    idx = np.arange(k_n, dtype=i32)
    minus = np.full(k_n, -1, dtype=i32)
    big = k_n + 1
    brk = np.flatnonzero(broke).astype(i32)
    # the first break strictly after each call, and where that break's change starts
    after = np.full(k_n, big, dtype=i32)
    if len(brk):
        after[: brk[-1]] = np.repeat(brk, np.diff(np.concatenate(([0], brk))))
    f_after = np.zeros(k_n, dtype=first.dtype)
    has_after = after < k_n
    f_after[has_after] = first[after[has_after]]
    outlives = entry & (~has_after | (ends <= f_after))
    last_break = np.maximum.accumulate(np.where(broke, idx, minus))  # at or before each call
    last_entry = np.empty(k_n, dtype=i32)  # strictly before each call
    last_entry[0] = -1
    last_entry[1:] = np.maximum.accumulate(np.where(entry, idx, minus))[:-1]
    last_outliving = np.maximum.accumulate(np.where(outlives, idx, minus))
    before_break = np.where(last_break > 0, last_outliving[np.maximum(last_break - 1, 0)], minus)
    top = np.where(last_entry >= last_break, last_entry, before_break)
    if new is not None and new.any():  # nothing from before the call's compaction lives
        top = np.where(top >= np.maximum.accumulate(np.where(new, idx, 0)), top, -1)
    expired = reset.copy()  # a reset the log recorded empties the cache, as an expiry does
    if times is not None:  # without call times nothing expires
        expired |= (top >= 0) & (times - times[np.maximum(top, 0)] > ttl)  # nan times never expire
    if not expired.any():
        return top
    emptied = np.maximum.accumulate(np.where(expired, idx, -1))  # the latest emptying at or before each call
    return np.where((top >= 0) & ~expired & (top >= emptied), top, -1)


def _breaks(np: Any, f: Mapping[str, Any], with_policy: bool) -> tuple[Any, Any]:
    """Which calls broke the cache and the lowest message each changed; (None, None)
    when a change reaches down to an earlier one (the fast prefix sums assume not)."""
    ends = f["ends"]
    if not with_policy:
        return np.zeros(len(ends), dtype=bool), ends.copy()
    lows, highs = f["lows"], f["highs"]
    changed = lows >= 0
    before = np.maximum.accumulate(np.where(changed, highs, -1))  # highest change so far
    prev_end = np.concatenate(([-1], ends[:-1]))
    broke = changed & (lows < prev_end)
    broke[0] = False
    earlier = np.concatenate(([-1], before[:-1]))
    if (broke & (lows <= earlier)).any():  # a change at or below an earlier one: saved again there
        return None, None
    return broke, np.where(broke, lows, ends)


def _anthropic_hits(np: Any, p: Pricing, prompt: Any, broke: Any, first: Any, ends: Any, times: Any,
                    expired: Any, overhead: int, base: int, timed: bool, reset: Any,
                    new: Any | None = None) -> Any:
    """The tokens each call reads from Anthropic's cache (before the minimum-length check
    of its own prompt, and before a reset's cap)."""
    k_n = len(prompt)
    entry_a = prompt >= p.min_cacheable
    if not broke.any() and not (entry_a[:-1] & ~entry_a[1:]).any():
        # no change and no entry missing after the first: the top is the last call's
        hit = np.zeros(k_n, dtype=np.int64)
        fresh = ~expired[1:] & ~reset[1:] if new is None else ~expired[1:] & ~reset[1:] & ~new[1:]
        hit[1:] = np.where(entry_a[:-1] & fresh, prompt[:-1], 0)
    else:
        top = _anthropic_tops(np, broke, first, ends, times if timed else None, entry_a, p.ttl_seconds, reset,
                              new)
        hit = np.where(top >= 0, prompt[np.maximum(top, 0)], 0)
    floor = base or overhead
    if floor >= p.min_cacheable:
        # the prefix every prompt starts with (the system prompt and tools): what the first
        # call found cached (a warm start), else the overhead once a call has cached it;
        # it lives while calls long enough to be cached keep refreshing it
        if entry_a.all():  # every call cached: the last one before each call is the call before it
            held = ~expired
            held[0] = bool(base)
        else:
            idx = np.arange(k_n)
            pushed = np.maximum.accumulate(np.where(entry_a, idx, -1))
            last = np.concatenate(([-1], pushed[:-1]))  # the last call that cached, before each call
            held = np.ones(k_n, dtype=bool) if base else last >= 0
            if timed:
                held &= ~((last >= 0) & (times - times[np.maximum(last, 0)] > p.ttl_seconds))  # nan: still held
        hit = np.maximum(hit, np.where(held, floor, 0))
    hit = np.where(hit >= p.min_cacheable, hit, 0)
    return hit


def _prefix(np: Any, result: Result) -> Any:
    """``prefix[i]``: the tokens before message i, as an int64 array."""
    return (_int_array(np, result._trace.prefix) if result._trace is not None else
            np.concatenate(([0], np.cumsum(np.asarray(result.token_counts, dtype=np.int64)))))


class _Segments(NamedTuple):
    """Where each call stands against the log's compactions: the last one before it
    (0: none), whether it is the first call after a new one, and the tokens before that
    compaction as the call sees them (with the policy's changes below it)."""

    cut: Any
    new: Any
    base: Any


def _segments(np: Any, result: Result, f: dict[str, Any], cuts: Sequence[int], with_policy: bool) -> _Segments | None:
    """The compactions as arrays (None: the log has none). Messages before a compaction
    are not sent after it, so the policy's savings on them come off what lies before the
    compaction, from the call that made them or the first call after the compaction,
    whichever is later (the reference's tree of prefix sums, all calls at once)."""
    if not cuts:
        return None
    ends = f["ends"]
    k_n = len(ends)
    cuts_a = np.asarray(cuts, dtype=np.int64)
    kept = f.get("cuts")
    if kept is None or kept[0] != tuple(cuts):  # the same for the run with and without the policy
        pos = np.searchsorted(cuts_a, ends, side="left")  # the compactions strictly before each call
        cut = np.where(pos > 0, cuts_a[np.maximum(pos - 1, 0)], 0)
        # the first call after each compaction (k_n: none), and one more for "no compaction"
        first_after = np.append(np.searchsorted(ends, cuts_a, side="right"), k_n)
        kept = f["cuts"] = (tuple(cuts), cut, cut != np.concatenate(([0], cut[:-1])), _prefix(np, result)[cut],
                            first_after)
    _, cut, new, base, first_after = kept
    if not with_policy:
        return _Segments(cut, new, base)
    tr = result._trace
    if tr is not None and len(tr.changed):
        # the replay kept each change (once per message, the changes' ranges only growing)
        # and the running total saved: each step's run of changes starts at its lowest
        idx = _ints(np, tr.changed)
        running = _ints(np, tr.changed_saved)
        lows = _ints(np, tr.low)
        has = lows >= 0
        step_start = np.searchsorted(idx, lows[has], side="left")
        step_k = _ints(np, tr.at)[has]
    elif result.cleared_indices:
        changed = result.cleared_indices
        idx = np.asarray(changed, dtype=np.int64)
        at = np.fromiter((result.cleared_at[i] for i in changed), dtype=np.int64, count=len(changed))
        k_change = np.searchsorted(ends, at, side="left")
        running = np.cumsum(_int_array(np, result.token_counts)[idx]
                            - np.asarray(result.token_counts_after, dtype=np.int64)[idx])
        step_start = np.flatnonzero(np.concatenate(([True], k_change[1:] != k_change[:-1])))
        step_k = k_change[step_start]
    else:
        return _Segments(cut, new, base)
    # runs of changed messages made by one call and lying between the same compactions:
    # each run comes off, as a whole, from its call or the first call past the next
    # compaction, whichever is later
    mark = np.zeros(len(idx) + 1, dtype=bool)
    mark[step_start] = True
    mark[np.searchsorted(idx, cuts_a, side="left")] = True  # a compaction past every change marks the end
    starts = np.flatnonzero(mark[:-1])
    k_run = np.maximum(step_k[np.searchsorted(step_start, starts, side="right") - 1],
                       first_after[np.searchsorted(cuts_a, idx[starts], side="right")])
    total = np.concatenate(([0], running))
    saved = total[np.append(starts[1:], len(idx))] - total[starts]
    keep = k_run < k_n
    below = np.cumsum(np.bincount(k_run[keep], weights=saved[keep], minlength=k_n)[:k_n])
    return _Segments(cut, new, base - np.rint(below).astype(np.int64))


def _shared(np: Any, result: Result, f: Mapping[str, Any], prompt: Any, broke: Any, first: Any, overhead: int,
            scale: float, with_policy: bool, seg: _Segments | None = None) -> Any:
    """The prefix each call shares with the previous prompt (what OpenAI and Gemini read);
    after a compaction only the overhead."""
    shared = np.zeros(len(prompt), dtype=np.int64)
    shared[1:] = prompt[:-1]
    if with_policy and broke.any():
        prefix = _prefix(np, result)
        idx = np.flatnonzero(broke)
        saved_before = f["ctx_u"][idx - 1] - f["ctx_w"][idx - 1]  # all earlier savings lie below the change
        body = prefix[first[idx]] - saved_before
        if seg is not None:
            body = body - seg.base[idx]
        if f.get("think") is not None:  # thinking before the change that this call does not send
            think = f["think"]
            upto = np.minimum(first[idx], f["think_limit"][idx])
            body = body - (think[upto] if seg is None else
                           think[np.maximum(upto, seg.cut[idx])] - think[seg.cut[idx]])
        if seg is not None:  # a change below the compaction: only the overhead is shared
            body = np.where(first[idx] < seg.cut[idx], 0, body)
        shared[idx] = overhead + np.rint(body * scale).astype(np.int64)
    if seg is not None:
        shared[seg.new] = overhead
    return shared


def _rates(np: Any, p: Pricing, prompt: Any) -> tuple[Any, Any, Any, Any]:
    """(input, output, cache write, cache read) prices per call: the long-context tier's
    for calls past its threshold."""
    base = (p.input, p.output, p.cache_write, p.cache_read)
    if p.long is None or not p.long_context_from:
        return base
    long = prompt > p.long_context_from
    if not long.any():
        return base
    tier = p.for_prompt(p.long_context_from + 1)
    return tuple(np.where(long, b, a) for a, b in zip(base, (tier.input, tier.output, tier.cache_write,
                                                             tier.cache_read)))


def _reset_columns(np: Any, f: dict[str, Any], resets: Mapping[int, int] | None) -> tuple[Any, Any]:
    """(whether the log's cache was reset at each call, what it still held there): the
    same for the run with and without the policy, so worked out once."""
    kept = f.get("resets")
    if kept is not None and kept[0] is resets:
        return kept[1], kept[2]
    ends = f["ends"]
    k_n = len(ends)
    reset = np.zeros(k_n, dtype=bool)
    cap = np.zeros(k_n, dtype=np.int64)
    if resets:
        keys = np.fromiter(resets, dtype=np.int64, count=len(resets))
        held = np.fromiter(resets.values(), dtype=np.int64, count=len(resets))
        pos = np.minimum(np.searchsorted(ends, keys), k_n - 1)
        hit = ends[pos] == keys  # resets at calls this run makes
        reset[pos[hit]] = True
        cap[pos[hit]] = held[hit]
    f["resets"] = (resets, reset, cap)
    return reset, cap


def _price_fast(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
                cuts: Sequence[int], warm: int = 0, facts: Any = None,
                resets: Mapping[int, int] | None = None, kept: ThinkingKept = "all") -> dict[str, Any]:
    """The same prices as ``_price_run`` with numpy over all calls at once; only calls
    whose cache entry a change invalidated are worked one by one. Falls back to the
    reference when a change reaches below an earlier change of the same run (policies
    here clear oldest first)."""
    np = _numpy()
    p = pricing
    k_n = _calls_in(result)
    if k_n == 0:
        return _columns(())
    f = facts if facts is not None else _call_facts(result, scale, kept)
    ends, times, outs = f["ends"], f["times"], f["outs"]
    broke, first = _breaks(np, f, with_policy)
    if broke is None:
        # a change below an earlier one: the reference's stack of prefixes handles it
        return _price_loop(result, pricing, overhead, scale, with_policy, cuts, warm, resets, kept)
    ctx = f["ctx_w"] if with_policy else f["ctx_u"]
    seg = _segments(np, result, f, cuts, with_policy)
    if seg is not None:  # only what follows the call's compaction is sent
        ctx = ctx - seg.base
        if f.get("think") is not None:  # the thinking not sent, counted from the compaction
            think, lim = f["think"], f["think_limit"]
            ctx = ctx + think[lim] - (think[np.maximum(lim, seg.cut)] - think[seg.cut])
    prompt = overhead + (ctx if scale == 1.0 else np.rint(ctx * scale).astype(np.int64))
    if f["timed"]:
        dt = np.empty(k_n)
        dt[0] = np.nan
        dt[1:] = times[1:] - times[:-1]
        expired = dt > p.ttl_seconds  # nan compares False: unknown times keep the cache alive
    else:
        expired = np.zeros(k_n, dtype=bool)
    reset, cap = _reset_columns(np, f, resets)
    alive = ~expired
    alive[0] = False
    uncached = np.zeros(k_n, dtype=np.int64)
    write = np.zeros(k_n, dtype=np.int64)
    read = np.zeros(k_n, dtype=np.int64)
    base = (min(warm, overhead) or warm) if warm else 0
    if p.cache == "none":
        uncached = prompt.copy()
    elif p.cache == "anthropic":
        hit = _anthropic_hits(np, p, prompt, broke, first, ends, times, expired, overhead, base, f["timed"],
                              reset, None if seg is None else seg.new)
        hit = np.where(reset, np.minimum(hit, cap), hit)
        hit = np.where(hit >= p.min_cacheable, hit, 0)
        small = prompt < p.min_cacheable
        read = np.where(small, 0, np.minimum(hit, prompt))
        write = np.where(small, 0, prompt - read)
        uncached = np.where(small, prompt, 0)
    else:
        common = np.where(alive, _shared(np, result, f, prompt, broke, first, overhead, scale, with_policy, seg), 0)
        if base:
            common[0] = base
        common = np.where(reset, np.minimum(common, cap), common)
        if p.cache == "openai":
            common = (common // 128) * 128
        ok = (common >= p.min_cacheable) & (prompt >= p.min_cacheable)
        read = np.where(ok, np.minimum(common, prompt), 0)
        uncached = prompt - read
    rate_in, rate_out, rate_w, rate_r = _rates(np, p, prompt)
    input_dollars = (uncached * rate_in + write * rate_w + read * rate_r) / 1e6
    dollars = input_dollars + outs * rate_out / 1e6
    price = rate_w if p.cache == "anthropic" else rate_in
    break_dollars = np.zeros(k_n)
    hit_idx = np.flatnonzero(broke if seg is None else broke & ~seg.new)  # a compaction resent all anyway
    if len(hit_idx):  # what a break cost: the previous prompt that was not read again
        lost = np.maximum(0, prompt[hit_idx - 1] - read[hit_idx])
        price_h, read_h = (v[hit_idx] if isinstance(v, np.ndarray) else v for v in (price, rate_r))
        break_dollars[hit_idx] = lost * (price_h - read_h) / 1e6
    return {
        "call_index": ends, "prompt_tokens": prompt, "uncached_tokens": uncached, "cache_write_tokens": write,
        "cache_read_tokens": read, "output_tokens": outs, "dollars": dollars, "input_dollars": input_dollars,
        "cache_break": broke, "break_dollars": break_dollars,
    }


def _fit(result: Result, overhead: int, cuts: Sequence[int], prior: float = 1.0) -> tuple[int, float, int]:
    """(overhead, scale, calls used) fitted by least squares on the recorded prompt
    sizes of at most the first 10 % of model calls (the run without the policy, as
    the log recorded it)."""
    np = _numpy()
    budget = _calls_in(result) // 10
    log = _log_of(result)
    if np is None or not budget or not _log_facts(log)[1]:
        return _fit_loop(result, overhead, cuts, prior)
    tr = result._trace
    ends = (_ints(np, tr.ends)[:budget] if tr is not None else
            np.fromiter((s.call_index for s in result.steps[:budget]), dtype=np.int64, count=budget))
    ends = ends[ends < len(log)]
    ys = _log_arrays(np, log).prompt[ends]
    ends, ys = ends[ys > 0], ys[ys > 0]
    if not len(ys):
        return overhead, prior, 0
    prefix = _prefix(np, result)
    cuts_a = np.asarray(cuts, dtype=np.int64)
    pos = np.searchsorted(cuts_a, ends, side="left")
    cut = np.where(pos > 0, cuts_a[np.maximum(pos - 1, 0)], 0) if len(cuts_a) else np.zeros_like(ends)
    fitted, scale = fit_line((prefix[ends] - prefix[cut]).tolist(), ys.tolist(), prior)
    return fitted, scale, len(ys)


def _fit_loop(result: Result, overhead: int, cuts: Sequence[int], prior: float = 1.0) -> tuple[int, float, int]:
    """``_fit`` one call at a time (no numpy)."""
    steps = result.model_call_steps
    budget = len(steps) // 10
    xs, ys = [], []
    prefix = prefix_sums(result.token_counts)
    log = _log_of(result)
    for step in steps[:budget]:
        m = log[step.call_index] if step.call_index < len(log) else None
        if m is None or m.usage is None or not m.usage.prompt_tokens:
            continue
        xs.append(prefix[step.call_index] - prefix[cut_before(cuts, step.call_index)])
        ys.append(m.usage.prompt_tokens)
    if not xs:
        return overhead, prior, 0
    fitted, scale = fit_line(xs, ys, prior)
    return fitted, scale, len(xs)


def _warm_start(result: Result) -> int:
    """What the first call found in the cache, as recorded (calibration data: it is the
    first call)."""
    if _calls_in(result) == 0:
        return 0
    log = _log_of(result)
    end = result.steps[0].call_index
    u = log[end].usage if end < len(log) else None
    return u.cache_read_tokens if u is not None else 0


def _log_model_pricing(messages: Sequence[Message]) -> Pricing:
    from .windows import run_model

    model = run_model(messages)
    if not model:
        raise ConfigError("cost: the log names no model to price it at; give pricing= (a preset's name, a "
                          "model's or a Pricing)")
    return pricing_for(model)


def cost(result: Result, pricing: Pricing | str | None = None, *, calibrate: bool = False,
         compactions: Sequence[int] | None = None) -> Cost:
    """Price every model call of ``result`` (a replay of any policy) and of the same run
    without the policy, at ``pricing`` (a ``Pricing``, a preset's or a model's name; by
    default the prices of the model most of the log's calls name).

    ``calibrate`` fits the per-call overhead and a tokenizer scale on the recorded usage
    of at most the first 10 % of calls. ``compactions`` are the message indices where
    the log's agent compacted its context (found from Claude Code's summaries when not
    given): calls after one do not send what came before it, with or without the policy.
    """
    if result.mode != "replay":
        raise ConfigError("cost needs a replay (toolclear.replay): a single pass has no model calls to price")
    p = resolve(pricing) if pricing is not None else _log_model_pricing(result._seen or result.messages)
    if result._plain_steps:  # a replay in tokens as sent: the cost model starts from the transcript's
        from dataclasses import replace

        result = replace(result, steps=result._plain_steps, _plain_steps=())
    one_hour = p.cache == "anthropic" and p.ttl_seconds < 3600 and _writes_one_hour(result._seen or result.messages)
    if one_hour:  # the cache the log really used: 1-hour entries, at their price
        p = p.with_ttl_1h()
    cuts = tuple(sorted(compactions)) if compactions is not None else _log_facts(result._seen or result.messages)[0]
    overhead, scale, used = p.overhead_tokens, p.token_scale, 0
    notes = []
    result, media_note = _with_media(result, p)
    if media_note:
        notes.append(media_note)
    warm = 0
    if calibrate:
        overhead, scale, used = _fit(result, p.overhead_tokens, cuts, p.token_scale)
        warm = _warm_start(result) if used else 0
        notes.append(f"calibrated on the recorded usage of {used} call(s) (at most the first 10 %): "
                     f"overhead {overhead:,} tokens per call, tokenizer scale {scale:.3f}" if used else
                     "calibration asked for, but the first 10 % of calls recorded no usage: not calibrated")
        if used and scale in (MIN_SCALE, MAX_SCALE):
            notes.append(f"poor fit: the tokenizer scale hit its bound ({scale}); the transcript may not hold what "
                         "the model was sent, so these figures are rough (compare them with the recorded cost)")
    kept = thinking_kept(p.model or p.name)
    facts = _call_facts(result, scale, kept) if _numpy() is not None else None
    if (facts is not None and not facts["timed"]) or (facts is None and not any(
            _timestamp(result.messages[s.call_index]) is not None
            for s in result.model_call_steps if s.call_index < len(result.messages))):
        notes.append(f"the log has no call times: calls are taken to follow each other within the cache's "
                     f"{p.ttl_seconds:,}-second TTL")
    if cuts:
        notes.append(f"{len(cuts)} compaction(s) in the log: later calls send only what follows the last one")
    if one_hour:
        notes.append("the log wrote 1-hour cache entries: the cache lives an hour and writes cost the 1-hour rate")
    resets = cache_resets(result._seen or result.messages, p.ttl_seconds, cuts) if p.cache != "none" else {}
    if resets:
        notes.append(f"the log's cache held only its first tokens at {len(resets)} call(s) within its lifetime (the "
                     "client or the provider dropped the rest): so it does in the simulation, with or without the "
                     "policy")
    if kept != "all" and facts is not None and facts["think"] is not None:
        notes.append(f"{p.model or p.name} does not re-send earlier thinking "
                     + ("(thoughts are never sent back)" if kept == "none" else "once a new user turn starts")
                     + ": it is not billed as input")
    if facts is not None:
        with paused_gc():  # arrays and a few lists, no cycles: nothing for the collector to find
            with_, without = (_price_fast(result, p, overhead, scale, flag, cuts, warm, facts, resets, kept)
                              for flag in (True, False))
    else:
        with_, without = (_price_loop(result, p, overhead, scale, flag, cuts, warm, resets, kept)
                          for flag in (True, False))
    return Cost(
        columns=with_,
        columns_without_policy=without,
        pricing=p, assumptions=tuple(notes), overhead_tokens=overhead, scale=scale, calibrated_on=used,
        _result=result,
    )


def _provider(p: Pricing) -> str:
    text = f"{p.name} {p.model}".lower()
    if "gemini" in text:
        return "gemini"
    return "anthropic" if p.cache == "anthropic" else "openai"


def _with_media(result: Result, p: Pricing) -> tuple[Result, str | None]:
    """The replay with each image, PDF and audio clip counted as the provider bills it,
    not as the base64 the counter saw; the steps and the trace follow."""
    from bisect import bisect_right

    from .media import ASSUMED, media_corrections

    msgs = result._seen or result.messages
    fix = media_corrections(msgs, result.token_counts, _provider(p))
    if not fix:
        return result, None
    counts = list(result.token_counts)
    after = list(result.token_counts_after)
    for i, d in fix.items():
        counts[i] = max(0, counts[i] + d)
        if result.cleared_at[i] is None:
            after[i] = counts[i]
    order = sorted(fix)
    cum = [0]
    for i in order:
        cum.append(cum[-1] + fix[i])

    def changed_fix(call: int) -> int:  # images already cleared by this call: their saving grows by the fix
        total = 0
        for i in order:
            at = result.cleared_at[i]
            if i < call and at is not None and at <= call:
                total += fix[i]
        return total
    steps = []
    for st_ in result.steps:
        before = cum[bisect_right(order, st_.call_index - 1)]
        gone = changed_fix(st_.call_index)
        steps.append(st_._replace(context_tokens_unreduced=st_.context_tokens_unreduced + before,
                                  context_tokens=st_.context_tokens + before - gone))
    trace = result._trace
    if trace is not None:
        prefix = [trace.prefix[k] + cum[bisect_right(order, k - 1)] for k in range(len(trace.prefix))]
        saved = array("q", (sv + changed_fix(trace.ends[a]) for a, sv in zip(trace.at, trace.saved)))
        each = array("q", (sv + grown for sv, grown in zip(trace.changed_saved, accumulate(
            fix.get(i, 0) for i in trace.changed))))  # running totals: each cleared image's fix adds up
        trace = trace._replace(prefix=tuple(prefix), saved=saved, changed_saved=each)
    billed = sum(fix.values())
    note = (f"{len(fix)} message(s) with images, PDFs or audio counted as {_provider(p)} bills them (images by "
            f"their pixels, PDFs by their pages, audio by its length): {billed:+,} tokens against their base64 text; "
            f"{ASSUMED}")
    return replace(result, token_counts=tuple(counts), token_counts_original=tuple(counts), _counts_after=tuple(after),
                   steps=tuple(steps), _trace=trace), note


_one_hour_kept: KeptFor[bool] = KeptFor(4)


def _writes_one_hour(messages: Sequence[Message]) -> bool:
    """Whether most of what the log wrote to the cache was written for an hour (read
    once per transcript)."""
    def read() -> bool:
        total = one_h = 0
        for i in _log_facts(messages)[1]:  # the messages that recorded usage
            u = messages[i].usage
            if u is not None:
                total += u.cache_write_tokens
                one_h += min(u.cache_write_1h_tokens, u.cache_write_tokens)
        return total > 0 and 2 * one_h > total
    return _one_hour_kept.get(messages, read)


SYNTHETIC_MODEL = "<synthetic>"
"""The model Claude Code names on replies it makes up itself (an interrupted turn, an
API error shown to the user): no API call was made, nothing was billed."""


def recorded_cost(messages: Sequence[Message], pricing: Pricing | str | None = None) -> Cost:
    """Price what the log recorded: each assistant message's usage (uncached input,
    cache writes, cache reads, output), as the provider billed it. With no ``pricing``,
    each call at its own model's preset (``pricing_for``: a session that mixes models,
    Haiku subagents in an Opus session, is priced call by call); 1-hour cache writes at
    the 1-hour rate. Claude Code's ``<synthetic>`` replies are not calls and cost nothing."""
    fixed = resolve(pricing) if pricing is not None else None
    calls, notes, unknown = [], [], set()
    for i, m in enumerate(messages):
        u = m.usage
        if m.role != "assistant" or u is None or u.model == SYNTHETIC_MODEL:
            continue
        p = fixed
        if p is None:
            try:
                p = pricing_for(u.model)
            except ConfigError:
                unknown.add(u.model or "(none)")
                continue
        p = p.for_prompt(u.prompt_tokens)
        one_h = min(u.cache_write_1h_tokens, u.cache_write_tokens)
        write_1h = p.cache_write_1h if p.cache_write_1h is not None else p.cache_write
        inp = p.dollars(u.input_tokens, u.cache_write_tokens - one_h, u.cache_read_tokens, 0) \
            + one_h * write_1h / 1e6
        calls.append(CallCost(i, u.prompt_tokens, u.input_tokens, u.cache_write_tokens, u.cache_read_tokens,
                              u.output_tokens, inp + p.dollars(0, 0, 0, u.output_tokens), inp))
    if unknown:
        notes.append(f"calls of {', '.join(sorted(unknown))} left out: no pricing preset covers that model")
    if not calls:
        notes.append("the log recorded no usage")
    cols = _columns(calls)
    shown = fixed if fixed is not None else _run_preset(messages)
    return Cost(columns=cols, columns_without_policy=cols, pricing=shown, assumptions=tuple(notes))


def run_pricing(messages: Sequence[Message], pricing: Pricing | str | None = "auto") -> Pricing | None:
    """The prices of one run: ``pricing`` as given (a preset's name, a ``Pricing`` or
    None), or with ``"auto"`` the preset of the model most of its calls name
    (``pricing_for``; a ``ConfigError`` when no preset covers it)."""
    if pricing != "auto":
        return resolve(pricing) if pricing is not None else None
    from .windows import run_model

    return pricing_for(run_model(messages))


def _run_preset(messages: Sequence[Message]) -> Pricing:
    """The preset of the model most calls name, to stand for a run priced per call."""
    try:
        found = run_pricing(messages)
        assert found is not None
        return found
    except ConfigError:
        return Pricing(input=0.0, output=0.0, cache="none", name="(each call at its model's prices)")
