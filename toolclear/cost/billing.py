"""What a run costs in money, with the provider's prompt cache, call by call.

``cost`` prices each model call of a ``Result`` (any policy) and the same run without
the policy (the cache model is ``toolclear.cost.cache_model``; what the log recorded,
``toolclear.cost.logfacts``); ``recorded_cost`` prices what a log recorded. Times come from
the log's recorded usage where it has them; where it does not, calls are taken to
follow each other within the TTL (said in ``Cost.assumptions``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple

from .._gc import paused_gc
from .._kept import KeptFor, Same
from ..counters import prefix_sums
from ..errors import ConfigError
from ..model import Message, Usage, reply_time
from ..result import Result
from .cache_model import (
    _COLUMNS,
    CallCost,
    _columns,
    _prefix,
    _price_fast,
    _rows,
    thinking_kept,
)
from .cache_reference import _price_loop
from .calibration import MAX_SCALE, MIN_SCALE, beyond_transcript, cut_before, fit_line
from .call_facts import _call_facts, _ints
from .logfacts import (
    COMPACTION_TEXT,
    SYNTHETIC_MODEL,
    _cut_before_each,
    _log_arrays,
    _log_facts,
    _log_of,
    _numpy,
    _writes_one_hour,
    cache_resets,
    compactions_of,
)
from .per_run import with_after_cuts, without_policy
from .prices import MAX_PRICE, PRICING, CacheKind, Pricing, pricing_for, resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPACTION_TEXT", "MAX_PRICE", "PRICING", "SYNTHETIC_MODEL", "CacheKind", "CallCost", "Cost", "Pricing",
           "RecordedTotal", "cache_resets", "call_dollars", "compactions_of", "cost", "pricing_for", "recorded_cost",
           "recorded_total", "thinking_kept"]


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
    segment_extras: tuple[int, ...] = ()
    """What the calls before the log's first compaction and after each sent beyond the
    overhead (calibrated only; () when nothing differs)."""
    compaction_calls: tuple[CallCost, ...] = ()
    """The summarization calls of the run's compactions (each reads the whole context and
    writes the summary), with the policy: a compaction policy's own, else the log's."""
    compaction_calls_without_policy: tuple[CallCost, ...] = ()
    """The log's own summarization calls: the run without the policy compacts as recorded."""
    _result: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def losses(self) -> Any:
        """What the policy lost (``toolclear.losses`` of the priced replay), found when
        first asked: pricing alone never pays for it."""
        from ..runs.losses import losses

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
        return self._sum("dollars") + sum(c.dollars for c in self.compaction_calls)

    @property
    def input_dollars(self) -> float:
        return self._sum("input_dollars") + sum(c.input_dollars for c in self.compaction_calls)

    @property
    def compaction_dollars(self) -> float:
        """What the summarization calls cost (in ``dollars``)."""
        return sum(c.dollars for c in self.compaction_calls)

    @property
    def output_dollars(self) -> float:
        return self.dollars - self.input_dollars

    @property
    def dollars_without_policy(self) -> float:
        return self._sum("dollars", True) + sum(c.dollars for c in self.compaction_calls_without_policy)

    @property
    def input_dollars_without_policy(self) -> float:
        return self._sum("input_dollars", True) + sum(c.input_dollars for c in self.compaction_calls_without_policy)

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


def _fit(result: Result, overhead: int, cuts: Sequence[int], prior: float = 1.0) -> tuple[int, float, int]:
    """(overhead, scale, calls used) fitted by least squares on the recorded prompt
    sizes of at most the first 10 % of model calls (the run without the policy, as
    the log recorded it)."""
    np = _numpy()
    if np is None:
        return _fit_loop(result, overhead, cuts, prior)
    budget = result.model_call_count // 10
    log = _log_of(result)
    if not budget or not _log_facts(log)[1]:  # no call to fit on
        return overhead, prior, 0
    # a fact of the run: every replay of it calls where the log did, from the same counts
    return _fit_kept.get(result.token_counts, lambda: _fit_arrays(result, log, budget, overhead, cuts, prior),
                         extra=(id(log), budget, overhead, tuple(cuts), prior))


