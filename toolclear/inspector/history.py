"""The history a policy leaves, as every policy's page shows it: the metrics, the
messages table and one message in full, the transcript's own notes."""

from __future__ import annotations

from typing import Any

import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.inspector.widgets import (
    compact,
    md,
    safe,
)
from toolclear.runs import report
from toolclear.runs.terms import message_text

DETAIL_CHARS = 20_000
"""A message shown in full is cut here (the rest is in the export)."""
VIEWS = ("Token usage", "Replay", "Messages", "Parameter sweep", "Compare", "Export")
"""The tabs every policy's page has, in order."""


def render_metrics(summary: schema.SummaryDict, mode: schema.Mode) -> None:
    """Two rows of four, so seven-digit numbers fit a laptop screen (1,100 px) uncut."""
    counts: list[tuple[str, int, str | None]] = [
        ("Messages", summary["messages"], None),
        ("Tool results", summary["tool_results"], None),
        ("Changed at some call", summary["changed"],
         "Messages the policy changed (cleared, masked, truncated) at some model call of the run."
         if mode == "replay" else "Messages the policy changed in this one pass."),
    ]
    if "offloaded" in summary:
        counts.append(("Results offloaded", summary["offloaded"], None))
    top = st.columns(max(4, len(counts)))
    for col, (label, value, help_text) in zip(top, counts):
        col.metric(label, f"{value:,}", help=help_text)
    bottom = st.columns(4)
    # short labels (longer ones were cut at 1,100 px); the help says which tokens each counts
    bottom[0].metric("History before", f"{summary['tokens_before']:,}",
                     help="Tokens of the final history (the whole conversation at its end), without the policy.")
    bottom[1].metric("History after", f"{summary['tokens_after']:,}",
                     help="Tokens of the final history, as the policy leaves it.")
    bottom[2].metric("Saved in history", f"{summary['tokens_saved']:,}", f"{summary['saved_percent']:.1f}%",
                     delta_color="off", delta_arrow="off",
                     help="Tokens the policy takes out of the final history (not summed over model calls).")
    sent, unreduced = summary.get("tokens_sent", 0), summary.get("tokens_sent_unreduced", 0)
    if summary["tokens_saved"] < 0 or (mode == "replay" and sent > unreduced):
        st.caption("The saving is negative: the placeholder left in a result is longer than the result it "
                   "replaced (short outputs cost more once masked), so the policy adds tokens here.")
    if mode == "replay":
        bottom[3].metric("Saved, all calls", compact(unreduced - sent),
                         help=f"{unreduced - sent:,} input tokens saved, summed over the run's {summary.get('model_calls', 0):,} model calls: "
                         f"{unreduced:,} without the policy, {sent:,} with it.")


