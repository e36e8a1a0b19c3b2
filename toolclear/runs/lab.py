"""The policy lab: any policy, one history or a whole run, side by side.

``apply`` runs one before-model step, ``replay`` every model call of a run, and both
return a ``Result`` whatever the policy; ``compare`` runs several on the same
transcript and tabulates them. Tokens sent are counted with one counter for every
policy (``counter``, eino's estimate unless given), so the numbers compare; each
policy's own trigger still uses its own counter where it has one (LangChain's
approximation, eino's reduction counter).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cost.calibration import STRETCH_CALLS, Calibration, as_sent, beyond_transcript, cut_before
from ..counters import TokenCounter, count_tokens, get_counter, prefix_sums
from ..errors import ConfigError
from ..model import Message, MessageStatus, Transcript
from ..policies import BUILT_IN, spec_for
from ..policies._engine import Engine, assemble
from ..policies.eino_clear import ClearToolResultConfig, model_calls
from ..policies.eino_reduction import ToolSchema
from ..policies.offload import MemoryBackend, StorageBackend
from ..policies.syntax import PolicyConfig, parse_policy, policy_spec
from ..result import Result

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["POLICIES", "STICKY", "Comparison", "PolicyConfig", "apply", "compare", "parse_policy", "policy_name", "policy_spec",
           "recorded", "replay"]

POLICIES: dict[str, type] = {s.name: s.config for s in BUILT_IN}
"""toolclear's own policies by name (``policies.registered()`` lists every one)."""


def policy_name(config: Any) -> str:
    return spec_for(config).name


def _engine(msgs: tuple[Message, ...], config: Any, counter: TokenCounter, backend: StorageBackend | None,
            tools: Sequence[ToolSchema], mode: str) -> Engine:
    engine: Engine = spec_for(config).engine(msgs, config, counter, backend=backend, tools=tools, mode=mode)
    return engine


def _run(messages: Sequence[Message], config: Any, counter: Any, backend: StorageBackend | None,
         tools: Sequence[ToolSchema], mode: str, calibration: Calibration | None = None) -> Result:
    msgs = tuple(messages)
    count = get_counter(counter)
    engine = _engine(msgs, config, count, backend, tools, mode)
    if calibration is not None and hasattr(engine, "affine"):  # a compaction's trigger: the prompt as sent
        compacting: Any = engine
        compacting.affine = (calibration.overhead_tokens, calibration.scale)
        compacting.anchor = _anchor(calibration, prefix_sums(count_tokens(msgs, count)), len(msgs),
                                    spec_for(config).resends_after_compaction)
    elif calibration is not None and hasattr(engine, "offset"):  # triggers that count the whole prompt
        prefix = prefix_sums(count_tokens(msgs, count))
        own: Any = engine

        def offset(length: int) -> int:
            return as_sent(calibration, length, prefix) - own.prefix[length]
        own.offset = offset
    calls = model_calls(msgs) if mode == "replay" else [len(msgs)]
    result = assemble(msgs, engine, config, count, calls, mode=mode)
    finish = getattr(engine, "finish", None)  # a policy whose own state is the final history (eino's reduction)
    return finish(result) if finish is not None else result


