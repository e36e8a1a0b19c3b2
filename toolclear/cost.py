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

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from .errors import ConfigError
from .model import Message
from .result import Result

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PRICING", "CallCost", "Cost", "Pricing", "cost", "recorded_cost"]

CacheKind = Literal["anthropic", "openai", "gemini", "none"]
COMPACTION_TEXT = "This session is being continued from a previous conversation"
"""How Claude Code's compaction summary starts: calls after it no longer send what came before."""


@dataclass(frozen=True)
class Pricing:
    """US dollars per million tokens, and how the provider caches."""

    input: float
    output: float
    cache_write: float = 0.0
    cache_read: float = 0.0
    cache: CacheKind = "anthropic"
    ttl_seconds: int = 300
    min_cacheable: int = 1024
    overhead_tokens: int = 0
    """Tokens every call sends that the transcript does not hold (system prompt, tool schemas)."""
    name: str = "custom"
    model: str = ""
    as_of: str = ""
    source: str = ""
    cache_write_1h: float | None = None
    token_scale: float = 1.0
    """The provider's tokens per counted token, before calibration (Claude's tokenizer
    gives about a third more than bytes / 4 on code and logs)."""

    def __post_init__(self) -> None:
        for f in ("input", "output", "cache_write", "cache_read"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or not math.isfinite(v):
                raise ConfigError(f"pricing {f}: expected dollars per million tokens >= 0, got {v!r}")
        if self.cache not in ("anthropic", "openai", "gemini", "none"):
            raise ConfigError(f"pricing cache: expected anthropic, openai, gemini or none, got {self.cache!r}")
        for f in ("ttl_seconds", "min_cacheable", "overhead_tokens"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"pricing {f}: expected a whole number >= 0, got {v!r}")

    def with_ttl_1h(self) -> Pricing:
        """Anthropic's 1-hour cache: a longer life at the higher write price."""
        write = self.cache_write_1h if self.cache_write_1h is not None else 2 * self.input
        return replace(self, ttl_seconds=3600, cache_write=write)

    def dollars(self, uncached: float, write: float, read: float, output: float) -> float:
        return (uncached * self.input + write * self.cache_write + read * self.cache_read
                + output * self.output) / 1e6


@cache
def _presets() -> dict[str, Pricing]:
    data = json.loads(resources.files("toolclear").joinpath("data/pricing.json").read_text("utf-8"))
    out = {}
    for name, d in data["presets"].items():
        out[name] = Pricing(name=name, **{k: v for k, v in d.items() if k in Pricing.__dataclass_fields__})
    return out


class _Presets(Mapping[str, Pricing]):
    """Named presets from ``toolclear/data/pricing.json``, read on first use."""

    def __getitem__(self, key: str) -> Pricing:
        try:
            return _presets()[key]
        except KeyError:
            raise ConfigError(f"no pricing preset {key!r}; presets: {', '.join(_presets())}") from None

    def __iter__(self) -> Any:
        return iter(_presets())

    def __len__(self) -> int:
        return len(_presets())


PRICING: Mapping[str, Pricing] = _Presets()


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


@dataclass(frozen=True)
class Cost:
    """A run priced call by call, with the policy and without it."""

    calls: tuple[CallCost, ...]
    calls_without_policy: tuple[CallCost, ...]
    pricing: Pricing
    assumptions: tuple[str, ...] = ()
    overhead_tokens: int = 0
    scale: float = 1.0
    calibrated_on: int = 0
    """How many calls' recorded usage the overhead and scale were fitted on (0: none)."""

    @property
    def dollars(self) -> float:
        return sum(c.dollars for c in self.calls)

    @property
    def input_dollars(self) -> float:
        return sum(c.input_dollars for c in self.calls)

    @property
    def output_dollars(self) -> float:
        return self.dollars - self.input_dollars

    @property
    def dollars_without_policy(self) -> float:
        return sum(c.dollars for c in self.calls_without_policy)

    @property
    def input_dollars_without_policy(self) -> float:
        return sum(c.input_dollars for c in self.calls_without_policy)

    @property
    def dollars_saved(self) -> float:
        """Positive when the policy saves money; negative when it costs more than doing nothing."""
        return self.dollars_without_policy - self.dollars

    def totals(self, without_policy: bool = False) -> dict[str, float]:
        rows = self.calls_without_policy if without_policy else self.calls
        return {k: sum(getattr(c, k) for c in rows) for k in (
            "uncached_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "dollars", "input_dollars")}

    @property
    def table(self) -> pd.DataFrame:
        """One row per call: the policy's tokens and dollars, and the same without it."""
        import pandas as pd

        df = pd.DataFrame(self.calls, columns=CallCost._fields)
        if self.calls_without_policy:
            df["dollars_without_policy"] = [c.dollars for c in self.calls_without_policy]
        return df


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

    def _alive(self, last: float | None, now: float | None) -> bool:
        return last is None or now is None or now - last <= self.p.ttl_seconds

    def invalidate_from(self, index: int) -> None:
        """A message at ``index`` changed: entries that end after it are no longer prefixes."""
        while self.entries and self.entries[-1][0] > index:
            self.entries.pop()

    def call(self, end: int, prompt: int, shared: int, now: float | None) -> tuple[int, int, int]:
        """(uncached, write, read) for a prompt of ``prompt`` tokens ending at message
        ``end``; ``shared`` is its common prefix with the last prompt (openai, gemini)."""
        p = self.p
        if p.cache == "none":
            return prompt, 0, 0
        while self.entries and not self._alive(self.entries[-1][2], now):
            self.entries.clear()
        hit = self.entries[-1][1] if self.entries else 0
        if self.base and self._alive(self.base_used, now) and self.base_alive:
            hit = max(hit, self.base)
        if p.cache == "anthropic":
            if prompt < p.min_cacheable:
                return prompt, 0, 0
            read = hit if hit >= p.min_cacheable else 0
            self.entries.append((end, prompt, now))
            self.base_used, self.base_alive = now, True
            return 0, prompt - read, read
        common = shared if self.entries and self._alive(self.entries[-1][2], now) else (
            self.base if self.base_alive and self._alive(self.base_used, now) else 0)
        if p.cache == "openai":
            common = (common // 128) * 128
        read = common if common >= p.min_cacheable and prompt >= p.min_cacheable else 0
        self.entries.append((end, prompt, now))
        self.base_used, self.base_alive = now, True
        return prompt - read, 0, read


def _output_tokens(m: Message, count: int, scale: float) -> int:
    if m.usage is not None and (m.usage.output_tokens or m.usage.prompt_tokens):
        return m.usage.output_tokens
    return round(count * scale)


def _price_run(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
               cuts: Sequence[int], warm: int = 0) -> tuple[CallCost, ...]:
    steps = result.model_call_steps
    msgs = result.messages
    counts = result.token_counts
    after = result.token_counts_after
    tree = _Fenwick(counts)
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
        body = tree.prefix(end) - base
        prompt = overhead + round(body * scale)
        shared_end = min(prev_end, first_change) if prev_end >= 0 else cut
        shared = overhead + round((tree.prefix(max(shared_end, cut)) - base) * scale)
        now = _timestamp(msgs[end]) if end < len(msgs) else None
        uncached, write, read = cache_.call(end, prompt, shared, now)
        output = _output_tokens(msgs[end], counts[end], scale) if end < len(msgs) else 0
        input_dollars = pricing.dollars(uncached, write, read, 0)
        broke = bool(with_policy and step.cache_break)
        break_dollars = 0.0
        if broke and prev_end >= 0:
            lost = max(0, prev_prompt - read)  # what would have been read had the prefix stayed
            price = pricing.cache_write if pricing.cache == "anthropic" else pricing.input
            break_dollars = lost * (price - pricing.cache_read) / 1e6
        out.append(CallCost(end, prompt, uncached, write, read, output,
                            input_dollars + pricing.dollars(0, 0, 0, output), input_dollars, broke, break_dollars))
        prev_end, prev_cut, prev_prompt = end, cut, prompt
    return tuple(out)


def _fit(result: Result, overhead: int, cuts: Sequence[int], prior: float = 1.0) -> tuple[int, float, int]:
    """(overhead, scale, calls used) fitted by least squares on the recorded prompt
    sizes of at most the first 10 % of model calls (the run without the policy, as
    the log recorded it)."""
    steps = result.model_call_steps
    budget = len(steps) // 10
    xs, ys = [], []
    tree_counts = list(result.token_counts)
    prefix = [0]
    for c in tree_counts:
        prefix.append(prefix[-1] + c)
    for step in steps[:budget]:
        m = result.messages[step.call_index] if step.call_index < len(result.messages) else None
        if m is None or m.usage is None or not m.usage.prompt_tokens:
            continue
        cut = max((c for c in cuts if c < step.call_index), default=0)
        xs.append(prefix[step.call_index] - prefix[cut])
        ys.append(m.usage.prompt_tokens)
    if not xs:
        return overhead, prior, 0
    if len(xs) >= 3 and max(xs) > min(xs):
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        scale = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
        scale = min(2.0, max(0.5, scale))
    else:
        scale = prior  # one or two points cannot separate the overhead from the scale
    fitted = sum(y - scale * x for x, y in zip(xs, ys)) / len(xs)
    return max(0, round(fitted)), scale, len(xs)


def _warm_start(result: Result) -> int:
    """What the first call found in the cache, as recorded (calibration data: it is the
    first call)."""
    steps = result.model_call_steps
    if not steps or steps[0].call_index >= len(result.messages):
        return 0
    u = result.messages[steps[0].call_index].usage
    return u.cache_read_tokens if u is not None else 0


def cost(result: Result, pricing: Pricing | str, *, calibrate: bool = False,
         compactions: Sequence[int] | None = None) -> Cost:
    """Price every model call of ``result`` (a replay of any policy) and of the same run
    without the policy.

    ``calibrate`` fits the per-call overhead and a tokenizer scale on the recorded usage
    of at most the first 10 % of calls. ``compactions`` are the message indices where
    the log's agent compacted its context (found from Claude Code's summaries when not
    given): calls after one do not send what came before it, with or without the policy.
    """
    p = PRICING[pricing] if isinstance(pricing, str) else pricing
    if result.mode != "replay":
        raise ConfigError("cost needs a replay (toolclear.replay): a single pass has no model calls to price")
    cuts = tuple(sorted(compactions)) if compactions is not None else compactions_of(result.messages)
    overhead, scale, used = p.overhead_tokens, p.token_scale, 0
    notes = []
    warm = 0
    if calibrate:
        overhead, scale, used = _fit(result, p.overhead_tokens, cuts, p.token_scale)
        warm = _warm_start(result) if used else 0
        notes.append(f"calibrated on the recorded usage of {used} call(s) (at most the first 10 %): "
                     f"overhead {overhead:,} tokens per call, tokenizer scale {scale:.3f}" if used else
                     "calibration asked for, but the first 10 % of calls recorded no usage: not calibrated")
    if not any(_timestamp(result.messages[s.call_index]) is not None
               for s in result.model_call_steps if s.call_index < len(result.messages)):
        notes.append(f"the log has no call times: calls are taken to follow each other within the cache's "
                     f"{p.ttl_seconds:,}-second TTL")
    if cuts:
        notes.append(f"{len(cuts)} compaction(s) in the log: later calls send only what follows the last one")
    return Cost(
        calls=_price_run(result, p, overhead, scale, True, cuts, warm),
        calls_without_policy=_price_run(result, p, overhead, scale, False, cuts, warm),
        pricing=p, assumptions=tuple(notes), overhead_tokens=overhead, scale=scale, calibrated_on=used,
    )


def recorded_cost(messages: Sequence[Message], pricing: Pricing | str) -> Cost:
    """Price what the log recorded: each assistant message's usage (uncached input,
    cache writes, cache reads, output), as the provider billed it."""
    p = PRICING[pricing] if isinstance(pricing, str) else pricing
    calls = []
    for i, m in enumerate(messages):
        u = m.usage
        if m.role != "assistant" or u is None:
            continue
        inp = p.dollars(u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, 0)
        calls.append(CallCost(i, u.prompt_tokens, u.input_tokens, u.cache_write_tokens, u.cache_read_tokens,
                              u.output_tokens, inp + p.dollars(0, 0, 0, u.output_tokens), inp))
    rows = tuple(calls)
    note = () if rows else ("the log recorded no usage",)
    return Cost(calls=rows, calls_without_policy=rows, pricing=p, assumptions=note)

