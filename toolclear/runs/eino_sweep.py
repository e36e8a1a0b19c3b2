"""Parameter sweeps and slider ranges: which numbers to pick, computed by the core.

``sweep`` runs the policy over a grid of thresholds x keep budgets. A single pass is
cheap to sweep because the window start depends only on the keep budget and the
trigger only on the threshold; replay runs once per grid cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..cost.billing import cost
from ..counters import count_tokens, get_counter
from ..model import Message
from ..policies.eino_clear import ClearToolResultConfig, fast_replay, reduce_by_tokens
from ..schema import Mode
from .numbers import grid_values, nice_ceil

__all__ = ["SliderBounds", "Sweep", "slider_bounds", "sweep", "sweep_axes"]


@dataclass(frozen=True, slots=True)
class SliderBounds:
    """Ranges for the two sliders, sized to the transcript."""

    threshold_max: int
    keep_max: int
    threshold_step: int
    keep_step: int
    total_tokens: int
    tool_result_tokens: int


def _step(top: int) -> int:
    return max(1, nice_ceil(top / 200) if top >= 200 else 1)


def slider_bounds(messages: Sequence[Message], counts: Sequence[int], placeholder: str) -> SliderBounds:
    """Slider maxima just above what the transcript holds (at least 1,000)."""
    total = sum(counts)
    tool = sum(c for m, c in zip(messages, counts) if m.role == "tool" and m.content != placeholder)
    t_max = nice_ceil(max(1000, tool * 1.1))
    k_max = nice_ceil(max(1000, total * 1.1))
    return SliderBounds(t_max, k_max, _step(t_max), _step(k_max), total, tool)


def sweep_axes(bounds: SliderBounds) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The thresholds (from 0 to just under the tool-result total) and keep budgets (to
    just under the whole transcript) worth sweeping: past them every cell is the same."""
    return (tuple(grid_values(bounds.tool_result_tokens, zero=True)),
            tuple(grid_values(bounds.total_tokens)))


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


def sweep(
    messages: Sequence[Message],
    config: ClearToolResultConfig,
    thresholds: Sequence[int],
    keeps: Sequence[int],
    *,
    mode: Mode = "single pass",
    pricing: Any = None,
    calibrate: bool = True,
    compactions: Sequence[int] = (),
) -> Sweep:
    """Tokens saved (and, in replay mode, prompt-cache breaks) for every pair of values.

    In replay mode "tokens saved" is over all model calls (what clearing saves in input
    tokens across the run); in a single pass it is what the final history saves. With
    ``pricing`` (replay) each cell's replay is also priced: dollars saved.
    """
    msgs = tuple(messages)
    counter = get_counter(config.token_counter)
    counts = count_tokens(msgs, counter)
    saved_rows: list[tuple[int, ...]] = []
    cleared_rows: list[tuple[int, ...]] = []
    breaks_rows: list[tuple[int, ...]] = []
    dollar_rows: list[tuple[float, ...]] = []
    needed_rows: list[tuple[int, ...]] = []
    if mode == "replay":
        from .losses import losses

        for t in thresholds:
            saved, cleared, breaks, dollars, needed = [], [], [], [], []
            for k in keeps:
                rp = fast_replay(msgs, replace(config, tool_result_token_threshold=t, keep_recent_tokens=k))
                needed.append(len(losses(rp).needed))
                saved.append(rp.tokens_sent_unreduced - rp.tokens_sent)
                cleared.append(len(rp.cleared_indices))
                breaks.append(rp.cache_breaks)
                if pricing is not None:
                    c = cost(rp, pricing, calibrate=calibrate, compactions=compactions)
                    dollars.append(round(c.dollars_saved, 4))
            saved_rows.append(tuple(saved))
            cleared_rows.append(tuple(cleared))
            breaks_rows.append(tuple(breaks))
            dollar_rows.append(tuple(dollars))
            needed_rows.append(tuple(needed))
        return Sweep(tuple(thresholds), tuple(keeps), tuple(saved_rows), tuple(cleared_rows),
                     tuple(breaks_rows), sum(counts), mode,
                     tuple(dollar_rows) if pricing is not None else None, tuple(needed_rows))
    # single pass: the window depends only on keep, the trigger only on the threshold
    per_keep = []
    for k in keeps:
        r = reduce_by_tokens(msgs, replace(config, tool_result_token_threshold=0, keep_recent_tokens=k))
        per_keep.append((r.total_tool_result_tokens, r.tokens_saved if r.triggered else 0,
                         len(r.cleared_indices)))
    for t in thresholds:
        saved_rows.append(tuple(s if total > t else 0 for total, s, _ in per_keep))
        cleared_rows.append(tuple(c if total > t else 0 for total, _, c in per_keep))
    return Sweep(tuple(thresholds), tuple(keeps), tuple(saved_rows), tuple(cleared_rows), None,
                 sum(counts), mode)