_fit_kept: KeptFor[tuple[int, float, int]] = KeptFor(8)


def _fit_arrays(result: Result, log: Sequence[Message], budget: int, overhead: int, cuts: Sequence[int],
                prior: float) -> tuple[int, float, int]:
    np = _numpy()
    tr = result._trace
    ends = (_ints(tr.ends)[:budget] if tr is not None else
            np.fromiter((s.call_index for s in result.steps[:budget]), dtype=np.int64, count=budget))
    ends = ends[ends < len(log)]
    ys = _log_arrays(log).prompt[ends]
    ends, ys = ends[ys > 0], ys[ys > 0]
    if not len(ys):
        return overhead, prior, 0
    prefix = _prefix(result)
    cut = _cut_before_each(cuts, ends)
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


def _segment_extras(result: Result, overhead: int, scale: float, cuts: Sequence[int]) -> tuple[int, ...]:
    """What the calls between two of the log's compactions sent beyond the fitted
    overhead, one figure per stretch (before the first, after each): the median
    residual of its first recorded calls. Before the first compaction of a file that
    starts mid-session that is the history the file lacks; after one, the files and
    todo lists Claude Code attaches again. () when nothing differs."""
    if not cuts:
        return ()
    log = _log_of(result)
    # a fact of the run: every replay of it (each policy of a sweep) calls where the log did
    return _extras_kept.get(result.token_counts, lambda: _extras(result, log, overhead, scale, cuts),
                            extra=(id(log), overhead, scale, tuple(cuts)))


_extras_kept: KeptFor[tuple[int, ...]] = KeptFor(8)


