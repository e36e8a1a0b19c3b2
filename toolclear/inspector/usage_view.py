"""The Token usage view: one bar per message coloured by what the policy did, the
protection window where the policy has one, and what the chart's lines mean."""

from __future__ import annotations

import streamlit as st

from toolclear.inspector import charts
from toolclear.inspector.shown import Shown
from toolclear.runs import report

__all__ = ["render_usage"]


def render_usage(view: Shown) -> None:
    """The chart is one SVG by default: it holds only numbers and status names, a browser
    draws it in milliseconds, and the first screen does not wait for plotly.js (about a
    second in Chromium). A short run can be drawn zoomable with plotly on request."""
    result, t = view.result, view.t
    short = len(t.messages) <= charts.MAX_COLUMNS
    if short and st.toggle("Zoomable chart", key="usage_zoom",
                           help="Draw the chart with plotly: zoom, pan, and the tool's name on hover."):
        st.plotly_chart(charts.usage_figure(result, t.messages, marks=t.marks), key="usage_chart",
                        config={"displaylogo": False})
        st.caption("One bar per message (its tokens before the policy), coloured by what the policy did.")
    else:
        st.image(charts.usage_svg(result, t.messages, marks=t.marks), width="stretch")
        per = -(-len(t.messages) // charts.SVG_COLUMNS)
        # the picture is an <img>: a browser shows no tooltip in it (the HTML report's inline one has them)
        st.caption("One column per message (its tokens before the policy), stacked by what the policy did; "
                   "switch on Zoomable chart to see each message's tool on hover." if per == 1 else
                   f"Each column sums {per:,} messages, stacked by what the policy did to them. The Messages "
                   "tab lists every message and why it has its status.")
    for note in _notes(view):
        st.caption(note)


def _notes(view: Shown) -> list[str]:
    result, t, config = view.result, view.t, view.config
    notes = []
    if t.marks:
        notes.append(f"Dotted brown lines: where Claude Code compacted the session ({len(t.marks)}). The model "
                     "saw only a summary of what came before; toolclear shows the whole run.")
    if result.offloads:
        notes.append("With offloading on, the bars show each result's size before offloading; the running total "
                     "on the right axis counts offloaded results by their notice, as the trigger does.")
    if view.spec.window:  # a protected window of recent tokens, drawn on the chart
        keep = config.keep_recent_tokens
        start = report.protected_from(result)
        total = sum(result.token_counts_original or result.token_counts)
        if start == 0 and total <= keep:
            notes.append(f"The whole run ({total:,} tokens) fits in the {keep:,}-token keep budget: every message is "
                         "inside the protected window, so nothing can be cleared. Lower the keep budget below "
                         f"{total:,} to see clearing.")
        elif start is not None and start < len(t.messages):
            notes.append(
                f"The protected window starts at message #{start}: that message is the one that did not fit in the "
                f"{keep:,}-token budget, and it is kept anyway — the walk back from the end stops *at* the first "
                "message that overflows, and only messages before it are cleared.")
    if view.counter == "eino":
        notes.append("Tokens here are the eino estimate: UTF-8 bytes ÷ 4, rounded up per message — bytes, not "
                     "characters, so CJK text counts about 3× its length. Pick a tiktoken counter in the sidebar "
                     "for a model's own tokens.")
    else:
        notes.append(f"Tokens counted with {view.counter} (tiktoken): content plus tool-call arguments.")
    return notes
