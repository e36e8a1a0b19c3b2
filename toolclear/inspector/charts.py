"""Plotly figures for the inspector (plotly and numpy are imported only here).

Every number comes from a core result; this module only draws. Text from transcripts
(tool names, roles) is HTML-escaped before it reaches plotly, which renders a few tags.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from .._replay import Replay
from ..clearing import Reduction
from ..model import Message, MessageStatus
from ..report import display_text, window_start
from ..sweep import Sweep

__all__ = ["STATUS_COLORS", "heatmap_figure", "replay_figure", "usage_figure"]

Result = Reduction | Replay

STATUS_COLORS = {
    "protected": "#2ca02c",
    "cleared": "#d62728",
    "already cleared": "#8c8c8c",
    "excluded": "#9467bd",
    "offloaded": "#ff7f0e",
    "kept": "#1f77b4",
    "other message": "#c7d4e3",
}
_ORDER = ["cleared", "offloaded", "protected", "excluded", "already cleared", "kept", "other message"]


_BARS_UP_TO = 1500


def _area_bars(np: Any, n: int, mask: Any, before: Any, color: str, name: str) -> dict[str, Any]:
    """The bars of one status drawn as one filled step outline over every message
    (height 0 where a message has another status): a single SVG path, so 10,000 bars
    draw in about a tenth of the time plotly needs for 10,000 bar elements."""
    xs = np.empty(2 * n, dtype=float)
    xs[0::2] = np.arange(n) - 0.5
    xs[1::2] = np.arange(n) + 0.5
    ys = np.repeat(np.where(mask, before, 0), 2)
    return {"type": "scatter", "mode": "lines", "x": xs, "y": ys, "fill": "tozeroy", "name": name,
            "line": {"width": 0, "color": color}, "fillcolor": color, "hoverinfo": "skip"}


def _hover_label(m: Message) -> str:
    """'tool read_file' / 'user', escaped for plotly; memoised on the message."""
    hit = m._memo.get("hover")
    if hit is None:
        hit = html.escape(display_text(f"{m.role} {m.tool_name}" if m.role == "tool" else m.role))
        m._memo["hover"] = hit
    return hit


def usage_figure(result: Result, original: Sequence[Message], *, height: int = 430) -> Any:
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
    labels = [_hover_label(m) for m in original]
    x = np.arange(n)
    cat_arr = np.asarray(cats, dtype=object)
    traces: list[dict[str, Any]] = []
    for cat in _ORDER:
        mask = cat_arr == cat
        if not mask.any():
            continue
        if n > _BARS_UP_TO:
            traces.append(_area_bars(np, n, mask, before, STATUS_COLORS[cat], cat))
            continue
        where = np.flatnonzero(mask)
        traces.append({
            "type": "bar", "x": x[where], "y": before[where], "name": cat,
            "marker": {"color": STATUS_COLORS[cat], "line": {"width": 0}},
            "customdata": after[where], "hovertext": [labels[i] for i in where],
            "hovertemplate": "#%{x} %{hovertext}<br>tokens %{y:,} → %{customdata:,}<br>" + cat + "<extra></extra>",
        })
    if n > _BARS_UP_TO:
        # one invisible line through the bar tops carries the hover of every message
        traces.append({
            "type": "scatter", "mode": "lines", "x": x, "y": before, "showlegend": False, "name": "message",
            "line": {"width": 0, "color": "rgba(0,0,0,0)"}, "customdata": after,
            "hovertext": [f"{label}<br>{cat}" for label, cat in zip(labels, cats)],
            "hovertemplate": "#%{x} %{hovertext}<br>tokens %{y:,} → %{customdata:,}<extra></extra>",
        })
    # the running total the trigger looks at: tool results not already cleared, as they arrived
    counted = np.asarray([m.role == "tool" and m.content != config.placeholder for m in original], dtype=bool)
    policy_counts = np.asarray(result.token_counts, dtype=np.int64)
    running = np.cumsum(np.where(counted, policy_counts, 0)) if n else np.zeros(0, dtype=np.int64)
    right = max(n - 0.5, 0.5)
    traces.append({
        "type": "scatter", "x": x, "y": running, "name": "tool-result tokens so far", "yaxis": "y2",
        "mode": "lines", "line": {"color": "#444", "width": 1.5},
        "hovertemplate": "#%{x}: %{y:,} tool-result tokens so far<extra></extra>",
    })
    traces.append({
        "type": "scatter", "x": [-0.5, right], "y": [config.tool_result_token_threshold] * 2,
        "name": f"threshold {config.tool_result_token_threshold:,}", "yaxis": "y2", "mode": "lines",
        "line": {"color": "#d62728", "dash": "dash", "width": 1.5}, "hoverinfo": "skip",
    })
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    start = window_start(result)
    if start is not None and n:
        shapes = [
            {"type": "rect", "xref": "x", "yref": "paper", "x0": start - 0.5, "x1": right, "y0": 0, "y1": 1,
             "fillcolor": "#2ca02c", "opacity": 0.10, "line": {"width": 0}, "layer": "below"},
            {"type": "line", "xref": "x", "yref": "paper", "x0": start - 0.5, "x1": start - 0.5, "y0": 0, "y1": 1,
             "line": {"color": "#2ca02c", "width": 2}},
        ]
        annotations = [{"x": start - 0.5, "y": 1.0, "xref": "x", "yref": "paper", "text": f"window starts at #{start}",
                        "showarrow": False, "xanchor": "left", "yanchor": "bottom", "font": {"color": "#2ca02c"}}]
    layout = {
        "barmode": "overlay",
        "bargap": 0 if n > 200 else 0.15,
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "legend": {"orientation": "h", "y": -0.22},
        "xaxis": {"title": {"text": "message"}, "range": [-0.5, right]},
        "yaxis": {"title": {"text": "tokens per message"}},
        "yaxis2": {"title": {"text": "tool-result tokens so far"}, "overlaying": "y", "side": "right",
                   "rangemode": "tozero", "showgrid": False},
        "hovermode": "closest",
        "uirevision": "usage",
        "shapes": shapes,
        "annotations": annotations,
    }
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def replay_figure(rp: Replay, *, height: int = 380) -> Any:
    """Context tokens sent at each model call, with and without clearing; the tool-result
    total the trigger saw against the threshold; calls that broke the prompt cache."""
    import numpy as np
    import plotly.graph_objects as go

    steps = rp.steps
    x = np.asarray([s.call_index for s in steps], dtype=np.int64)
    sent = np.asarray([s.context_tokens for s in steps], dtype=np.int64)
    unreduced = np.asarray([s.context_tokens_unreduced for s in steps], dtype=np.int64)
    tool_total = np.asarray([s.total_tool_result_tokens for s in steps], dtype=np.int64)
    cleared = np.asarray([len(s.cleared_indices) for s in steps], dtype=np.int64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=unreduced, name="sent without clearing", mode="lines",
                             line={"color": "#8c8c8c", "dash": "dot"},
                             hovertemplate="call at #%{x}: %{y:,} tokens without clearing<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=sent, name="sent with clearing", mode="lines",
                             line={"color": "#1f77b4", "width": 2}, customdata=cleared,
                             hovertemplate="call at #%{x}: %{y:,} tokens sent<br>%{customdata} cleared at this call"
                             "<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=tool_total, name="tool-result tokens (trigger)", mode="lines",
                             line={"color": "#ff7f0e", "width": 1},
                             hovertemplate="call at #%{x}: %{y:,} tool-result tokens counted<extra></extra>"))
    if len(x):
        fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[rp.config.tool_result_token_threshold] * 2,
                                 name=f"threshold {rp.config.tool_result_token_threshold:,}", mode="lines",
                                 line={"color": "#d62728", "dash": "dash", "width": 1}, hoverinfo="skip"))
    breaks = np.asarray([s.cache_break for s in steps], dtype=bool)
    clears = cleared > 0
    if clears.any():
        fig.add_trace(go.Scatter(
            x=x[clears], y=sent[clears], name="clearing here (cache break)" if breaks.any() else "clearing here",
            mode="markers", marker={"symbol": "x", "size": 9, "color": "#d62728"},
            customdata=np.stack([cleared[clears], breaks[clears].astype(int)], axis=1),
            hovertemplate="call at #%{x}: cleared %{customdata[0]}; cache break: %{customdata[1]}<extra></extra>",
        ))
    fig.update_layout(
        height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"title": "model call (index of the assistant message it produced)"},
        yaxis={"title": "tokens", "rangemode": "tozero"},
        hovermode="closest", uirevision="replay",
    )
    return fig


def heatmap_figure(sw: Sweep, values: str, current: tuple[int, int], *, height: int = 360) -> Any:
    """A threshold x keep heatmap of ``values`` ('tokens_saved', 'cleared' or
    'cache_breaks') with the current choice marked."""
    import plotly.graph_objects as go

    z = getattr(sw, values)
    titles = {"tokens_saved": "tokens saved", "cleared": "results cleared", "cache_breaks": "prompt-cache breaks"}
    fig = go.Figure(
        go.Heatmap(
            z=[list(r) for r in z], x=[f"{k:,}" for k in sw.keeps], y=[f"{t:,}" for t in sw.thresholds],
            colorscale="Blues" if values != "cache_breaks" else "Reds",
            hovertemplate="threshold %{y}<br>keep %{x}<br>" + titles[values] + ": %{z:,}<extra></extra>",
            colorbar={"title": titles[values]},
        )
    )
    t, k = current
    ti = min(range(len(sw.thresholds)), key=lambda i: abs(sw.thresholds[i] - t))
    ki = min(range(len(sw.keeps)), key=lambda i: abs(sw.keeps[i] - k))
    fig.add_trace(go.Scatter(x=[f"{sw.keeps[ki]:,}"], y=[f"{sw.thresholds[ti]:,}"], mode="markers",
                             marker={"symbol": "star", "size": 16, "color": "#ffbf00", "line": {"color": "#333", "width": 1}},
                             name="nearest to your choice", hovertemplate="your choice: threshold %{y}, keep %{x}<extra></extra>"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      xaxis={"title": "keep-recent tokens", "type": "category"},
                      yaxis={"title": "tool-result threshold", "type": "category"},
                      title={"text": titles[values], "x": 0.01}, showlegend=False)
    return fig
