"""eino's clear-tool-result page: its numbers, exclusions and offloading, the protection
window on the usage chart, the replay, its threshold x keep sweep and its exports."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.formats import written_as
from toolclear.inspector import charts, exports, money
from toolclear.inspector.history import (
    VIEWS,
    losses_of,
    render_losses,
    render_metrics,
    render_table,
    render_transcript_notes,
)
from toolclear.inspector.policy_views import policy_choices, render_compare, sent_calibration
from toolclear.inspector.verdict_view import render_verdict, report_button
from toolclear.inspector.widgets import (
    ensure_counts,
    md,
    plural,
    safe,
    safely,
    slider_pair,
    store,
    stored,
)
from toolclear.policies import preset_named, snippets
from toolclear.runs import eino_sweep as sweeps
from toolclear.runs import report


def _set_eino_defaults() -> None:
    store("threshold", tc.DEFAULT_THRESHOLD)
    store("keep", tc.DEFAULT_KEEP_RECENT_TOKENS)


def _render_numbers(t: tc.Transcript, counter: str) -> None:
    """The threshold and keep controls, sized to this conversation (in the results
    fragment: moving them reruns only what depends on them)."""
    key = (counter, st.session_state.placeholder)
    memo = st.session_state.get("_bounds")
    if memo is None or memo[0] is not t or memo[1] != key:  # a slider move changes neither
        memo = (t, key, sweeps.slider_bounds(t.messages, ensure_counts(t.messages, counter), key[1]))
        st.session_state["_bounds"] = memo
    bounds = memo[2]
    left, right = st.columns(2)
    slider_pair(left, "threshold", "Tool-result token threshold", bounds.threshold_max, bounds.threshold_step,
                "Clear only when the tool results hold more tokens than this (strictly more).", tc.DEFAULT_THRESHOLD)
    slider_pair(right, "keep", "Keep-recent token budget", bounds.keep_max, bounds.keep_step,
                "The protected window: messages counted back from the end within this budget.",
                tc.DEFAULT_KEEP_RECENT_TOKENS)
    left.button("eino defaults (20,000 / 40,000)", key="defaults", on_click=_set_eino_defaults)
    right.caption(
        f"This conversation: {bounds.tool_result_tokens:,} tool-result tokens of {bounds.total_tokens:,} in all. "
        "Values are taken literally: 0 means 0 (eino itself reads 0 as the default)."
    )


def render_exclusions(t: tc.Transcript) -> None:
    tools = Counter(m.tool_name for m in t.messages if m.role == "tool")
    st.session_state.exclude = [n for n in st.session_state.exclude if n in tools]
    st.sidebar.multiselect(
        "Never clear these tools", sorted(tools, key=lambda n: (-tools[n], n)), key="exclude",
        format_func=lambda n: f"{report.visible(safe(n)) or '(unnamed)'} ({plural(tools[n], 'result')})",
    )


def render_offloading(counter: str) -> tc.ToolResultOffloadingConfig | None:
    st.sidebar.header("Offloading")
    st.sidebar.toggle("Offload too-large results first", key="offload_on")
    if not st.session_state.offload_on:
        return None
    st.sidebar.number_input("Offloading token limit", 0, None, step=1000, key="offload_limit")
    st.sidebar.text_input("Read tool named in the notice", key="read_tool")
    offloading = tc.ToolResultOffloadingConfig(
        offloading_token_limit=int(st.session_state.offload_limit),
        read_file_tool_name=st.session_state.read_tool,
        token_counter=counter,
    )
    limit = offloading.offloading_token_limit
    st.sidebar.caption(
        f"eino's comment says a result is offloaded above {4 * limit:,} characters (4 × limit). "
        f"The real trigger is tokens > 4 × limit, i.e. more than {16 * limit:,} UTF-8 bytes "
        f"(≈ {4 * limit:,} tokens). At eino's default limit (20,000) that is 320,001 bytes."
    )
    return offloading


def offloads(label: str) -> bool:
    """Whether the picked policy takes offloading (eino's clear policy): it has the page
    with the protection window, offloading and the exclusions in the sidebar."""
    return preset_named(policy_choices()[label])[0].offloads


def current_config(counter: str) -> tc.ClearToolResultConfig:
    return tc.ClearToolResultConfig(
        tool_result_token_threshold=stored("threshold", tc.DEFAULT_THRESHOLD),
        keep_recent_tokens=stored("keep", tc.DEFAULT_KEEP_RECENT_TOKENS),
        placeholder=st.session_state.placeholder,
        exclude_tools=tuple(st.session_state.exclude),
        token_counter=counter,
    )


def render_usage(result: tc.Result, t: tc.Transcript, config: tc.ClearToolResultConfig, start: int | None) -> None:
    if len(t.messages) > charts.MAX_COLUMNS:
        # a long run: one SVG of columns (plotly would take ~100 ms per slider move to redraw);
        # it holds only numbers and status names, nothing from the transcript
        st.image(charts.usage_svg(result, t.messages, marks=t.marks), use_container_width=True)
        per = -(-len(t.messages) // charts.SVG_COLUMNS)
        st.caption(f"Each column sums {per:,} messages, stacked by what the policy did to them. The Messages "
                   "tab lists every message and why it has its status.")
    else:
        st.plotly_chart(charts.usage_figure(result, t.messages, marks=t.marks), key="usage_chart",
                        config={"displaylogo": False})
    notes = []
    if t.marks:
        notes.append(f"Dotted brown lines: where Claude Code compacted the session ({len(t.marks)}). The model "
                     "saw only a summary of what came before; toolclear shows the whole run.")
    if result.offloads:
        notes.append("With offloading on, the bars show each result's size before offloading; the running total "
                     "on the right axis counts offloaded results by their notice, as the trigger does.")
    total = sum(result.token_counts_original or result.token_counts)
    if start == 0 and total <= config.keep_recent_tokens:
        notes.append(f"The whole run ({total:,} tokens) fits in the {config.keep_recent_tokens:,}-token keep budget: "
                     "every message is inside the protected window, so nothing can be cleared. Lower the keep "
                     f"budget below {total:,} to see clearing.")
    elif start is not None and start < len(t.messages):
        notes.append(
            f"The protected window starts at message #{start}: that message is the one that did not fit in the "
            f"{config.keep_recent_tokens:,}-token budget, and eino keeps it anyway — its walk back from the end "
            "stops *at* the first message that overflows, and only messages before it are cleared."
        )
    notes.append(
        "Tokens here are eino's estimate unless you pick a tiktoken counter: UTF-8 bytes ÷ 4, rounded up per "
        "message — bytes, not characters, so CJK text counts about 3× its length. Tool-call arguments count "
        "toward the window, never toward the threshold."
        if config.counter_name == "eino" else f"Tokens counted with {config.counter_name} (tiktoken), on the "
        "same fields eino counts: content plus tool-call arguments."
    )
    for n in notes:
        st.caption(n)


def render_replay(rp: tc.Result, t: tc.Transcript) -> None:
    model = tc.run_model(t.messages)
    known = tc.run_context_window(t.messages)
    window = st.columns(3)[0].number_input(
        "Model context window (0: none)", 0, None, value=known or 0, step=1000,
        key=f"context_window_{model}",
        help=(f"{model} takes {known:,} tokens." if known else
              f"{model}: not a model toolclear knows." if model else "The log names no model.")
        + " The line shows how close each call came to the limit.",
    )
    st.plotly_chart(charts.replay_figure(rp, marks=t.marks, window=int(window) or None, lost=losses_of(rp)),
                    key="replay_chart", config={"displaylogo": False})
    peak = max((s.context_tokens_unreduced for s in rp.steps), default=0)
    if window and peak > window:
        st.caption(f"Without clearing the run would have needed {peak:,} tokens, over the {int(window):,}-token "
                   "window" + (" (the log's compactions are where the agent got around it)." if t.marks else "."))
    cols = st.columns(3)
    cols[0].metric("Model calls", f"{len(rp.model_call_steps):,}")
    cols[1].metric("Input tokens over all calls", f"{rp.tokens_sent:,}",
                   f"-{rp.tokens_sent_unreduced - rp.tokens_sent:,} vs. no clearing", delta_color="off")
    cols[2].metric("Prompt-cache breaks", f"{rp.cache_breaks:,}")
    st.caption("Each point is one model call, whose context is every message before its assistant message. "
               "A cross marks a call where the policy cleared something; when that changed a message an earlier "
               "call had already sent, the provider's prompt cache for that prefix is lost. A diamond marks a "
               "call whose reply used a name only a cleared result still held (a loss).")


@st.cache_resource(max_entries=32, show_spinner="Sweeping threshold × keep…")
def sweep_cached(key: tuple[Any, ...], _messages: tuple[tc.Message, ...], _config: tc.ClearToolResultConfig,
                 thresholds: tuple[int, ...], keeps: tuple[int, ...], mode: schema.Mode,
                 pricing: tc.Pricing | None = None, calibrate: bool = False,
                 compactions: tuple[int, ...] = ()) -> sweeps.Sweep:
    return sweeps.sweep(_messages, _config, thresholds, keeps, mode=mode, pricing=pricing, calibrate=calibrate,
                        compactions=compactions)


def render_sweep(t: tc.Transcript, config: tc.ClearToolResultConfig, mode: schema.Mode,
                 key_base: tuple[Any, ...], pricing: tc.Pricing | None = None, calibrate: bool = False) -> None:
    counts = tc.count_tokens(t.messages, config.token_counter)
    bounds = sweeps.slider_bounds(t.messages, counts, config.placeholder)
    thresholds, keeps = sweeps.sweep_axes(bounds)
    heavy = mode == "replay" and len(t.messages) > 3000
    if heavy and not st.session_state.get("sweep_go"):
        st.info(f"A replay sweep runs {len(thresholds) * len(keeps)} replays of {len(t.messages):,} messages.")
        st.button("Compute the replay sweep", key="sweep_go_button",
                  on_click=lambda: st.session_state.__setitem__("sweep_go", True))
        return
    key = (*key_base, config.placeholder, config.exclude_tools, config.counter_name, mode, thresholds, keeps)
    priced = pricing if mode == "replay" else None  # each replay of the grid priced once, as it runs
    marks = tuple(k for k, _ in t.marks)
    sw = sweep_cached(key, t.messages, config, thresholds, keeps, mode, priced, calibrate and priced is not None,
                      marks)
    current = (config.tool_result_token_threshold, config.keep_recent_tokens)
    cols = st.columns(2)
    with cols[0]:
        st.plotly_chart(charts.heatmap_figure(sw, "tokens_saved", current), key="sweep_saved", config={"displaylogo": False})
    with cols[1]:
        what = "cache_breaks" if sw.cache_breaks is not None else "cleared"
        st.plotly_chart(charts.heatmap_figure(sw, what, current), key="sweep_second", config={"displaylogo": False})
    if sw.needed is not None:
        cols = st.columns(2)
        with cols[0]:
            st.plotly_chart(charts.heatmap_figure(sw, "needed", current), key="sweep_needed",
                            config={"displaylogo": False})
        cols[1].caption("Beside what each setting saves, what it loses: how many of the results it cleared the "
                        "agent's later replies used (by name, from results only the cleared copy held). A "
                        "setting that saves much but loses many makes the agent re-read, or guess.")
    if priced is not None and sw.dollars_saved is not None:
        st.plotly_chart(charts.heatmap_figure(sw, "dollars_saved", current), key="sweep_dollars",
                        config={"displaylogo": False})
        losing = sum(1 for row in sw.dollars_saved for v in row if v < 0)
        st.caption(f"Dollars saved over the run at {md(priced.name)} prices, with the prompt cache: red cells cost "
                   f"more than doing nothing ({losing} of {len(thresholds) * len(keeps)}); the black line is the "
                   "break-even.")
    st.caption(
        "The threshold only decides *whether* clearing happens (once tool results pass it); "
        "the keep budget decides *how much* is cleared. The grid stops just under the "
        f"transcript's totals ({bounds.tool_result_tokens:,} tool-result tokens, "
        f"{bounds.total_tokens:,} in all): past them nothing changes. The star is your setting."
    )
    if mode == "replay":
        st.caption("Replay: input tokens saved over all model calls, and how often clearing broke "
                   "the prompt cache (each break re-sends the rest of the prompt uncached).")
    else:
        st.info("Single pass shows only what the final history saves, so a smaller keep budget "
                "always looks better. Set **Mode** to *replay* in the sidebar to see the "
                "trade-off: each clearing call breaks the prompt cache.")


def render_export(t: tc.Transcript, result: tc.Result, config: tc.ClearToolResultConfig,
                  offloading: tc.ToolResultOffloadingConfig | None, backend: Any, mode: schema.Mode,
                  conversations: int = 1) -> None:
    stem = Path(t.source).name or "transcript"
    st.subheader("Downloads")
    cols = st.columns(5 if offloading else 4)
    cols[0].download_button(f"Reduced ({written_as(t.format)})", lambda: tc.dump(t, result.messages),
                            file_name=f"reduced-{stem}", key="dl_original", on_click="ignore")
    cols[1].download_button("Reduced (eino JSON)", lambda: exports.eino_json(result.messages),
                            file_name=f"reduced-{Path(stem).stem}.eino.json", mime="application/json",
                            key="dl_eino", on_click="ignore")
    cols[2].download_button("Report (CSV)", lambda: exports.report_csv(report.message_rows(result, t)),
                            file_name=f"report-{Path(stem).stem}.csv",
                            mime="text/csv", key="dl_csv", on_click="ignore")
    cols[3].download_button("Report (JSON)", lambda: exports.report_json(report.report_dict(result, t, offloading)),
                            file_name=f"report-{Path(stem).stem}.json", mime="application/json", key="dl_json",
                            on_click="ignore")
    if offloading:
        cols[4].download_button(
            "Offloaded files (zip)",
            lambda: exports.offloaded_zip(result.offloads, backend, (f"reduced-{stem}", tc.dump(t, result.messages))),
            file_name=f"offloaded-{Path(stem).stem}.zip", mime="application/zip", key="dl_zip", on_click="ignore")
    report_button(t, "dl_html")
    if conversations > 1:
        st.caption(f"The reduced file keeps the other {conversations - 1:,} conversation(s) of the original "
                   "file unchanged.")
    st.subheader("These settings as code")
    go_tab, py_tab, cli_tab, live_tab = st.tabs(["eino (Go)", "toolclear (Python)", "toolclear (CLI)",
                                                 "Live in an agent"])
    with go_tab:
        st.code(snippets.go_snippet(config, offloading), language="go")
    with py_tab:
        st.code(snippets.python_snippet(config, offloading, path=stem, mode=mode,
                                        conversation=t.id if conversations > 1 else None), language="python")
    with cli_tab:
        conv = t.id if conversations > 1 else None
        st.code(snippets.cli_command(config, offloading, path=stem, mode=mode, conversation=conv), language="bash")
    with live_tab:
        if offloading is not None:
            st.caption("The live adapters run the clearing policy; offloading is not part of them.")
        for title, lang, code in snippets.live_snippets(config):
            st.markdown(f"**{title}**")
            st.code(code, language=lang)


@st.fragment
def results(t: tc.Transcript, digest: str, counter: str, offloading: tc.ToolResultOffloadingConfig | None,
            conversations: int, pricing: tc.Pricing | None = None, calibrate: bool = False) -> None:
    """Everything the threshold and keep controls change. A fragment: moving them reruns
    this part only, not the sidebar, the upload or the loading above it."""
    safely(_results, t, digest, counter, offloading, conversations, pricing, calibrate)


def _results(t: tc.Transcript, digest: str, counter: str, offloading: tc.ToolResultOffloadingConfig | None,
             conversations: int, pricing: tc.Pricing | None = None, calibrate: bool = False) -> None:
    _render_numbers(t, counter)
    config = current_config(counter)
    mode: schema.Mode = st.session_state.mode
    backend = tc.MemoryBackend() if offloading else None
    rp: tc.Result | None = None
    result: tc.Result
    if mode == "replay":
        rp = tc.replay(t.messages, config, offloading=offloading, backend=backend,
                       calibration=sent_calibration(t, counter))
        result = rp
    else:
        result = tc.reduce_by_tokens(t.messages, config, offloading=offloading, backend=backend)
    v = render_verdict(t, config, counter, pricing, calibrate, offloading)
    summary = report.summary_dict(result)
    st.subheader("In the history", anchor=False)
    render_metrics(summary, mode)
    render_losses(result, mode)
    priced = v.comparison.costs[0] if v is not None and v.comparison is not None else None
    if not summary["triggered"]:
        tool_total = summary["total_tool_result_tokens"]
        st.info(f"Nothing is cleared: the tool results hold {tool_total:,} tokens, not more than the threshold "
                f"{config.tool_result_token_threshold:,}. The threshold only decides *whether* clearing happens; "
                + (f"set it below {tool_total:,} to see what the keep budget would clear." if tool_total
                   else "this conversation has no tool results to clear."))
    if summary.get("offload_failures"):
        st.warning(f"{len(summary['offload_failures'])} offload write(s) failed; those results were kept.")
    render_transcript_notes(t)
    views = st.tabs(list(VIEWS), key="view", on_change="rerun")
    # only the open tab runs: the others cost nothing until the user opens them
    usage, replay_tab, table, sweep_tab, compare_tab, export = views
    if usage.open:
        with usage:
            render_usage(result, t, config, summary["recent_start_index"])
    if replay_tab.open:
        with replay_tab:
            shown = rp if rp is not None else tc.replay(
                t.messages, config, offloading=offloading, backend=tc.MemoryBackend() if offloading else None,
                calibration=sent_calibration(t, counter))
            render_replay(shown, t)
            if pricing is not None:
                money.render_cost_view(priced if priced is not None else tc.cost(
                    shown, pricing, calibrate=calibrate, compactions=[k for k, _ in t.marks]), t)
    if table.open:
        with table:
            render_table(t, result)
    if sweep_tab.open:
        with sweep_tab:
            render_sweep(t, config, mode, (digest, t.id), pricing, calibrate)
    if compare_tab.open:
        with compare_tab:
            render_compare(t, counter, tc.runs.lab.policy_spec(config), pricing, calibrate)
    if export.open:
        with export:
            render_export(t, result, config, offloading, backend, mode, conversations)
