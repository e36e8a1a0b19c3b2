"""Plotly figures for the inspector (plotly and numpy are imported only here).

Every number comes from a core result; this module only draws. Text from transcripts
(tool names, roles) is HTML-escaped before it reaches plotly, which renders a few tags.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from ..model import Message, MessageStatus, Slot, memo_put
from ..policies import spec_for
from ..result import Result, _ints
from ..runs.report import display_text, protected_from
from ..runs.sweep import Sweep

__all__ = ["MAX_COLUMNS", "STATUS_COLORS", "SVG_COLUMNS", "heatmap_figure", "replay_figure", "usage_figure",
           "usage_svg"]

STATUS_COLORS = {
    "protected": "#2ca02c",
    "cleared": "#d62728",
    "already cleared": "#8c8c8c",
    "excluded": "#9467bd",
    "offloaded": "#ff7f0e",
    "compacted": "#c49c94",
    "kept": "#1f77b4",
    "other message": "#c7d4e3",
}
COMPACTION_COLOR = "#8c564b"
"""Brown: the log's compactions, apart from every status colour (excluded is purple)."""
_ORDER = ["cleared", "compacted", "offloaded", "protected", "excluded", "already cleared", "kept", "other message"]


MAX_COLUMNS = 1000
"""Above this many messages the usage chart draws columns of ``ceil(n / 1000)``
messages each: a screen shows no more, and the browser gets a tenth of the data."""


