"""The one answer a user came for: what a policy saves or costs on a run in dollars,
with the prompt cache counted, and the cheapest setting tried.

``verdict`` replays the setting and a few others scaled to the run (every registered
policy at its defaults and at numbers that make it act on this run) through
``toolclear.compare``, priced and calibrated the same way everywhere (``pricing_of``,
``sent_as``), so the app's first screen, ``toolclear inspect``/``compare``/``advise``/
``report`` and the Corpus page give the same dollars for the same run and setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._kept import KeptFor
from ..cost.logfacts import compactions_of
from ..model import Message, Transcript, forget_copies
from .lab import Comparison, compare, parse_policy, policy_spec

__all__ = ["COMPACTION_SPECS", "DEFAULT_SPECS", "Verdict", "candidates", "scaled", "verdict"]

DEFAULT_SPECS: tuple[str, ...] = ("eino", "eino-reduction:skip_truncation=true", "anthropic", "langchain",
                                  "openhands", "swe-agent")
"""Every built-in clearing family at its reference's defaults: what ``compare`` runs unless told."""
COMPACTION_SPECS: tuple[str, ...] = ("claude-code-compact", "anthropic-compaction", "openhands-summarizing")
"""The compaction policies at their defaults, which the verdict also tries."""


def _round(value: float) -> int:
    from .numbers import nice

    return max(1, nice(value))


def scaled(messages: Sequence[Message], counter: str | None = None) -> list[str]:
    """The token-triggered families at round numbers scaled to this run (a third of its
    tokens, each by the family's own count), so each of them acts on it whatever its size:
    what the verdict tries beside the defaults, and what the app's Compare view suggests."""
    from ..counters import count_tokens
    from ..policies.eino_reduction import reduction_tokens
    from ..policies.langchain import langchain_tokens

    msgs = tuple(messages)
    third = _round(sum(count_tokens(msgs, counter or "eino")) / 3)
    lc_third = _round(sum(langchain_tokens(m) for m in msgs) / 3)
    # compaction counts the prompt as sent (system prompt and tools too): at 60 % of the run's peak
    sixty = _round(0.6 * _peak(msgs, counter, third))
    return [f"eino:threshold={_round(third / 2)},keep={third}", f"anthropic:trigger={third}",
            f"langchain:trigger={lc_third}",
            f"eino-reduction:threshold={_round(reduction_tokens(msgs) / 3)},skip_truncation=true",
            f"anthropic-compaction:trigger={max(50_000, sixty)}", f"codex-compact:limit={sixty}",
            f'langchain-summarization:trigger=["tokens",{lc_third}]']


def suggested(messages: Sequence[Message], counter: str | None, current: str) -> list[str]:
    """Five policies scaled to this conversation, so each of them does something (the
    verdict's own scaled settings, then the masking presets): what the app's Compare
    view starts from."""
    out = [current]
    for spec in (*scaled(messages, counter), "swe-agent", "openhands"):
        if len(out) < 5 and spec.split(":")[0] != current.split(":")[0]:
            out.append(spec)
    return out


def _peak(msgs: tuple[Message, ...], counter: str | None, fallback: int) -> int:
    """The run's largest prompt as sent: the log's recorded one, else ``fallback``."""
    from .lab import sent_as

    cal = sent_as(msgs, counter)
    return max(cal.prompts.values()) if cal is not None and cal.prompts else 3 * fallback


def candidates(messages: Sequence[Message], counter: str | None = None) -> list[str]:
    """The settings a verdict tries on a run: each family at its defaults, and the
    token-triggered ones scaled to this run (``scaled``)."""
    out: list[str] = []
    for spec in (*DEFAULT_SPECS, *COMPACTION_SPECS, *scaled(messages, counter)):
        canonical = policy_spec(parse_policy(spec))
        if canonical not in out:
            out.append(canonical)
    return out