def _anchor(cal: Calibration, prefix: Sequence[int], n: int, resends: bool) -> Any:
    """For a compaction policy's trigger: what the log's call at a given point sent beyond
    the transcript it held, so a simulated context is sent as the log says it was. Up to
    the log's first compaction, the call's own; after it (the log then sent another
    context), what it sent at its last call before; once the policy has compacted, the
    fitted overhead (the system prompt and tools), or for a policy whose agent attaches
    context again after a compaction (``resends_after_compaction``) what the log's calls
    sent beyond the transcript after its own compaction, where the log shows one."""
    first_cut = cal.cuts[0] if cal.cuts else n + 1
    before = [k for k in cal.prompts if k < first_cut]
    last_known = max(before) if before else first_cut
    after = sorted([r for stretch in beyond_transcript(cal.prompts, prefix, cal.cuts, cal.scale)[1:]
                    for r in stretch][:STRETCH_CALLS])
    post = after[len(after) // 2] if after and resends else cal.overhead_tokens

    def anchor(length: int, compacted: bool) -> int:
        if compacted:
            return post
        at = length if length <= first_cut else last_known
        return as_sent(cal, at, prefix) - round(cal.scale * prefix[at])
    return anchor


def _calibrated(result: Result, calibration: Calibration | None, counter: Any) -> Result:
    """The replay's steps in tokens as sent: each call's recorded (or fitted) prompt,
    less the policy's savings at the provider's scale."""
    if calibration is None:
        return result
    # the replay's own prefix sums when it kept them (the counter its steps are in)
    prefix = result._trace.prefix if result._trace is not None else prefix_sums(
        count_tokens(result._seen or result.messages, counter))
    spec = spec_for(result.config)
    if spec.compacts:  # its own context, sent as its trigger saw it; the run without it as recorded
        anchor = _anchor(calibration, prefix, len(prefix) - 1, spec.resends_after_compaction)
        firsts = [c.at for c in result.compactions]
        sent = tuple(s._replace(context_tokens=anchor(s.call_index, bool(firsts) and firsts[0] <= s.call_index)
                                + round(calibration.scale * s.context_tokens),
                                context_tokens_unreduced=as_sent(calibration, s.call_index, prefix))
                     for s in result.steps)
        return _with(result, steps=sent, calibration=calibration, notes=(*result.notes, "tokens as sent"),
                     _plain_steps=result.steps)
    counts, after, at = result.token_counts, result.token_counts_after, result.cleared_at
    media = sorted(calibration.media.items())
    steps = []
    cut, order, k, before = -1, [], 0, 0
    for s in result.steps:
        unreduced = as_sent(calibration, s.call_index, prefix)
        if cut != (now := cut_before(calibration.cuts, s.call_index)):
            # what the policy saved on messages before the log's last compaction was not sent anyway
            cut, k, before = now, 0, 0
            order = sorted((c, counts[j] - after[j]) for j, c in enumerate(at[:cut]) if c is not None)
        while k < len(order) and order[k][0] <= s.call_index:
            before += order[k][1]
            k += 1
        # savings on messages before the cut that this call no longer makes (a policy that edits each
        # request afresh and stopped firing once the compaction shrank the prompt) are not taken off twice
        saved = max(0, s.context_tokens_unreduced - s.context_tokens - before)
        if media:  # a cleared image saves what the provider billed for it, not its base64
            for i, fix in media:
                cleared = at[i] if i < len(at) else None
                if cut <= i < s.call_index and cleared is not None and cleared <= s.call_index:
                    saved += fix
        steps.append(s._replace(context_tokens=max(0, unreduced - round(calibration.scale * saved)),
                                context_tokens_unreduced=unreduced))
    note = "tokens as sent: " + "; ".join(calibration.notes) if calibration.notes else "tokens as sent"
    return _with(result, steps=tuple(steps), calibration=calibration, notes=(*result.notes, note),
                 _plain_steps=result.steps)


def _with(result: Result, **changes: Any) -> Result:
    from dataclasses import replace

    return replace(result, **changes)


def apply(
    messages: Sequence[Message],
    config: PolicyConfig | None = None,
    backend: StorageBackend | None = None,
    tools: Sequence[ToolSchema] = (),
    *,
    counter: str | TokenCounter | None = None,
    offloading: Any = None,
) -> Result:
    """One before-model step of ``config`` on ``messages`` (eino's clear policy when
    None). For eino's reduction the returned messages carry eino's processed flag, so
    they are the state the next call starts from; ``backend`` receives its files.
    ``offloading`` goes to a policy that offloads (eino's clear policy)."""
    config = config if config is not None else ClearToolResultConfig()
    spec = spec_for(config)
    if offloading is not None:
        if not spec.offloads or spec.fast_apply is None:
            raise ConfigError(f"offloading belongs to eino's clear policy, not {spec.name}")
        return spec.fast_apply(messages, config, offloading=offloading, backend=backend)
    if spec.fast_apply is not None:
        return spec.fast_apply(messages, config, backend=backend)
    return _run(messages, config, counter, backend, tools, "single pass")


STICKY: tuple[type, ...] = tuple(s.config for s in BUILT_IN if s.sticky)
"""Policies whose edits stay in the agent's history (eino's); the others recompute
from the full history on every call."""

_LOOP_LIMIT = 20_000_000
"""Message-steps a call-by-call replay may walk (it is O(calls x messages))."""


class _LoopEngine:
    """The policy applied call by call as a live adapter applies it: on the history as
    the previous call left it (``persist``) or on the full history every time."""

    def __init__(self, msgs: tuple[Message, ...], config: Any, counter: Any, backend: StorageBackend | None,
                 tools: Sequence[ToolSchema], persist: bool) -> None:
        self.msgs, self.config, self.counter, self.persist = msgs, config, counter, persist
        self.backend, self.tools = backend, tools
        self.state: list[Message] = []
        self.view: dict[int, Message] = {}
        self.last: Result | None = None

    def advance(self, length: int) -> dict[int, Message | None]:
        history = (self.state + list(self.msgs[len(self.state):length]) if self.persist
                   else self.msgs[:length])
        r = apply(history, self.config, self.backend, self.tools, counter=self.counter)
        if self.persist:
            self.state = list(r.messages)
        new = {i: m for i, m in enumerate(r.messages) if m is not self.msgs[i]}
        delta: dict[int, Message | None] = {i: new.get(i) for i in self.view.keys() | new.keys()
                                             if self.view.get(i) is not new.get(i)}
        self.view, self.last = new, r
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        return self.last.statuses[index] if self.last is not None else MessageStatus.KEPT


def replay(
    messages: Sequence[Message],
    config: PolicyConfig | None = None,
    *,
    backend: StorageBackend | None = None,
    tools: Sequence[ToolSchema] = (),
    counter: str | TokenCounter | None = None,
    offloading: Any = None,
    persist: bool | None = None,
    calibration: Calibration | None = None,
) -> Result:
    """The policy before every model call of a whole run (each assistant message is a
    call, its context the messages before it), then once over the whole history.

    ``persist`` says how the agent runs the policy, as the live adapters do: True keeps
    each call's edits in the history the next call starts from, False applies the policy
    to the full history before every call and keeps nothing; None (the default) is the
    policy's own way (eino's two persist, the others do not). A way that is not the
    policy's own is simulated call by call, O(calls x messages).

    ``calibration`` (``toolclear.calibrate(messages)``) puts the steps in tokens as the
    model was sent them, and the triggers of Anthropic's and LangChain's edits see
    that prompt (eino's clear policy counts only tool results; eino's reduction counts
    its own estimate of the messages)."""
    config = config if config is not None else ClearToolResultConfig()
    spec = spec_for(config)
    sticky = spec.sticky
    if persist is not None and persist != sticky:
        if offloading is not None:
            raise ConfigError("offloading is only simulated the way eino runs it (persist=None)")
        msgs = tuple(messages)
        calls = model_calls(msgs)
        if sum(calls) > _LOOP_LIMIT:
            raise ConfigError(f"persist={persist} is simulated call by call and this run would take "
                              f"{sum(calls):,} message-steps (limit {_LOOP_LIMIT:,}); use persist=None")
        # a policy with its own replay (eino's clear policy) has its steps in its own counter
        count = get_counter(spec.steps_counter(config) or counter)
        engine = _LoopEngine(msgs, config, counter, backend, tools, persist)
        result = assemble(msgs, engine, config, count, calls, mode="replay")
        return _calibrated(_with(result, files=dict(backend.files) if isinstance(backend, MemoryBackend) else {},
                                 notes=(f"simulated call by call with persist={persist}",)), calibration, count)
    if spec.fast_replay is not None and (own := spec.steps_counter(config)):  # in its own counter (eino's)
        return _calibrated(spec.fast_replay(messages, config, offloading=offloading, backend=backend), calibration,
                           get_counter(own))
    if offloading is not None:
        raise ConfigError("offloading belongs to eino's clear policy; eino's reduction truncates instead")
    if spec.fast_replay is not None:  # in the caller's counter (the run as recorded)
        return _calibrated(spec.fast_replay(messages, config, counter=counter, backend=backend), calibration,
                           get_counter(counter))
    return _calibrated(_run(messages, config, counter, backend, tools, "replay", calibration), calibration,
                       get_counter(counter))


def recorded(transcript: Transcript | Sequence[Message], *, counter: str | TokenCounter | None = None,
             calibration: Calibration | None = None) -> Result:
    """The run as the agent ran it, call by call: every compaction its log records
    applied at the call where the log shows it (``Result.compactions`` lists them, with
    the log's trigger and pre-compaction tokens). Takes a ``Transcript`` or its
    messages; ``cost``, ``losses``, ``compare`` and the charts take it like any replay."""
    from ..policies.as_recorded import AsRecordedConfig

    messages = transcript.messages if isinstance(transcript, Transcript) else tuple(transcript)
    config: Any = AsRecordedConfig()
    return replay(messages, config, counter=counter, calibration=calibration)


@dataclass(frozen=True)
class Comparison:
    """Several policies on one transcript."""

    configs: tuple[Any, ...]
    results: tuple[Result, ...]
    labels: tuple[str, ...]
    costs: tuple[Any, ...] = ()
    """Each result priced (``toolclear.cost``) when ``compare`` was given a pricing."""
    notes: tuple[str, ...] = ()
    """What the pricing assumed that the log did not say (a stated default model)."""

    @property
    def table(self) -> pd.DataFrame:
        """One row per config: peak context, tokens sent, results cleared, cache breaks."""
        import pandas as pd

        return pd.DataFrame(self.rows)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The table as plain dicts (no pandas): what the CLI prints and JSON carries."""
        priced = list(self.costs) or [None] * len(self.results)
        return [row(label, cfg, r, c) for label, cfg, r, c in zip(self.labels, self.configs, self.results, priced)]


def row(label: str, config: Any, r: Result, c: Any = None) -> dict[str, Any]:
    """One policy's row of a comparison, with its dollars first when priced: the one
    place a row's figures are worked out (compare, the corpus, ``advise``, the report)."""
    sent, unreduced = r.tokens_sent, r.tokens_sent_unreduced
    out: dict[str, Any] = {"policy": label}
    if c is not None:  # dollars first, right after the policy: they are what a user decides on
        out.update(dollars=round(c.dollars, 6), dollars_without_policy=round(c.dollars_without_policy, 6),
                   dollars_saved=round(c.dollars_saved, 6), refetch_dollars=round(c.refetch_dollars, 6),
                   net_dollars_saved=round(c.net_dollars_saved, 6))
    out.update({
        "kind": policy_name(config),
        "model_calls": r.model_call_count,
        "peak_context": r.peak_context,
        "peak_context_unreduced": r.peak_context_unreduced,
        "tokens_sent": sent,
        "tokens_sent_unreduced": unreduced,
        "tokens_saved": unreduced - sent,
        "saved_percent": round(100 * (unreduced - sent) / unreduced, 2) if unreduced else 0.0,
        "results_cleared": len(r.cleared_indices),
        "cache_breaks": r.cache_breaks,
        "final_tokens": r.tokens_after,
        **loss_columns(r, c.losses if c is not None else None),
    })
    return out


def loss_columns(result: Result, lost: Any = None) -> dict[str, int]:
    """What a result lost (``toolclear.losses``, unless already found), as table columns."""
    from .losses import losses

    lost = lost if lost is not None else losses(result)
    return {"needed_results": len(lost.needed), "lost_references": len(lost.references),
            "refetch_tokens": lost.refetch_tokens}


def _label(config: Any) -> str:
    return spec_for(config).label(config)


def compare(
    messages: Sequence[Message],
    configs: Sequence[PolicyConfig],
    *,
    mode: str = "replay",
    counter: str | TokenCounter | None = None,
    backend_factory: Any = None,
    pricing: Any = None,
    calibrate: bool = True,
    compactions: Sequence[int] | None = None,
    calibration: Calibration | None = None,
    offloading: Any = None,
    recorded: bool | None = None,
) -> Comparison:
    """Every config on the same transcript, with the same counter (a replay each, or a
    single pass with ``mode="single pass"``). A policy that needs a backend gets a fresh
    ``MemoryBackend`` (or ``backend_factory()``). With ``pricing`` (a ``Pricing`` or a
    preset's name; replay only) the table gets each policy's dollars, priced exactly as
    ``toolclear.cost(result, pricing, calibrate=..., compactions=...)`` prices one run, so
    a row's dollars equal the headline's for the same config. ``calibration`` (from
    ``toolclear.calibrate``) puts every replay in tokens as sent; without it, ``calibrate``
    calibrates them on the log's recorded usage (``sent_as``). ``offloading`` goes to the
    policies that offload (eino's clear policy). ``recorded`` puts the run as recorded
    (``toolclear.recorded``: the agent's own compactions) first, the row every other is
    measured against: by default when the log records a compaction and the replays are
    priced."""
    from ..cost.logfacts import compactions_of
    from ..policies.offload import MemoryBackend

    msgs = tuple(messages)
    if recorded is None:
        recorded = pricing is not None and mode == "replay" and bool(compactions_of(msgs))
    if recorded and not any(policy_name(c) == "as-recorded" for c in configs):
        from ..policies.as_recorded import AsRecordedConfig

        first: Any = AsRecordedConfig()
        configs = [first, *configs]
    if calibration is None and calibrate and mode == "replay":
        calibration = sent_as(msgs, counter)
    results = []
    for cfg in configs:
        spec = spec_for(cfg)
        offloads = offloading if spec.offloads else None
        needs = spec.needs_backend(cfg) or offloads is not None
        backend = (backend_factory or MemoryBackend)() if needs else None
        if mode == "replay":
            results.append(replay(msgs, cfg, backend=backend, counter=counter, calibration=calibration,
                                  offloading=offloads))
        else:
            results.append(apply(msgs, cfg, backend=backend, counter=counter, offloading=offloads))
    labels = [_label(c) for c in configs]
    seen: dict[str, int] = {}
    for k, lab in enumerate(labels):
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1:
            labels[k] = f"{lab} ({seen[lab]})"
    costs: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    if pricing is not None:
        from ..cost.billing import cost, pricing_of

        if mode != "replay":
            raise ConfigError("pricing needs a replay: a single pass has no model calls to price")
        priced, note = pricing_of(msgs, pricing)
        notes = (note,) if note else ()
        costs = tuple(cost(r, priced, calibrate=calibrate, compactions=compactions) for r in results)
    return Comparison(tuple(configs), tuple(results), tuple(labels), costs, notes)


def sent_as(messages: Sequence[Message], counter: str | TokenCounter | None = None) -> Calibration | None:
    """The run's calibration when its log recorded usage to fit on (replays then speak in
    tokens as the model was sent them), else None: the one rule the app, the CLI, the
    corpus and ``advise`` follow when they calibrate."""
    from ..cost.calibration import calibrate

    found = calibrate(tuple(messages), counter)
    return found if found.fitted else None