def _binned_traces(n: int, cats: Any, before: Any, after: Any) -> tuple[list[dict[str, Any]], int]:
    """Stacked columns of ``k`` messages (tokens per status summed), and one invisible
    line over their tops whose hover names the messages and what happened to them."""
    import numpy as np

    k = -(-n // MAX_COLUMNS)
    bins = np.arange(n) // k
    nb = int(bins[-1]) + 1
    centers = np.arange(nb) * k + (k - 1) / 2
    traces: list[dict[str, Any]] = []
    counts: dict[str, Any] = {}
    edges = np.append(np.arange(nb) * k, n) - 0.5
    for cat in _ORDER:
        mask = cats == cat
        if not mask.any():
            continue
        counts[cat] = np.bincount(bins[mask], minlength=nb)
        sums = np.bincount(bins[mask], weights=before[mask], minlength=nb)
        # one stacked step area per status: a single SVG path, where 1,000 bars would be 1,000
        traces.append({"type": "scatter", "mode": "lines", "x": edges, "y": np.append(sums, sums[-1]),
                       "stackgroup": "tokens", "line": {"width": 0, "shape": "hv", "color": STATUS_COLORS[cat]},
                       "fillcolor": STATUS_COLORS[cat], "name": cat, "hoverinfo": "skip"})
    tops = np.bincount(bins, weights=before, minlength=nb)
    after_sum = np.bincount(bins, weights=after, minlength=nb)
    first = np.arange(nb) * k
    last = np.minimum(first + k - 1, n - 1)
    text = [", ".join(f"{int(c[b])} {cat}" for cat, c in counts.items() if c[b]) for b in range(nb)]
    traces.append({
        "type": "scatter", "mode": "lines", "x": centers, "y": tops, "showlegend": False, "name": "messages",
        "line": {"width": 0, "color": "rgba(0,0,0,0)"}, "customdata": np.stack([first, last, after_sum], axis=1),
        "hovertext": text,
        "hovertemplate": "#%{customdata[0]}–#%{customdata[1]}: %{hovertext}<br>tokens %{y:,} → "
                         "%{customdata[2]:,}<extra></extra>",
    })
    return traces, k


def _window_label(result: Result, start: int) -> str:
    """'window starts at #17', or, when the whole run fits the keep budget (the window then
    also 'starts' at #0), that it all fits."""
    total = sum(result.token_counts_original or result.token_counts)
    if start == 0 and total <= result.config.keep_recent_tokens:
        return f"the whole run ({total:,} tokens) fits in the window"
    return f"window starts at #{start}"


def _hover_label(m: Message) -> str:
    """'tool read_file' / 'user', escaped for plotly; memoised on the message."""
    hit = m._memo.get(Slot.HOVER)
    if hit is None:
        hit = html.escape(display_text(f"{m.role} {m.tool_name}" if m.role == "tool" else m.role))
        memo_put(m, Slot.HOVER, hit)
    return hit


def _mark_shapes(marks: Sequence[tuple[int, str]], offset: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A dotted vertical line and a label per event the log recorded (compactions)."""
    shapes, notes = [], []
    for k, label in marks:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": k + offset, "x1": k + offset,
                       "y0": 0, "y1": 1, "line": {"color": COMPACTION_COLOR, "width": 1.5, "dash": "dot"}})
        notes.append({"x": k + offset, "y": 0.93, "xref": "x", "yref": "paper", "text": display_text(label),
                      "showarrow": False, "xanchor": "right", "textangle": -90, "font": {"color": COMPACTION_COLOR}})
    return shapes, notes


def _window_overlay(result: Result, original: Sequence[Message], n: int, per: int, right: float,
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[int]]:
    """A windowed policy's own marks (eino's clear policy): the running tool-result total against the
    threshold (right axis) and the protected window."""
    import numpy as np

    config = result.config
    x = np.arange(n)
    traces: list[dict[str, Any]] = []
    # the running total the trigger looks at: tool results not already cleared, as they arrived
    counted = np.asarray([m.role == "tool" and m.content != config.placeholder for m in original], dtype=bool)
    policy_counts = np.asarray(result.token_counts, dtype=np.int64)
    running = np.cumsum(np.where(counted, policy_counts, 0)) if n else np.zeros(0, dtype=np.int64)
    ends = x[per - 1 :: per] if per > 1 else x  # the running total at the end of each column
    if per > 1 and len(ends) and ends[-1] != n - 1:
        ends = np.append(ends, n - 1)
    traces.append({
        "type": "scatter", "x": ends, "y": running[ends], "name": "tool-result tokens so far (right axis)",
        "yaxis": "y2",
        "mode": "lines", "line": {"color": "#444", "width": 1.5},
        "hovertemplate": "#%{x}: %{y:,} tool-result tokens so far<extra></extra>",
    })
    traces.append({
        "type": "scatter", "x": [-0.5, right], "y": [config.tool_result_token_threshold] * 2,
        "name": f"threshold {config.tool_result_token_threshold:,} (right axis: compared with that total)",
        "yaxis": "y2", "mode": "lines",
        "line": {"color": "#d62728", "dash": "dash", "width": 1.5}, "hoverinfo": "skip",
    })
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    start = protected_from(result)
    if start is not None and n:
        shapes = [
            {"type": "rect", "xref": "x", "yref": "paper", "x0": start - 0.5, "x1": right, "y0": 0, "y1": 1,
             "fillcolor": "#2ca02c", "opacity": 0.10, "line": {"width": 0}, "layer": "below"},
            {"type": "line", "xref": "x", "yref": "paper", "x0": start - 0.5, "x1": start - 0.5, "y0": 0, "y1": 1,
             "line": {"color": "#2ca02c", "width": 2}},
        ]
        label = _window_label(result, start)
        annotations = [{"x": start - 0.5, "y": 1.0, "xref": "x", "yref": "paper", "text": label,
                        "showarrow": False, "xanchor": "left", "yanchor": "bottom", "font": {"color": "#2ca02c"}}]
    y2_ticks = _nice_ticks(float(max(running[-1] if n else 0, config.tool_result_token_threshold)))
    return traces, shapes, annotations, y2_ticks


def usage_figure(result: Result, original: Sequence[Message], *, height: int = 430,
                 marks: Sequence[tuple[int, str]] = ()) -> Any:
    """One bar per message (its tokens before the policy), coloured by status; the
    protected window shaded; the running total of tool-result tokens against the
    threshold on the right axis.

    Built as a plain figure dict without plotly's validation, with numeric arrays and one
    hover string per bar: at 10,000 messages validation and deep copies of per-point
    objects were most of the cost."""
    import numpy as np
    import plotly.graph_objects as go

    n = len(result.messages)
    config = result.config
    before = np.asarray(result.token_counts_original or result.token_counts, dtype=np.int64)
    after = np.asarray(result.token_counts_after, dtype=np.int64)
    other = MessageStatus.KEPT
    cats = ["other message" if s is other and m.role != "tool" else s._value_ for m, s in zip(original, result.statuses)]
    x = np.arange(n)
    cat_arr = np.asarray(cats, dtype=object)
    traces: list[dict[str, Any]] = []
    per = 1
    if n > MAX_COLUMNS:
        traces, per = _binned_traces(n, cat_arr, before, after)
    else:
        labels = [_hover_label(m) for m in original]
        for cat in _ORDER:
            where = np.flatnonzero(cat_arr == cat)
            if not len(where):
                continue
            traces.append({
                "type": "bar", "x": x[where], "y": before[where], "name": cat,
                "marker": {"color": STATUS_COLORS[cat], "line": {"width": 0}},
                "customdata": after[where], "hovertext": [labels[i] for i in where],
                "hovertemplate": "#%{x} %{hovertext}<br>tokens %{y:,} → %{customdata:,}<br>" + cat + "<extra></extra>",
            })
    windowed = spec_for(config).window  # a tool-result trigger and a protected window to draw
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    right = max(n - 0.5, 0.5)
    y2_ticks: list[int] = [0]
    if windowed:
        traces_extra, shapes, annotations, y2_ticks = _window_overlay(result, original, n, per, right)
        traces += traces_extra
    mark_shapes, mark_notes = _mark_shapes(marks, -0.5)
    shapes += mark_shapes
    annotations += mark_notes
    layout = {
        "barmode": "stack" if per > 1 else "overlay",
        "bargap": 0 if n > 200 else 0.15,
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "legend": {"orientation": "h", "y": -0.22},
        "xaxis": {"title": {"text": "message"}, "range": [-0.5, right]},
        "yaxis": {"title": {"text": "tokens per message" if per == 1 else f"tokens per {per} messages"}},
        # round right-axis ticks (2k, 4k ... not 7.5k / 14.9k), in the colour of the line they measure
        **({} if not windowed else {"yaxis2": {"title": {"text": "tool-result tokens so far", "font": {"color": "#444"}}, "overlaying": "y",
                   "side": "right", "rangemode": "tozero", "showgrid": False, "tickvals": y2_ticks,
                   "ticktext": [_tick_label(v) for v in y2_ticks], "range": [0, y2_ticks[-1] * 1.02],
                   "tickfont": {"color": "#444"}}}),
        "hovermode": "closest",
        "uirevision": "usage",
        "shapes": shapes,
        "annotations": annotations,
    }
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def replay_figure(rp: Result, *, height: int = 380, marks: Sequence[tuple[int, str]] = (),
                  window: int | None = None, lost: Any = None) -> Any:
    """Context tokens sent at each model call, with and without clearing; the tool-result
    total the trigger saw against the threshold; calls that broke the prompt cache; the
    log's compactions and the model's context window when known."""
    import numpy as np
    import plotly.graph_objects as go

    steps = rp.steps
    x = np.asarray([s.call_index for s in steps], dtype=np.int64)
    sent = np.asarray([s.context_tokens for s in steps], dtype=np.int64)
    unreduced = np.asarray([s.context_tokens_unreduced for s in steps], dtype=np.int64)
    tool_total = np.asarray([s.total_tool_result_tokens for s in steps], dtype=np.int64)
    cleared = np.asarray([len(s.cleared_indices) for s in steps], dtype=np.int64)
    windowed = spec_for(rp.config).window  # a clearing policy with a trigger over tool results and a window
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=unreduced, name="sent without clearing" if windowed else "sent without the policy",
                             mode="lines",
                             line={"color": "#8c8c8c", "dash": "dot"},
                             hovertemplate="call at #%{x}: %{y:,} tokens without clearing<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=sent, name="sent with clearing" if windowed else "sent with the policy", mode="lines",
                             line={"color": "#1f77b4", "width": 2}, customdata=cleared,
                             hovertemplate="call at #%{x}: %{y:,} tokens sent<br>%{customdata} cleared at this call"
                             "<extra></extra>"))
    if windowed:  # the trigger's own quantity on its own axis (right): tool-result tokens, not the context sent
        fig.add_trace(go.Scatter(x=x, y=tool_total, name="tool-result tokens (trigger, right axis)", mode="lines",
                                 line={"color": "#ff7f0e", "width": 1}, yaxis="y2",
                                 hovertemplate="call at #%{x}: %{y:,} tool-result tokens counted<extra></extra>"))
    if len(x) and windowed:
        fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[rp.config.tool_result_token_threshold] * 2,
                                 name=f"threshold {rp.config.tool_result_token_threshold:,} (right axis)",
                                 mode="lines", yaxis="y2",
                                 line={"color": "#d62728", "dash": "dash", "width": 1}, hoverinfo="skip"))
    breaks = np.asarray([s.cache_break for s in steps], dtype=bool)
    clears = cleared > 0
    if clears.any():
        fig.add_trace(go.Scatter(
            x=x[clears], y=sent[clears], name="clearing here (cache break)" if breaks.any() else "clearing here",
            mode="markers", marker={"symbol": "x", "size": 9, "color": "#d62728"},
            customdata=cleared[clears],
            hovertext=["yes: the cached prompt prefix is lost" if b else "no" for b in breaks[clears]],
            hovertemplate="call at #%{x}: cleared %{customdata}; cache break: %{hovertext}<extra></extra>",
        ))
    if lost is not None and lost.references:
        at: dict[int, set[str]] = {}
        for ref in lost.references:
            at.setdefault(ref.call_index, set()).update(ref.terms)
        by_call = {int(c): int(v) for c, v in zip(x, sent)}
        calls = sorted(c for c in at if c in by_call)
        fig.add_trace(go.Scatter(
            x=calls, y=[by_call[c] for c in calls], name="needed a cleared result (loss)", mode="markers",
            marker={"symbol": "diamond", "size": 10, "color": "#ff7f0e", "line": {"color": "#333", "width": 1}},
            hovertext=[", ".join(sorted(at[c])[:5]) for c in calls],
            hovertemplate="call at #%{x}: the reply used %{hovertext}, which only a cleared result held"
                          "<extra></extra>"))
    shapes, notes = _mark_shapes(marks, 0.0)
    peak = float(max(unreduced.max() if len(unreduced) else 0, sent.max() if len(sent) else 0))
    if window and len(x) and window <= 2.5 * max(peak, 1):
        fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[window, window], name=f"context window {window:,}",
                                 mode="lines", line={"color": "#9467bd", "width": 2}, hoverinfo="skip"))
    elif window and len(x):
        # a 1M-token line would flatten a small run onto the floor: say where the window is instead
        notes = [*notes, {"text": f"context window {window:,} tokens, off the chart: the run peaks at "
                                  f"{int(peak):,} ({100 * peak / window:.1f} % of it)",
                          "xref": "paper", "yref": "paper", "x": 0.99, "y": 0.99, "xanchor": "right",
                          "showarrow": False, "font": {"color": "#9467bd", "size": 12}}]
    fig.update_layout(
        height=height, margin={"l": 10, "r": 10, "t": 20, "b": 10}, shapes=shapes, annotations=notes,
        # below the plot: above it the chart's toolbar covered the legend
        legend={"orientation": "h", "y": -0.25, "yanchor": "top", "x": 0},
        xaxis={"title": "model call (index of the assistant message it produced)"},
        yaxis={"title": "context tokens sent", "rangemode": "tozero"},
        hovermode="closest", uirevision="replay",
    )
    if windowed:
        top = float(max(tool_total.max() if len(tool_total) else 0, rp.config.tool_result_token_threshold, 1))
        ticks = _nice_ticks(top)
        fig.update_layout(yaxis2={"title": {"text": "tool-result tokens (trigger)", "font": {"color": "#ff7f0e"}},
                                  "overlaying": "y", "side": "right", "showgrid": False, "tickvals": ticks,
                                  "ticktext": [_tick_label(v) for v in ticks], "range": [0, ticks[-1] * 1.02],
                                  "tickfont": {"color": "#ff7f0e"}})
    return fig


def _clamp(value: int, axis: Sequence[int]) -> tuple[float, bool]:
    """value placed on an evenly spaced axis, held to its drawn range; whether it was inside."""
    half = (axis[1] - axis[0]) / 2 if len(axis) > 1 else 0.5
    lo, hi = axis[0] - half, axis[-1] + half
    return min(max(value, lo), hi), lo <= value <= hi


def heatmap_figure(sw: Sweep, values: str, current: tuple[int, int], *, height: int = 360,
                   axes: tuple[str, str] = ("keep-recent tokens", "tool-result threshold")) -> Any:
    """A threshold x keep heatmap of ``values`` ('tokens_saved', 'cleared' or
    'cache_breaks'), on numeric axes so the star sits at the setting itself, not at the
    nearest cell (held to the edge, and said so, when the setting is off the grid)."""
    import plotly.graph_objects as go

    dollars = values == "dollars_saved"
    z = getattr(sw, values)
    saved = "input tokens saved over all calls" if sw.mode == "replay" else "tokens saved in the final history"
    titles = {"tokens_saved": saved, "cleared": "results cleared", "cache_breaks": "prompt-cache breaks",
              "dollars_saved": "dollars saved over the run (red: costs more than nothing)",
              "needed": "cleared results the agent needed later (loss)"}
    fig = go.Figure(
        go.Heatmap(
            z=[list(r) for r in z], x=list(sw.keeps), y=list(sw.thresholds),
            colorscale="RdBu" if dollars else "Reds" if values in ("cache_breaks", "needed") else "Blues",
            zmid=0 if dollars else None,
            hovertemplate="threshold %{y:,}<br>keep %{x:,}<br>" + titles[values]
            + (": $%{z:,.4f}" if dollars else ": %{z:,}") + "<extra></extra>",
            # a short unit: the long title squeezed the plot at laptop widths (it is the chart's title)
            colorbar={"title": {"tokens_saved": "tokens", "cleared": "results", "cache_breaks": "breaks",
                                "dollars_saved": "$", "needed": "results"}[values], "thickness": 12},
        )
    )
    flat = [v for row in z for v in row]
    if dollars and flat and min(flat) < 0 < max(flat):
        fig.add_trace(go.Contour(z=[list(r) for r in z], x=list(sw.keeps), y=list(sw.thresholds),
                                 contours={"start": 0, "end": 0, "size": 1, "coloring": "none"},
                                 line={"color": "black", "width": 2}, showscale=False, hoverinfo="skip",
                                 name="break-even"))
    t, k = current
    x, x_in = _clamp(k, sw.keeps)
    y, y_in = _clamp(t, sw.thresholds)
    where = "your setting" if x_in and y_in else "your setting (off the grid, drawn at its edge)"
    fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers",
                             marker={"symbol": "star", "size": 16, "color": "#ffbf00", "line": {"color": "#333", "width": 1}},
                             name=where, hovertemplate=f"{where}: threshold {t:,}, keep {k:,}<extra></extra>"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      xaxis={"title": axes[0], "tickvals": list(sw.keeps), "tickformat": ","},
                      yaxis={"title": axes[1], "tickvals": list(sw.thresholds), "tickformat": ","},
                      title={"text": titles[values], "x": 0.01}, showlegend=False)
    return fig


def _nice_ticks(top: float, count: int = 4) -> list[int]:
    """Round tick values from 0 to at least ``top`` (1, 2 or 5 times a power of ten apart)."""
    if top <= 0:
        return [0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [int(step * k) for k in range(int(math.ceil(top / step)) + 1)]


def _tick_label(value: int) -> str:
    return f"{value / 1000:g}k" if value >= 1000 else str(value)


SVG_COLUMNS = 300
"""Columns of the SVG usage chart: about 3 px each at its width, as fine as a screen shows."""


_CODES = {name: k for k, name in enumerate(_ORDER)}
_STATUS_CODE = {status: _CODES[status._value_] for status in MessageStatus}
_STATIC: dict[tuple[int, int, str], Any] = {}


def _static_arrays(original: Sequence[Message], placeholder: str) -> tuple[Any, Any]:
    """(is a tool result, counts toward the trigger) per message: fixed for a transcript,
    so worked out once and kept for the next slider move (a few entries at most)."""
    import numpy as np

    key = (id(original), len(original), placeholder)
    hit = _STATIC.get(key)
    if hit is None or hit[0] is not original:
        is_tool = np.fromiter((m.role == "tool" for m in original), dtype=bool, count=len(original))
        counted = is_tool & np.fromiter((m.content != placeholder for m in original), dtype=bool,
                                        count=len(original))
        hit = (original, is_tool, counted)
        _STATIC[key] = hit
        while len(_STATIC) > 4:
            _STATIC.pop(next(iter(_STATIC)))
    return hit[1], hit[2]


def usage_svg(result: Result, original: Sequence[Message], *, width: int = 1000, height: int = 430,
              marks: Sequence[tuple[int, str]] = ()) -> str:
    """The usage chart of a long run as one SVG: columns of ``ceil(n / 300)`` messages
    (tokens per status stacked), the protected window shaded, the running tool-result
    total against the threshold on the right axis, and a tooltip per column naming its
    messages. A browser draws it in a few milliseconds, where plotly needs a hundred;
    it holds no text from the transcript, only numbers and status names."""
    import numpy as np

    from ..cost.call_facts import _int_array

    n = len(result.messages)
    config = result.config
    windowed = spec_for(config).window  # a tool-result trigger, its running total and a window to draw
    # the run's counts are the same tuple on every move: their array is kept (call_facts)
    before = _int_array(result.token_counts_original or result.token_counts)
    after = _ints(result.token_counts_after)
    is_tool, counted = _static_arrays(original, getattr(config, "placeholder", ""))
    threshold = int(getattr(config, "tool_result_token_threshold", 0) or 0) if windowed else 0
    codes = np.fromiter(map(_STATUS_CODE.__getitem__, result.statuses), dtype=np.int64, count=n)
    codes[(codes == _CODES["kept"]) & ~is_tool] = _CODES["other message"]
    k = max(1, -(-n // SVG_COLUMNS))
    bins = np.arange(n) // k
    nb = int(bins[-1]) + 1 if n else 0
    left, right, top_pad, bottom = 56, 64, 28, 70
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    col_w = plot_w / max(nb, 1)
    cells = bins * len(_ORDER) + codes  # one bincount gives every (column, status) at once
    size = max(nb, 1) * len(_ORDER)
    by_status = np.bincount(cells, weights=before, minlength=size).reshape(-1, len(_ORDER))[:nb]
    count_by_status = np.bincount(cells, minlength=size).reshape(-1, len(_ORDER))[:nb]
    present = [c for c, name in enumerate(_ORDER) if count_by_status[:, c].any()]
    sums = {_ORDER[c]: by_status[:, c] for c in present}
    totals = by_status.sum(axis=1)
    y_ticks = _nice_ticks(float(totals.max()) if nb else 0.0)
    y_max = max(y_ticks[-1], 1)
    running = np.cumsum(np.where(counted, _int_array(result.token_counts), 0)) if n else np.zeros(0)
    ends = np.minimum((np.arange(nb) + 1) * k - 1, n - 1)
    y2_ticks = _nice_ticks(float(max(running[-1] if n else 0, threshold)))
    y2_max = max(y2_ticks[-1], 1)

    def px(col: float) -> float:
        return left + col * col_w

    def py(value: float, scale: float) -> float:
        return top_pad + plot_h * (1 - value / scale)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
           f'font-family="sans-serif" font-size="11" role="img" aria-label="token usage per message">']
    start = protected_from(result) if windowed else None
    if start is not None and n:
        x0 = px(start / k)
        out.append(f'<rect x="{x0:.1f}" y="{top_pad}" width="{left + plot_w - x0:.1f}" height="{plot_h}" '
                   f'fill="{STATUS_COLORS["protected"]}" fill-opacity="0.10"/>')
        out.append(f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{top_pad}" y2="{top_pad + plot_h}" '
                   f'stroke="{STATUS_COLORS["protected"]}" stroke-width="2"/>')
        near_end = x0 > left + 0.7 * plot_w
        out.append(f'<text x="{x0 + (-4 if near_end else 4):.1f}" y="{top_pad - 6}" '
                   f'text-anchor="{"end" if near_end else "start"}" fill="{STATUS_COLORS["protected"]}">'
                   f'{_window_label(result, start)}</text>')
    for value in y_ticks:
        y = py(value, y_max)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{_tick_label(value)}</text>')
    base = np.zeros(nb)
    for cat, values in sums.items():  # stacked step areas, one path per status
        tops = base + values
        edge = [f"{px(b):.1f},{py(tops[b], y_max):.1f} {px(b + 1):.1f},{py(tops[b], y_max):.1f}" for b in range(nb)]
        back = [f"{px(b + 1):.1f},{py(base[b], y_max):.1f} {px(b):.1f},{py(base[b], y_max):.1f}"
                for b in reversed(range(nb))]
        out.append(f'<polygon points="{" ".join(edge + back)}" fill="{STATUS_COLORS[cat]}"/>')
        base = tops
    for at, label in marks:  # compactions: numbers and our own labels only, escaped all the same
        mx = px(at / k)
        out.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{top_pad}" y2="{top_pad + plot_h}" stroke="#9467bd" '
                   f'stroke-dasharray="2 3" stroke-width="1.5"/><text x="{mx - 3:.1f}" y="{top_pad + 4}" '
                   f'text-anchor="end" fill="#9467bd" transform="rotate(-90 {mx - 3:.1f} {top_pad + 4})">'
                   f'{html.escape(label)}</text>')
    if windowed:  # the running tool-result total against the trigger, on the right axis
        line = " ".join(f"{px(b + 1):.1f},{py(float(running[ends[b]]), y2_max):.1f}" for b in range(nb))
        out.append(f'<polyline points="{line}" fill="none" stroke="#444" stroke-width="1.5"/>')
        ty = py(threshold, y2_max)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#d62728" '
                   f'stroke-dasharray="6 4" stroke-width="1.5"/>')
        for value in y2_ticks:
            out.append(f'<text x="{left + plot_w + 6}" y="{py(value, y2_max) + 4:.1f}" fill="#555">'
                       f'{_tick_label(value)}</text>')
    for value in _nice_ticks(float(n), 6):
        if value <= n:
            out.append(f'<text x="{px(value / k):.1f}" y="{top_pad + plot_h + 14}" text-anchor="middle" '
                       f'fill="#555">{value:,}</text>')
    out.append(f'<text x="12" y="{top_pad + plot_h / 2:.0f}" transform="rotate(-90 12 {top_pad + plot_h / 2:.0f})" '
               f'text-anchor="middle" fill="#333">tokens per {"message" if k == 1 else f"{k} messages"}</text>')
    legend = [(STATUS_COLORS[c], c) for c in sums]
    if windowed:
        out.append(f'<text x="{width - 8}" y="{top_pad + plot_h / 2:.0f}" transform="rotate(90 {width - 8} '
                   f'{top_pad + plot_h / 2:.0f})" text-anchor="middle" fill="#333">tool-result tokens so far</text>')
        legend += [("#444", "tool-result tokens so far"), ("#d62728", f"threshold {threshold:,}")]
    x = left
    for color, label in legend:
        out.append(f'<rect x="{x}" y="{height - 24}" width="12" height="12" fill="{color}"/>'
                   f'<text x="{x + 16}" y="{height - 14}" fill="#333">{label}</text>')
        x += 24 + 7 * len(label)
    counts = {_ORDER[c]: count_by_status[:, c] for c in present}
    after_sums = np.bincount(bins, weights=after, minlength=nb) if n else np.zeros(0)
    for b in range(nb):  # a transparent column with a tooltip: which messages, what happened to them
        first, last = b * k, min(b * k + k - 1, n - 1)
        what = ", ".join(f"{int(c[b])} {cat}" for cat, c in counts.items() if c[b])
        out.append(f'<rect x="{px(b):.1f}" y="{top_pad}" width="{col_w:.2f}" height="{plot_h}" fill="transparent">'
                   f'<title>{f"#{first}" if first == last else f"#{first}–#{last}"}: {what}; tokens {int(totals[b]):,} → {int(after_sums[b]):,}</title></rect>')
    out.append("</svg>")
    return "".join(out)


def compare_figure(comparison: Any, *, height: int = 380) -> Any:
    """Context sent at each model call, one line per policy, and the run without any."""
    import plotly.graph_objects as go

    fig = go.Figure()
    first = comparison.results[0] if comparison.results else None
    if first is not None:
        steps = first.model_call_steps
        fig.add_trace(go.Scatter(x=[s.call_index for s in steps], y=[s.context_tokens_unreduced for s in steps],
                                 name="no policy", mode="lines", line={"color": "#8c8c8c", "dash": "dot"},
                                 hovertemplate="call at #%{x}: %{y:,} tokens without a policy<extra></extra>"))
    for label, r in zip(comparison.labels, comparison.results):
        steps = r.model_call_steps
        fig.add_trace(go.Scatter(
            x=[s.call_index for s in steps], y=[s.context_tokens for s in steps], name=display_text(label),
            mode="lines", customdata=[["yes" if s.cache_break else "no"] for s in steps],
            hovertemplate="call at #%{x}: %{y:,} tokens<br>cache break: %{customdata[0]}<extra>"
            + html.escape(display_text(label)) + "</extra>"))
    # the legend (one line per policy) below the plot, and as much room as it needs: nothing cut off
    fig.update_layout(height=height + 22 * max(0, len(comparison.labels) - 3),
                      margin={"l": 10, "r": 10, "t": 20, "b": 10, "autoexpand": True},
                      legend={"orientation": "h", "y": -0.2, "yanchor": "top", "x": 0},
                      xaxis={"title": "model call (index of the assistant message it produced)", "automargin": True},
                      yaxis={"title": "tokens sent", "rangemode": "tozero", "automargin": True},
                      hovermode="x unified")
    return fig


def strip_figure(comparison: Any, original: Sequence[Message], *, height: int | None = None) -> Any:
    """Per tool result (columns) and policy (rows): from which call on the policy clears it."""
    import plotly.graph_objects as go

    tools = [i for i, m in enumerate(original) if m.role == "tool"]
    z, text = [], []
    for r in comparison.results:
        row, tips = [], []
        for i in tools:
            at = r.cleared_at[i] if i < len(r.cleared_at) else None
            row.append(at)
            tips.append(f"result #{i}: " + (f"cleared from call #{at}" if at is not None else "kept"))
        z.append(row)
        text.append(tips)
    fig = go.Figure(go.Heatmap(
        z=z, x=[str(i) for i in tools], y=[display_text(label) for label in comparison.labels], text=text,
        hovertemplate="%{y}<br>%{text}<extra></extra>", colorscale="Viridis", reversescale=True,
        colorbar={"title": "from call", "thickness": 12}, xgap=1, ygap=2))
    fig.update_layout(height=height or 90 + 40 * len(comparison.results),
                      margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"title": "tool result (message index)", "type": "category", "showticklabels": len(tools) <= 60},
                      yaxis={"autorange": "reversed"})
    return fig


def cost_figure(c: Any, *, height: int = 380) -> Any:
    """Dollars per model call stacked by kind; breaks marked; cumulative with and without."""
    import numpy as np
    import plotly.graph_objects as go

    p = c.pricing
    calls = c.calls
    x = [r.call_index for r in calls]
    parts = (("uncached input", [r.uncached_tokens * p.input / 1e6 for r in calls], "#ff7f0e"),
             ("cache writes", [r.cache_write_tokens * p.cache_write / 1e6 for r in calls], "#d62728"),
             ("cache reads", [r.cache_read_tokens * p.cache_read / 1e6 for r in calls], "#2ca02c"),
             ("output", [r.output_tokens * p.output / 1e6 for r in calls], "#9467bd"))
    fig = go.Figure()
    for name, ys, color in parts:
        fig.add_trace(go.Bar(x=x, y=ys, name=name, marker={"color": color, "line": {"width": 0}},
                             hovertemplate="call at #%{x}: $%{y:.4f} " + name + "<extra></extra>"))
    br = [r for r in calls if r.cache_break]
    if br:
        fig.add_trace(go.Scatter(x=[r.call_index for r in br], y=[r.dollars for r in br], mode="markers",
                                 name="cache break", marker={"symbol": "x", "size": 9, "color": "#333"},
                                 customdata=[r.break_dollars for r in br],
                                 hovertemplate="call at #%{x}: the break cost $%{customdata:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=np.cumsum([r.dollars for r in calls]), name="run so far, with the policy",
                             yaxis="y2", mode="lines", line={"color": "#1f77b4", "width": 2}))
    fig.add_trace(go.Scatter(x=x, y=np.cumsum([r.dollars for r in c.calls_without_policy]),
                             name="run so far, without it", yaxis="y2", mode="lines",
                             line={"color": "#8c8c8c", "dash": "dot"}))
    fig.update_layout(barmode="stack", height=height, margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      legend={"orientation": "h", "y": -0.25, "yanchor": "top", "x": 0},
                      xaxis={"title": "model call (index of the assistant message it produced)"},
                      # round dollar ticks: $0.05, $1.5, $1,200 (two significant digits, no trailing zeros)
                      yaxis={"title": "dollars per call", "tickprefix": "$", "tickformat": ",.2~r"},
                      yaxis2={"title": "dollars so far", "overlaying": "y", "side": "right", "tickprefix": "$",
                              "tickformat": ",.2~r", "showgrid": False, "rangemode": "tozero"}, hovermode="closest")
    return fig


def recorded_figure(recorded: Any, simulated: Any, *, height: int = 320) -> Any:
    """Input dollars per call: what the log recorded, and the model of the same run."""
    import plotly.graph_objects as go

    sim = {r.call_index: r for r in simulated.calls_without_policy}
    x = [r.call_index for r in recorded.calls if r.call_index in sim]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=[r.input_dollars for r in recorded.calls if r.call_index in sim],
                             name="recorded", mode="lines+markers", line={"color": "#333"}))
    fig.add_trace(go.Scatter(x=x, y=[sim[i].input_dollars for i in x], name="simulated", mode="lines+markers",
                             line={"color": "#1f77b4", "dash": "dot"}))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      legend={"orientation": "h", "y": -0.3, "yanchor": "top", "x": 0},
                      xaxis={"title": "model call"}, yaxis={"title": "input dollars", "tickprefix": "$",
                                                             "tickformat": ",.2~r"})
    return fig


def corpus_heatmap(sweep: Any, best: str, *, height: int = 380) -> Any:
    """The grid aggregated over every run (dollars when priced, else input tokens sent),
    the recommended setting starred."""
    import plotly.graph_objects as go

    from ..runs.report import policy_options

    df = sweep.table[sweep.table["error"] == ""]
    priced = df["dollars"].notna().any()
    metric = "dollars" if priced else "tokens_sent"
    totals = df.groupby("config", sort=False)[metric].sum()
    opts = {lab: policy_options(c) for lab, c in zip(sweep.labels, sweep.configs)}
    varying = [k for k in next(iter(opts.values())) if len({repr(o[k]) for o in opts.values()}) > 1]
    xk = varying[-1] if varying else None
    yk = varying[0] if len(varying) > 1 else None
    xs = sorted({o[xk] for o in opts.values()}) if xk else [0]
    ys = sorted({o[yk] for o in opts.values()}) if yk else [0]
    z: list[list[float | None]] = [[None] * len(xs) for _ in ys]
    star = None
    for lab, o in opts.items():
        i = ys.index(o[yk]) if yk else 0
        j = xs.index(o[xk]) if xk else 0
        z[i][j] = float(totals.get(lab, float("nan")))
        if lab == best:
            star = (xs[j], ys[i])
    # categories, not numbers: grid values need not be evenly spaced (5,000, 10,000, 20,000), and
    # a numeric axis would draw each cell off its tick
    xl, yl = [f"{v:,}" for v in xs], [f"{v:,}" for v in ys]
    fig = go.Figure(go.Heatmap(z=z, x=xl, y=yl, colorscale="Blues_r", colorbar={"title": "$" if priced else "tokens",
                                                                               "thickness": 12},
                               hovertemplate=f"{xk}=%{{x}}<br>{yk}=%{{y}}<br>{metric}: "
                                             f"{'$%{z:,.2f}' if priced else '%{z:,.0f} tokens'}<extra></extra>"))
    if star is not None:
        fig.add_trace(go.Scatter(x=[f"{star[0]:,}"], y=[f"{star[1]:,}"], mode="markers", name="recommended",
                                 marker={"symbol": "star", "size": 16, "color": "#ffbf00",
                                         "line": {"color": "#333", "width": 1}}))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10}, showlegend=False,
                      title={"text": f"{'dollars' if priced else 'input tokens sent'} over every run (lower is better)",
                             "x": 0.01},
                      xaxis={"title": xk or "", "type": "category"}, yaxis={"title": yk or "", "type": "category"})
    return fig


def corpus_distributions(best: Any, window: int, *, height: int = 340) -> Any:
    """Per run with the recommended setting: what it saves, what it costs (when priced),
    and its peak context against the model's window."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    priced = best["dollars"].notna().any()
    titles = ["saved per run" + (" ($)" if priced else " (tokens)")]
    if priced:
        titles.append("cost per run ($)")
    titles.append("peak context per run (tokens)")
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles)
    fig.add_trace(go.Histogram(x=best["dollars_saved" if priced else "tokens_saved"], name="saved",
                               marker={"color": "#1f77b4"}), row=1, col=1)
    if priced:
        fig.add_trace(go.Histogram(x=best["dollars"], name="cost", marker={"color": "#ff7f0e"}), row=1, col=2)
    last = len(titles)
    fig.add_trace(go.Histogram(x=best["peak_context"], name="peak context", marker={"color": "#2ca02c"}),
                  row=1, col=last)
    if window:
        fig.add_vline(x=window, line={"color": "#9467bd", "dash": "dash"}, row=1, col=last,
                      annotation_text=f"window {window:,}")
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10}, showlegend=False, bargap=0.05)
    return fig