def _extras(result: Result, log: Sequence[Message], overhead: int, scale: float, cuts: Sequence[int]) -> tuple[int, ...]:
    prompts = {}
    for step in result.model_call_steps:
        end = step.call_index
        u = log[end].usage if end < len(log) else None
        if u is not None and u.prompt_tokens and u.model != SYNTHETIC_MODEL:
            prompts[end] = u.prompt_tokens
    found = beyond_transcript(prompts, prefix_sums(result.token_counts), cuts, scale)
    extras = [sorted(r)[len(r) // 2] - overhead if r else 0 for r in found]
    return tuple(extras) if any(extras) else ()


def _spread(values: Sequence[int]) -> str:
    """A few figures in full; many as their median and range (a session that compacted
    400 times read as 400 numbers)."""
    if len(values) <= 6:
        return ", ".join(f"{v:+,}" for v in values)
    ordered = sorted(values)
    return (f"{ordered[len(ordered) // 2]:+,} at the median of {len(ordered):,} stretches "
            f"(from {ordered[0]:+,} to {ordered[-1]:+,})")


def _calibrated_prices(result: Result, p: Pricing, cuts: Sequence[int],
                       notes: list[str]) -> tuple[int, float, int, int, tuple[int, ...]]:
    """(overhead, scale, calls fitted on, warm start, each stretch's extra) fitted on the
    log's recorded usage; what was assumed is added to ``notes``."""
    overhead, scale, used = _fit(result, p.overhead_tokens, cuts, p.token_scale)
    warm = _warm_start(result) if used else 0
    extras = _segment_extras(result, overhead, scale, cuts) if used else ()
    if extras:
        notes.append("the prompt beyond the transcript read again after each of the log's compactions (the "
                     "history a file that starts mid-session lacks, what the agent attaches again): "
                     + _spread(extras) + " tokens")
    notes.append(f"calibrated on the recorded usage of {used} call(s) (at most the first 10 %): "
                 f"overhead {overhead:,} tokens per call, tokenizer scale {scale:.3f}" if used else
                 "calibration asked for, but the first 10 % of calls recorded no usage: not calibrated")
    if used and scale in (MIN_SCALE, MAX_SCALE):
        notes.append(f"poor fit: the tokenizer scale hit its bound ({scale}); the transcript may not hold what "
                     "the model was sent, so these figures are rough (compare them with the recorded cost)")
    return overhead, scale, used, warm, extras


def _columns_of(result: Result, p: Pricing, overhead: int, scale: float, with_policy: bool, cuts: Sequence[int],
                warm: int, facts: Any, resets: Mapping[int, int], kept: Any, extras: tuple[int, ...],
                compacts: bool) -> Mapping[str, Any]:
    """One column of ``cost``. A compaction policy stands in for the log's compactions:
    its run is priced without them, each stretch after one of its own at what the agent
    sends again after a compaction (as the log shows it)."""
    at: list[int] | None = None
    if with_policy and compacts:
        cuts, at = (), [c.at - 1 for c in result.compactions]
        extras = (extras[:1] + (_resent(result, extras),) * len(at)) if extras else ()
    if facts is not None:
        return _price_fast(result, p, overhead, scale, with_policy, cuts, warm, facts, resets, kept, extras, at)
    return _price_loop(result, p, overhead, scale, with_policy, cuts, warm, resets, kept, extras, at)


def _resent(result: Result, extras: Sequence[int]) -> int:
    """What a compaction policy's calls send again after each of its compactions: for a
    policy that says the agent attaches context again (Claude Code's files and todos),
    the median of what the log's own compactions show; else nothing."""
    from ..policies import spec_for

    if len(extras) < 2 or not spec_for(result.config).resends_after_compaction:
        return 0
    after = sorted(extras[1:])
    return after[len(after) // 2]


def _compacts(result: Result) -> bool:
    """Whether ``result`` is a compaction policy's (it stands in for the log's compactions)."""
    from ..policies import spec_for

    try:
        return spec_for(result.config).compacts
    except ConfigError:
        return False


def _log_summarizations(result: Result, cuts: Sequence[int],
                        scale: float) -> tuple[tuple[int, int, int, bool, Usage | None], ...]:
    """(call, context before, summary tokens, cached, billed) of each compaction the log
    records: the context as the log records it (Claude Code's pre-compaction tokens, else
    the prompt of the last recorded call before it), the summary as the transcript holds
    it, and the call's own usage where the log bills it (Anthropic's iterations)."""
    log = _log_of(result)
    # a fact of the run: every replay of it calls where the log did, from the same counts
    return _summarizations_kept.get(result.token_counts, lambda: _log_summarizations_of(result, log, cuts, scale),
                                    extra=(id(log), tuple(cuts), scale, result.mode, len(result.steps)))


_summarizations_kept: KeptFor[tuple[tuple[int, int, int, bool, Usage | None], ...]] = KeptFor(8)


def _log_summarizations_of(result: Result, log: Sequence[Message], cuts: Sequence[int],
                           scale: float) -> tuple[tuple[int, int, int, bool, Usage | None], ...]:
    from .logfacts import context_before, log_compactions

    by_index = {c.position: c for c in log_compactions(log)}
    tr = result._trace
    ends = tr.ends[:-1] if tr is not None and len(tr.ends) == len(result.steps) and result.mode == "replay" \
        else [s.call_index for s in result.model_call_steps]
    out = []
    for cut in cuts:
        pos = bisect_left(ends, cut + 1)
        if pos >= len(ends):
            continue
        c = by_index.get(cut)
        before = context_before(log, cut, c.pre_tokens if c is not None else 0)
        summary = round(scale * result.token_counts[cut]) if c is None or c.summary else 0
        u = log[cut].usage
        out.append((ends[pos], before, summary, True, u.compaction if u is not None else None))
    return tuple(out)


def _summarizations(compactions: Sequence[tuple[int, int, int, bool, Usage | None]],
                    p: Pricing) -> tuple[CallCost, ...]:
    """Each compaction's summarization call priced: as the log billed it where it records
    the call (Anthropic's ``usage.iterations``), else modelled: it sends the context it
    compacts (a prefix the cache holds from the call before, read from it where the
    provider caches and the policy lets it) and writes the summary. The log's own (a
    kept tuple) are priced once per pricing."""
    try:
        hash(p)
    except TypeError:  # a Pricing made with a list in it: priced, not kept
        return _summarizations_of(compactions, p)
    return _priced_kept.get(compactions, lambda: _summarizations_of(compactions, p), extra=p)


_priced_kept: KeptFor[tuple[CallCost, ...]] = KeptFor(8)


def _summarizations_of(compactions: Sequence[tuple[int, int, int, bool, Usage | None]],
                       p: Pricing) -> tuple[CallCost, ...]:
    out = []
    for at, before, summary, cached, billed in compactions:
        if billed is not None:
            out.append(_billed_call(at, billed, p))
            continue
        if before <= 0:
            continue
        price = p.for_prompt(before)
        read = before if cached and p.cache != "none" and before >= p.min_cacheable else 0
        inp = price.dollars(before - read, 0, read, 0)
        out.append(CallCost(at, before, before - read, 0, read, summary, inp + price.dollars(0, 0, 0, summary), inp))
    return tuple(out)


def _billed_call(at: int, u: Usage, p: Pricing) -> CallCost:
    """A call as the log billed it (1-hour cache writes at the 1-hour rate)."""
    p = p.for_prompt(u.prompt_tokens)
    one_h = min(u.cache_write_1h_tokens, u.cache_write_tokens)
    write_1h = p.cache_write_1h if p.cache_write_1h is not None else p.cache_write
    inp = p.dollars(u.input_tokens, u.cache_write_tokens - one_h, u.cache_read_tokens, 0) + one_h * write_1h / 1e6
    return CallCost(at, u.prompt_tokens, u.input_tokens, u.cache_write_tokens, u.cache_read_tokens,
                    u.output_tokens, inp + p.dollars(0, 0, 0, u.output_tokens), inp)


def _warm_start(result: Result) -> int:
    """What the first call found in the cache, as recorded (calibration data: it is the
    first call)."""
    if result.model_call_count == 0:
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


def cost(result: Result, pricing: Pricing | str | None = None, *, calibrate: bool = True,
         compactions: Sequence[int] | None = None) -> Cost:
    """Price every model call of ``result`` (a replay of any policy) and of the same run
    without the policy, at ``pricing`` (a ``Pricing``, a preset's or a model's name; by
    default the prices of the model most of the log's calls name).

    ``calibrate`` (the default everywhere toolclear prices a run) fits the per-call
    overhead and a tokenizer scale on the recorded usage of at most the first 10 % of
    calls; a log that recorded none is priced at the preset's figures, as with
    ``calibrate=False``. ``compactions`` are the message indices where
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
    extras: tuple[int, ...] = ()
    if calibrate:
        overhead, scale, used, warm, extras = _calibrated_prices(result, p, cuts, notes)
    kept = thinking_kept(p.model or p.name)
    facts = _call_facts(result, scale, kept) if _numpy() is not None else None
    if (facts is not None and not facts["timed"]) or (facts is None and not any(
            reply_time(result.messages[s.call_index]) is not None
            for s in result.model_call_steps if s.call_index < len(result.messages))):
        notes.append(f"the log has no call times: calls are taken to follow each other within the cache's "
                     f"{p.ttl_seconds:,}-second TTL")
    if cuts:
        notes.append(f"{len(cuts)} compaction(s) in the log: later calls send only what follows the last one")
    if one_hour:
        notes.append("the log wrote 1-hour cache entries: the cache lives an hour and writes cost the 1-hour rate")
    resets: Mapping[int, int] = cache_resets(result._seen or result.messages, p.ttl_seconds, cuts) \
        if p.cache != "none" else {}
    own_resets = resets  # a compaction policy's run keeps the log's cache drops, not what followed its compactions
    if calibrate and cuts and p.cache != "none":
        resets = with_after_cuts(result._seen or result.messages, cuts, resets)
    if resets:
        notes.append(f"the log's cache held only its first tokens at {len(resets)} call(s) within its lifetime (the "
                     "client or the provider dropped the rest): so it does in the simulation, with or without the "
                     "policy")
    if kept != "all" and facts is not None and facts["think"] is not None:
        notes.append(f"{p.model or p.name} does not re-send earlier thinking "
                     + ("(thoughts are never sent back)" if kept == "none" else "once a new user turn starts")
                     + ": it is not billed as input")
    compacts = _compacts(result)
    if compacts:
        notes.append(f"the policy compacts in place of the log's {len(cuts)} compaction(s): priced without them; "
                     "the run without it compacts as recorded" if cuts else "the policy compacts the context")
    with paused_gc():  # arrays and a few lists, no cycles: nothing for the collector to find
        with_ = _columns_of(result, p, overhead, scale, True, cuts, warm, facts,
                            own_resets if compacts else resets, kept, extras, compacts)
        without = without_policy(
            result, facts, (p, overhead, scale, tuple(cuts), warm, Same(resets), kept, extras),
            lambda: _columns_of(result, p, overhead, scale, False, cuts, warm, facts, resets, kept, extras, compacts))
    logged = _log_summarizations(result, cuts, scale)
    own = [(c.at, c.read_tokens or c.tokens_before, c.summary_tokens, c.cached, None) for c in result.compactions
           if c.called] if compacts else logged
    logged_calls = _summarizations(logged, p)
    return Cost(
        columns=with_,
        columns_without_policy=without,
        pricing=p, assumptions=tuple(notes), overhead_tokens=overhead, scale=scale, calibrated_on=used,
        segment_extras=extras, compaction_calls=_summarizations(own, p) if own is not logged else logged_calls,
        compaction_calls_without_policy=logged_calls, _result=result,
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

    # an image's saving grows by its fix from the first call that both follows it and has it cleared:
    # summed once, then looked up per call (a loop over every image for every call was quadratic)
    grown = sorted((max(i + 1, at), fix[i]) for i in order if (at := result.cleared_at[i]) is not None)
    starts = [s for s, _ in grown]
    sums = [0, *accumulate(f for _, f in grown)]

    def changed_fix(call: int) -> int:  # images already cleared by this call
        return sums[bisect_right(starts, call)]
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
        trace = trace._replace(prefix=array("q", prefix), saved=saved, changed_saved=each)
    billed = sum(fix.values())
    note = (f"{len(fix)} message(s) with images, PDFs or audio counted as {_provider(p)} bills them (images by "
            f"their pixels, PDFs by their pages, audio by its length): {billed:+,} tokens against their base64 text; "
            f"{ASSUMED}")
    return replace(result, token_counts=tuple(counts), token_counts_original=tuple(counts), _counts_after=tuple(after),
                   steps=tuple(steps), _trace=trace), note


def recorded_cost(messages: Sequence[Message], pricing: Pricing | str | None = None) -> Cost:
    """Price what the log recorded: each assistant message's usage (uncached input,
    cache writes, cache reads, output), as the provider billed it. With no ``pricing``,
    each call at its own model's preset (``pricing_for``: a session that mixes models,
    Haiku subagents in an Opus session, is priced call by call); 1-hour cache writes at
    the 1-hour rate. Claude Code's ``<synthetic>`` replies are not calls and cost nothing."""
    fixed = resolve(pricing) if pricing is not None else None
    calls, notes, unknown = [], [], set()
    compactions: list[CallCost] = []  # what the provider billed apart for its compactions
    by_model: dict[str, Pricing | None] = {}  # a session names a model or two: looked up once each
    for i, m in enumerate(messages):
        u = m.usage
        if m.role != "assistant" or u is None or u.model == SYNTHETIC_MODEL:
            continue
        p = fixed
        if p is None:
            if u.model not in by_model:
                try:
                    by_model[u.model] = pricing_for(u.model)
                except ConfigError:
                    by_model[u.model] = None
            p = by_model[u.model]
            if p is None:
                unknown.add(u.model or "(none)")
                continue
        calls.append(_billed_call(i, u, p))
        if u.compaction is not None:
            compactions.append(_billed_call(i, u.compaction, p))
    if unknown:
        notes.append(f"calls of {', '.join(sorted(unknown))} left out: no pricing preset covers that model")
    if not calls:
        notes.append("the log recorded no usage")
    cols = _columns(calls)
    shown = fixed if fixed is not None else _run_preset(messages)
    if compactions:
        notes.append(f"{len(compactions)} call(s) compacted the context first, billed apart (usage.iterations)")
    return Cost(columns=cols, columns_without_policy=cols, pricing=shown, assumptions=tuple(notes),
                compaction_calls=tuple(compactions), compaction_calls_without_policy=tuple(compactions))


def run_pricing(messages: Sequence[Message], pricing: Pricing | str | None = "auto") -> Pricing | None:
    """The prices of one run: ``pricing`` as given (a preset's name, a ``Pricing`` or
    None), or with ``"auto"`` the preset of the model most of its calls name
    (``pricing_for``; a ``ConfigError`` when no preset covers it)."""
    if pricing != "auto":
        return resolve(pricing) if pricing is not None else None
    from .windows import run_model

    return pricing_for(run_model(messages))


DEFAULT_PRICING = "claude-sonnet-4-5"
"""What a run is priced at when its log names no model toolclear can price (SWE-agent,
mini-swe-agent and OpenHands trajectories often do not): a stated default, said in a
note beside the dollars, never a silently dropped run."""


def pricing_of(messages: Sequence[Message], pricing: Pricing | str | None = "auto") -> tuple[Pricing, str]:
    """The prices of one run and what they assumed: ``pricing`` as given, or with
    ``"auto"`` (or None) the prices of the model its log names, else ``DEFAULT_PRICING``
    with a note that says so. The one rule the app, the CLI, the corpus and ``advise``
    price a run by."""
    if pricing not in (None, "auto"):
        assert pricing is not None
        return resolve(pricing), ""
    from .windows import run_model

    model = run_model(messages)
    try:
        return pricing_for(model), ""
    except ConfigError:
        said = f"names {model}, which no price list covers" if model else "names no model"
        return resolve(DEFAULT_PRICING), f"the log {said}: priced at {DEFAULT_PRICING} (toolclear's default)"


def _run_preset(messages: Sequence[Message]) -> Pricing:
    """The preset of the model most calls name, to stand for a run priced per call."""
    try:
        found = run_pricing(messages)
        assert found is not None
        return found
    except ConfigError:
        return Pricing(input=0.0, output=0.0, cache="none", name="(each call at its model's prices)")


class RecordedTotal(NamedTuple):
    """The recorded bill of several logs, each call once."""

    dollars: float
    calls: int
    shared: int
    """Calls found in more than one log (a resumed session repeats the calls it resumed),
    billed once: the first time they appear."""


def call_dollars(messages: Sequence[Message], cost: Cost | None = None) -> list[tuple[str, float]]:
    """(the call's ids, its recorded dollars) of each call ``recorded_cost`` prices (or
    ``cost``, its answer already worked out); ids are "" where the log records none."""
    cost = cost if cost is not None else recorded_cost(messages)
    out = []
    for c in cost.calls:
        u = messages[c.call_index].usage
        out.append((u.call_id if u is not None else "", c.dollars))
    return out


def recorded_total(per_log: Iterable[Sequence[tuple[str, float]]]) -> RecordedTotal:
    """Sum each log's ``call_dollars``, billing a call that several logs hold once (as
    ccusage does, by the provider's message and request ids); calls without ids always
    count."""
    seen: set[str] = set()
    dollars, calls, shared = 0.0, 0, 0
    for log in per_log:
        for ident, amount in log:
            if ident:
                if ident in seen:
                    shared += 1
                    continue
                seen.add(ident)
            dollars += amount
            calls += 1
    return RecordedTotal(round(dollars, 6), calls, shared)