def render_table(t: tc.Transcript, result: tc.Result) -> None:
    import pandas as pd  # only the Messages tab's tables need it (~0.45 s to import, off the first screen)

    df = pd.DataFrame(report.message_table(result, t), columns=list(report.ROW_FIELDS))
    df["input"] = report.call_inputs(t.messages)  # the file a Read read, the command a Bash ran
    df["tool_name"] = df["tool_name"].map(lambda n: report.visible(n) if isinstance(n, str) else n)
    needed_later = _needed_later(result)
    if needed_later:
        df["needed_later"] = [needed_later.get(int(i), "") for i in df["index"]]
    c1, c2, c3, c4 = st.columns(4)
    roles = c1.multiselect("Role", sorted(df["role"].unique()), key="filter_roles")
    statuses = c2.multiselect("Status", sorted(df["status"].unique()), key="filter_status")
    tools = c3.multiselect("Tool", sorted(n for n in df["tool_name"].unique() if n), key="filter_tools")
    text = c4.text_input("Text in preview", key="filter_text")
    mask = pd.Series(True, index=df.index)
    if roles:
        mask &= df["role"].isin(roles)
    if statuses:
        mask &= df["status"].isin(statuses)
    if tools:
        mask &= df["tool_name"].isin(tools)
    if text:
        mask &= df["preview"].str.contains(text, case=False, regex=False)
    view = df[mask]
    st.caption(f"{len(view):,} of {len(df):,} messages. Select a row to see it below.")

    def _picked() -> None:
        sel = st.session_state.get("table")
        picked = sel.selection.rows if sel is not None else []
        if picked:
            st.session_state.detail_index = int(st.session_state["_table_index"][picked[0]])

    st.session_state["_table_index"] = view["index"].tolist()
    # what a reader scans first, on screen at 1,280 px: which call, what it was asked, what happened and why
    order = ["index", "tool_name", "input", "status", "why", *(["needed_later"] if needed_later else []),
             *(["cleared_at_call"] if result.mode == "replay" else []), "tokens_before", "tokens_after",
             *(["offloaded_path"] if result.offloads else []), "in_window", "role", "preview", "tool_call_id",
             "origin"]
    st.dataframe(
        view, key="table", hide_index=True, on_select=_picked, selection_mode="single-row",
        height=min(38 + 35 * len(view), 640),  # the rows there are, up to a screenful
        column_order=order,
        column_config={
            "index": st.column_config.NumberColumn("#", width="small"),
            "tool_name": st.column_config.TextColumn("tool", width="small"),
            "input": st.column_config.TextColumn("input", width="medium",
                                                 help="What the call was asked: the file, the command, the pattern."),
            "status": st.column_config.TextColumn("status", width="small"),
            "why": st.column_config.TextColumn("why", width="medium"),
            "tokens_before": st.column_config.NumberColumn("tokens", format="localized"),
            "tokens_after": st.column_config.NumberColumn("after", format="localized"),
            "in_window": st.column_config.CheckboxColumn("in window"),
            "cleared_at_call": st.column_config.NumberColumn("at call", help="The model call that first changed it."),
            "needed_later": st.column_config.TextColumn("needed later", width="medium",
                                                        help="The model calls whose reply used a name only this "
                                                             "result still held, after the policy changed it."),
            "offloaded_path": st.column_config.TextColumn("offloaded to"),
            "preview": st.column_config.TextColumn("preview", width="large"),
            "tool_call_id": st.column_config.TextColumn("call id"),
            "origin": st.column_config.TextColumn("in the file at"),
        },
    )
    render_detail(t, result)


def _needed_later(result: tc.Result) -> dict[int, str]:
    """Per needed message: "at call k: term, term" (its first loss, and how many more)."""
    if result.mode != "replay":
        return {}
    out = {}
    lost = losses_of(result)
    for i, refs in (lost.by_message() if lost is not None else {}).items():
        first = refs[0]
        more = f" (+{len(refs) - 1} more call(s))" if len(refs) > 1 else ""
        out[i] = f"at call {first.call_index}: " + ", ".join(first.terms[:4]) + more
    return out


