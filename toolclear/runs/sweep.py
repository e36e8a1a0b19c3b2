"""Parameter sweeps and slider ranges: which numbers to pick, computed by the core.

``sweep`` runs any policy over a grid of its two main numbers (eino's threshold x keep
budget, Anthropic's trigger x tool uses kept, ...), each cell a row of ``compare``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..counters import count_tokens
from ..errors import ConfigError
from ..model import Message
from ..schema import Mode

__all__ = ["Sweep", "sweep", "unit_sizes"]


def unit_sizes(messages: Any, counter: Any = None) -> dict[str, int]:
    """How much of each ``SliderUnit`` a run holds: what a knob over that unit can range
    over (the app sizes its sliders and sweep grids by it; ``why_nothing`` reads it)."""
    from ..policies.eino_reduction import reduction_tokens
    from ..policies.langchain import langchain_tokens

    msgs = tuple(messages)
    counts = count_tokens(msgs, counter)
    return {
        "tokens": sum(counts),
        "tool_tokens": sum(c for m, c in zip(msgs, counts) if m.role == "tool"),
        "lc_tokens": sum(langchain_tokens(m) for m in msgs),
        "rd_tokens": reduction_tokens(msgs),
        "rounds": sum(1 for m in msgs if m.role == "assistant" and m.tool_calls),
        "uses": sum(1 for m in msgs if m.role == "tool"),
        "messages": len(msgs),
        "steps": 20,
    }


@dataclass(frozen=True, slots=True)
class Sweep:
    """Results over thresholds (rows) x keep budgets (columns)."""

    thresholds: tuple[int, ...]
    keeps: tuple[int, ...]
    tokens_saved: tuple[tuple[int, ...], ...]
    cleared: tuple[tuple[int, ...], ...]
    cache_breaks: tuple[tuple[int, ...], ...] | None
    tokens_before: int
    mode: str
    dollars_saved: tuple[tuple[float, ...], ...] | None = None
    """Replay with a pricing: dollars saved over the run (negative: costs more than nothing)."""
    needed: tuple[tuple[int, ...], ...] | None = None
    """Replay: changed results the agent needed later (``toolclear.losses``)."""
    fields: tuple[str, str] = ("tool_result_token_threshold", "keep_recent_tokens")
    """The config fields the rows and the columns set ("" for a single row)."""


def sweep(
    messages: Sequence[Message],
    config: Any,
    thresholds: Sequence[int],
    keeps: Sequence[int],
    *,
    mode: Mode = "single pass",
    pricing: Any = None,
    calibrate: bool = True,
    compactions: Sequence[int] = (),
    fields: tuple[str | None, str] | None = None,
    counter: Any = None,
    offloading: Any = None,
) -> Sweep:
    """Tokens saved (and, in replay mode, prompt-cache breaks, the results needed later
    and, with ``pricing``, dollars saved) for every pair of a policy's two main numbers:
    ``thresholds`` down the rows, ``keeps`` across the columns.

    ``fields`` names the config's fields the rows and columns set (default: the policy's
    two knobs, its trigger then what it keeps; a policy of one knob: ``(None, field)``
    and one row). Every cell is a row of ``toolclear.compare`` on the same run, so a
    cell's numbers and dollars are the Compare view's and the verdict's for that setting.
    In replay mode "tokens saved" is over all model calls; in a single pass it is what
    the final history saves.
    """
    from ..policies import spec_for
    from .lab import compare
    from .losses import losses

    msgs = tuple(messages)
    if fields is None:
        knobs = spec_for(config).preset_of(config).knobs
        if not knobs:
            raise ConfigError(f"{spec_for(config).name} has no number to sweep")
        fields = (knobs[0].field, knobs[-1].field) if len(knobs) > 1 else (None, knobs[0].field)
    row_field, col_field = fields
    rows = tuple(thresholds) if row_field is not None else (0,)
    cols = tuple(keeps)
    configs = [replace(config, **{**({row_field: y} if row_field is not None else {}), col_field: x})
               for y in rows for x in cols]
    replayed = mode == "replay"
    cmp = compare(msgs, configs, mode=mode, counter=counter, pricing=pricing if replayed else None,
                  calibrate=calibrate, compactions=compactions, offloading=offloading, recorded=False)

    def grid(values: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
        return tuple(tuple(values[r * len(cols):(r + 1) * len(cols)]) for r in range(len(rows)))

    results = cmp.results
    saved = [r.tokens_sent_unreduced - r.tokens_sent if replayed else r.tokens_saved for r in results]
    return Sweep(
        rows, cols, grid(saved), grid([len(r.cleared_indices) for r in results]),
        grid([r.cache_breaks for r in results]) if replayed else None,
        sum(count_tokens(msgs, counter or spec_for(config).steps_counter(config) or None)), mode,
        grid([round(c.dollars_saved, 4) for c in cmp.costs]) if cmp.costs else None,
        grid([len(losses(r).needed) for r in results]) if replayed else None,
        fields=(row_field or "", col_field),
    )
