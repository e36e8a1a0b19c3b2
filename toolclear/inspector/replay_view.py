"""The Replay view: the context of every model call against the model's window, the
compactions (the log's or the policy's) and what each dropped, the calls' numbers and
their dollars."""

from __future__ import annotations

from typing import Any

import streamlit as st

import toolclear as tc
from toolclear.inspector import charts, money
from toolclear.inspector.history import losses_of
from toolclear.inspector.shown import Shown
from toolclear.inspector.widgets import safe

__all__ = ["compaction_marks", "render_replay"]


def render_replay(view: Shown, lost: Any = None) -> None:
    rp, t = view.replayed, view.t
    lost = lost if rp is view.result and lost is not None else losses_of(rp)
    model = tc.run_model(t.messages)
    known = tc.run_context_window(t.messages)
    window = st.columns(3)[0].number_input(
        "Model context window (0: none)", 0, None, value=known or 0, step=1000,
        key=f"context_window_{model}",
        help=(f"{model} takes {known:,} tokens." if known else
              f"{model}: not a model toolclear knows." if model else "The log names no model.")
        + " The line shows how close each call came to the limit.",
    )
    st.plotly_chart(charts.replay_figure(rp, marks=compaction_marks(rp, t), window=int(window) or None, lost=lost),
                    key="replay_chart", config={"displaylogo": False})
    peak = max((s.context_tokens_unreduced for s in rp.steps), default=0)
    if window and peak > window:
        st.caption(f"Without the policy the run would have needed {peak:,} tokens, over the {int(window):,}-token "
                   "window" + (" (the log's compactions are where the agent got around it)." if t.marks else "."))
    if rp.compactions:
        render_compactions(rp, t, lost)
    c = st.columns(3)
    c[0].metric("Model calls", f"{len(rp.model_call_steps):,}")
    c[1].metric("Input tokens over all calls", f"{rp.tokens_sent:,}",
                f"-{rp.tokens_sent_unreduced - rp.tokens_sent:,} vs. no policy", delta_color="off")
    c[2].metric("Prompt-cache breaks", f"{rp.cache_breaks:,}")
    st.caption("Each point is one model call, whose context is every message before its assistant message. "
               "A cross marks a call where the policy changed something; when that changed a message an earlier "
               "call had already sent, the provider's prompt cache for that prefix is lost. A diamond marks a "
               "call whose reply used a name only a changed result still held (a loss).")
    if view.pricing is not None:
        priced = view.priced  # the verdict's own pricing of this replay
        money.render_cost_view(priced if priced is not None else tc.cost(
            rp, view.pricing, calibrate=view.calibrate, compactions=view.marks), t)


def compaction_marks(result: tc.Result, t: tc.Transcript) -> tuple[tuple[int, str], ...]:
    """The compactions a chart marks: the result's own (the run as recorded, a compaction
    policy's), else the log's."""
    if result.compactions:
        return tuple((c.at, f"compaction {n}" + (f" ({c.trigger})" if c.trigger else ""))
                     for n, c in enumerate(result.compactions, start=1))
    return t.marks


def render_compactions(result: tc.Result, t: tc.Transcript, lost: Any) -> None:
    """Each compaction: where, why, how much it dropped, and which of the dropped results
    later calls needed; pick one to see what it dropped."""
    needed = set(lost.needed) if lost is not None else set()
    by_message = lost.by_message() if lost is not None else {}
    rows = []
    for n, c in enumerate(result.compactions, start=1):
        dropped_results = [i for i in c.dropped if t.messages[i].role == "tool"]
        rows.append({"compaction": n, "at call": c.at, "trigger": c.trigger or "-", "tokens before": c.tokens_before,
                     "tokens after": c.tokens_after, "summary tokens": c.summary_tokens,
                     "messages dropped": len(c.dropped), "tool results dropped": len(dropped_results),
                     "needed later": len([i for i in c.dropped if i in needed]),
                     "summary call": "made" if c.called else "none (fixed text)"})
    st.subheader("Compactions", anchor=False)
    st.dataframe(rows, hide_index=True, key="p_compactions")
    numbers = list(range(1, len(rows) + 1))
    pick = st.selectbox("What a compaction dropped", numbers, key="p_compaction_pick",
                        format_func=lambda k: f"compaction {k} at call {result.compactions[k - 1].at:,}")
    c = result.compactions[(pick or 1) - 1]
    counts = result.token_counts
    names = {call.id: call.name for m in t.messages[: c.at] if m.role == "assistant" for call in m.tool_calls}
    detail = []
    for i in c.dropped:
        m = t.messages[i]
        if m.role != "tool":
            continue
        refs = by_message.get(i, [])
        detail.append({"message": i, "tool": safe(m.tool_name or names.get(m.tool_call_id, "")),
                       "tokens": counts[i], "needed later": "yes" if i in needed else "",
                       "needed by calls": ", ".join(f"{r.call_index:,}" for r in refs[:8]),
                       "preview": safe(m.content[:120])})
    st.dataframe(detail, hide_index=True, key="p_compaction_dropped")
    st.caption(f"{len(detail):,} tool result(s) dropped by compaction {pick}; \"needed later\": a later reply "
               "used a term only they held, or the agent fetched them again (the same call, the same file).")