def render_detail(t: tc.Transcript, result: tc.Result) -> None:
    import pandas as pd

    n = len(t.messages)
    if n == 0:
        return
    if "detail_index" not in st.session_state or not 0 <= st.session_state.detail_index < n:
        cleared = [i for i, s in enumerate(result.statuses) if s is tc.MessageStatus.CLEARED]
        tools = [i for i, m in enumerate(t.messages) if m.role == "tool"]
        st.session_state.detail_index = (cleared or tools or [0])[0]
    st.subheader("Message detail")
    i = int(st.number_input("Message #", 0, n - 1, step=1, key="detail_index"))
    before, after = t.messages[i], result.messages[i]
    status = result.statuses[i]
    record = result.offloads[i] if result.offloads else None
    meta = {
        "role": safe(before.role), "tool": safe(before.tool_name) or "—", "call id": safe(before.tool_call_id) or "—",
        "tokens": f"{(result.token_counts_original or result.token_counts)[i]:,} → {result.token_counts_after[i]:,}",
        "status": str(status), "in the file at": safe(t.origins[i]) if i < len(t.origins) else "",
    }
    if record is not None and record.offloaded:
        meta["offloaded to"] = safe(record.path or "")
    if record is not None and record.error:
        meta["offload failed"] = record.error
    st.dataframe(pd.DataFrame([meta]), hide_index=True, key="detail_meta")
    if before.tool_calls:
        st.dataframe(pd.DataFrame([{"id": safe(c.id), "tool": safe(c.name), "arguments": safe(c.arguments[:2000])}
                                   for c in before.tool_calls]),
                     hide_index=True, key="detail_calls")
    lost = losses_of(result)
    refs = lost.by_message().get(i, []) if lost is not None else []
    for ref in refs[:3]:
        st.caption(f"Needed later at call {ref.call_index}: " + ", ".join(f"`{safe(x)}`" for x in ref.terms[:8])
                   + ". The reply that used it:")
        _show_text(message_text(t.messages[ref.call_index]), f"detail_reply_{ref.call_index}")
    left, right = st.columns(2)
    with left:
        st.caption("Before")
        _show_text(before.content, "detail_before")
    with right:
        st.caption("After: what the model is sent" if after.content != before.content else "After: unchanged")
        _show_text(after.content, "detail_after")


def _show_text(text: str, key: str) -> None:
    shown = safe(text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS])
    with st.container(key=key):
        st.code(shown if shown else "(empty)", language=None, wrap_lines=True, height=320)
    if len(text) > DETAIL_CHARS:
        st.caption(f"Showing the first {DETAIL_CHARS:,} of {len(text):,} characters.")


def render_transcript_notes(t: tc.Transcript) -> None:
    usage = report.recorded_usage(t.messages)
    if not (t.warnings or t.notes or usage):
        return
    with st.expander(f"About this transcript: {len(t.notes)} note(s), {len(t.warnings)} warning(s)"):
        if usage:
            st.caption(md(usage[0].upper() + usage[1:]))
        # whole sentences, wrapped: a table cell cut them off mid-sentence
        lines = [f"- {md(n)}" for n in t.notes] + [f"- **warning:** {md(w)}" for w in t.warnings]
        if lines:
            st.markdown("\n".join(lines))


LOSSES_AUTO_LIMIT = 20_000
"""Past this many messages the losses are found on request: scanning every text for
terms takes seconds there, too long to pay on every slider move."""


def losses_of(result: Any) -> Any:
    """The result's losses, or None while a long run's have not been asked for."""
    if result.mode != "replay":
        return None
    if len(result.messages) > LOSSES_AUTO_LIMIT and not st.session_state.get("_losses_on"):
        return None
    return tc.losses(result)


def _want_losses() -> None:
    st.session_state["_losses_on"] = True


def render_losses(result: tc.Result, mode: schema.Mode) -> Any:
    """The headline of what the policy lost: of the results it changed, how many the
    agent used later (replay only: a single pass has no later calls)."""
    if mode != "replay" or result.mode != "replay":
        return None
    lost = losses_of(result)
    if lost is None:
        st.button(f"Find the results the agent needed later ({len(result.messages):,} messages: a few seconds, "
                  "then kept up to date)", key="losses_go", on_click=_want_losses)
        return None
    changed = len(result.cleared_indices)
    if changed and not lost.judged:
        st.caption("**Needed later: cannot be judged.** The log holds no text of the agent's replies (redacted, or "
                   "not captured), so nothing shows which changed result a later call used.")
    elif changed:
        st.caption(f"**Needed later: {md(lost.needed_text())} of {changed:,} changed.** The agent's replies used names "
                   f"that only those results still held ({len(lost.references):,} lost reference(s)); getting "
                   f"each back once costs {lost.refetch_tokens:,} tokens. A strong hint, not proof: see the "
                   "Messages view for what each reply used.")
    return lost
