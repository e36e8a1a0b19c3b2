"""The prompt-cache model's reference: one call at a time, the cache's entries kept as a
stack (``_Cache``) and the tokens of the messages as each call sees them in a Fenwick
tree. ``cache_model._price_fast`` is the same model over all calls at once; the tests
hold the two equal call for call, and the cost uses this one where a policy's changes
reach below earlier ones (a compaction with a kept tail)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

from ..model import Message, reply_time
from ..result import Result
from .cache_model import CallCost, ThinkingKept, _columns, _not_sent
from .logfacts import _log_of, _thinking_facts
from .prices import Pricing

__all__: list[str] = []


class _Fenwick:
    """Prefix sums of the tokens of the messages as the current call sees them."""

    def __init__(self, values: Sequence[int]) -> None:
        self.n = len(values)
        self.values = list(values)
        # built from the prefix sums in one pass: node j sums the j & -j values ending at j
        pre = list(accumulate(self.values, initial=0))
        self.tree = [0, *(pre[j] - pre[j - (j & -j)] for j in range(1, self.n + 1))]

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
                kept: ThinkingKept = "all", extras: Sequence[int] = (),
                extra_at: Sequence[int] | None = None) -> dict[str, list[Any]]:
    return _columns(_price_run(result, pricing, overhead, scale, with_policy, cuts, warm, resets, kept, extras,
                               extra_at))


def _price_run(result: Result, pricing: Pricing, overhead: int, scale: float, with_policy: bool,
               cuts: Sequence[int], warm: int = 0, resets: Mapping[int, int] | None = None,
               kept: ThinkingKept = "all", extras: Sequence[int] = (),
               extra_at: Sequence[int] | None = None) -> tuple[CallCost, ...]:
    """The reference: one call at a time, the cache's entries kept as a stack.
    ``extras[k]``: what the calls after the k-th compaction send beyond the overhead
    (the history a file that starts mid-session lacks, before the first; the files
    Claude Code attaches again after one); the compactions are ``extra_at`` where given
    (a compaction policy's own), else ``cuts``."""
    from bisect import bisect_left
    steps = result.model_call_steps
    msgs = result.messages
    log = _log_of(result)  # each call's time and output as recorded (a policy may rebuild the message)
    counts = result.token_counts
    after = result.token_counts_after
    tree = _Fenwick(counts)
    thinking = _thinking_facts(msgs, counts, log) if kept != "all" else None
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
        if with_policy and step.cleared_indices:
            for i in step.cleared_indices:
                tree.set(i, after[i] if result.cleared_at[i] is not None else counts[i])
            first_change = min(step.cleared_indices)
        if cut != prev_cut:
            cache_.invalidate_from(-1)
            prev_end = -1
        elif with_policy and step.cleared_indices:
            cache_.invalidate_from(first_change)
        base = tree.prefix(cut)
        # the step's own count of what it sent (exact); the tree only finds prefixes
        body = (step.context_tokens if with_policy else step.context_tokens_unreduced) - base
        body -= _not_sent(thinking, kept, cut, end, end)
        seg = cut_pos if extra_at is None else bisect_left(extra_at, end)
        extra = extras[min(seg, len(extras) - 1)] if extras else 0
        prompt = max(0, overhead + extra + round(body * scale))
        shared_end = min(prev_end, first_change) if prev_end >= 0 else cut
        if prev_end >= 0 and first_change >= prev_end:
            shared = prev_prompt  # nothing the last call sent changed: all of it is a prefix
        else:
            upto = max(shared_end, cut)
            shared = max(0, overhead + extra + round(
                (tree.prefix(upto) - base - _not_sent(thinking, kept, cut, end, upto)) * scale))
        now = reply_time(log[end]) if end < len(log) else None
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