@dataclass(frozen=True)
class Verdict:
    """A setting on one run, in dollars with the prompt cache, beside the cheapest tried."""

    policy: str
    """The setting judged, as ``--policy`` takes it."""
    row: dict[str, Any]
    """Its row (``Comparison.rows`` and its ``spec``): dollars, breaks, changed, needed."""
    best: dict[str, Any] | None
    """The row of the cheapest setting tried (net of re-fetching what it lost), or None
    when none does better than no policy."""
    tried: int
    pricing: str
    notes: tuple[str, ...] = ()
    comparison: Comparison | None = field(default=None, repr=False, compare=False)
    """The judged setting's own comparison: its replay (``results[0]``) and its cost."""
    rows: tuple[dict[str, Any], ...] = ()
    """Every setting tried, the judged one first: ``Comparison.rows`` with its ``spec``."""
    recorded: dict[str, Any] | None = None
    """The run as recorded (``toolclear.recorded``: the agent's own compactions), priced
    the same way: the row every other is measured against."""
    compactions: int = 0
    """How many compactions the log records."""

    @property
    def dollars(self) -> float:
        return float(self.row["dollars"])

    @property
    def dollars_without_policy(self) -> float:
        return float(self.row["dollars_without_policy"])

    @property
    def dollars_saved(self) -> float:
        """Positive: the setting saves money; negative: it costs more than doing nothing."""
        return float(self.row["dollars_saved"])

    @property
    def pays(self) -> bool:
        return float(self.row["net_dollars_saved"]) > 0

    @property
    def headline(self) -> str:
        """The verdict in one sentence, then the cheapest setting in another."""
        from .report import usd

        r, saved = self.row, self.dollars_saved
        breaks = int(r["cache_breaks"])
        against = f"{usd(self.dollars)} against {usd(self.dollars_without_policy)} without it"
        if saved >= 0:
            first = f"{self.policy} saves {usd(saved)} on this run ({against})"
        else:
            first = (f"{self.policy} costs {usd(-saved)} more than doing nothing ({against}): "
                     f"{breaks:,} cache break(s) make the calls after them write the cached prefix again")
        lost = (f"; {int(r['needed_results']):,} of the {int(r['results_cleared']):,} results it changed were "
                "needed later" if r["results_cleared"] else "; it changes nothing")
        if self.best is None:
            second = (f"The run as recorded (its {self.compactions} compaction(s)) is already the cheapest: no "
                      f"setting of the {self.tried} tried does better." if self.compactions else
                      f"No setting of the {self.tried} tried does better than no policy on this run.")
        elif self.best["spec"] == self.policy:
            second = f"It is the cheapest of the {self.tried} settings tried."
        else:
            second = (f"Cheapest of the {self.tried} settings tried: {self.best['spec']}, saving "
                      f"{usd(float(self.best['net_dollars_saved']))} net of re-fetching what it lost.")
        return f"{first}{lost}. {second}"

    def as_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "pays": self.pays, "pricing": self.pricing, "headline": self.headline,
                "row": _plain(self.row), "best": _plain(self.best) if self.best is not None else None,
                "tried": self.tried, "notes": list(self.notes), "rows": [_plain(r) for r in self.rows],
                "recorded": _plain(self.recorded) if self.recorded is not None else None,
                "compactions": self.compactions}


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.item() if callable(getattr(v, "item", None)) else v) for k, v in row.items()}


def verdict(
    run: Transcript | Sequence[Message],
    config: Any = None,
    *,
    pricing: Any = "auto",
    calibrate: bool = True,
    counter: str | None = None,
    tried: Sequence[Any] | None = None,
    offloading: Any = None,
) -> Verdict:
    """``config`` (a config or a ``--policy`` spec; eino's defaults when None) replayed
    on ``run`` and priced with the prompt cache, beside the settings ``tried`` (by
    default ``candidates(run)``): which costs least, and what each lost. ``pricing``:
    "auto" (the log's model, else a stated default), a preset's or model's name, or a
    ``Pricing``. ``offloading`` (eino's) goes with the judged setting only."""
    msgs = run.messages if isinstance(run, Transcript) else tuple(run)
    marks = [k for k, _ in run.marks] if isinstance(run, Transcript) else None
    chosen = parse_policy(config) if isinstance(config, str) else config if config is not None \
        else parse_policy("eino")
    specs = tried if tried is not None else _candidates.get(msgs, lambda: candidates(msgs, counter), extra=counter)
    # every setting tried is priced once per run and kept, the judged one's spec too: a
    # move of the judged setting's sliders away from a tried one must not replay them all
    others = [parse_policy(s) if isinstance(s, str) else s for s in specs]
    mine = policy_spec(chosen)

    def row_of(cmp: Comparison, config: Any) -> dict[str, Any]:
        return {**cmp.rows[0], "spec": policy_spec(config)}

    def rest() -> tuple[dict[str, Any], ...]:
        # one setting at a time, keeping its row only: a 200,000-message run holds one
        # replay at once, and not the copies each one memoised (the judged setting's,
        # replayed after these, keep theirs for the next move of its sliders)
        out = []
        for c in others:
            out.append(row_of(compare(msgs, [c], counter=counter, pricing=pricing, calibrate=calibrate,
                                      recorded=False, compactions=marks), c))
            forget_copies(msgs)
        return tuple(out)

    key = (tuple(policy_spec(c) for c in others), _hashable(pricing), calibrate, counter,
           tuple(marks) if marks is not None else None)
    tried_rows = tuple(r for r in _tried.get(msgs, rest, extra=key) if r["spec"] != mine)
    own = compare(msgs, [chosen], counter=counter, pricing=pricing, calibrate=calibrate, compactions=marks,
                  recorded=False, offloading=offloading)
    rows = (row_of(own, chosen), *tried_rows)
    paying = [r for r in rows if r["net_dollars_saved"] > 0]
    best = min(paying, key=lambda r: (-r["net_dollars_saved"], r["needed_results"])) if paying else None
    as_recorded = parse_policy("as-recorded")
    recorded = rows[0] if mine == "as-recorded" else _recorded_rows.get(msgs, lambda: row_of(compare(
        msgs, [as_recorded], counter=counter, pricing=pricing, calibrate=calibrate, compactions=marks, recorded=False),
        as_recorded), extra=key[1:])
    return Verdict(mine, rows[0], best, len(rows), own.costs[0].pricing.name if own.costs else "",
                   own.notes, own, rows, recorded, len(compactions_of(msgs)))


_candidates: KeptFor[list[str]] = KeptFor(4)
"""The settings tried on a run, worked out once per run and counter (they read every
message: not again on each move of the judged setting's sliders)."""
_recorded_rows: KeptFor[dict[str, Any]] = KeptFor(4)
"""The run as recorded's row, per run and pricing."""
_tried: KeptFor[tuple[dict[str, Any], ...]] = KeptFor(4)
"""The other settings' rows, per run and pricing: moving the judged setting's numbers
(a slider in the app) replays that setting alone."""


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
