"""toolclear inspector: see and tune eino's clear-tool-result policy on real transcripts.

    toolclear app [FILE]          # or, in a checkout: streamlit run app.py

Streamlit only: widgets (each with a key), cached wrappers around the core, and
render_* functions. Every number shown comes from ``toolclear``; transcript text is
always shown as text (code blocks, tables, escaped markdown), never as HTML.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.formats import written_as
from toolclear.formats._source import read_source
from toolclear.inspector import charts, exports, money
from toolclear.inspector.corpus_page import render_corpus_page
from toolclear.inspector.policy_views import (
    losses_of,
    policy_choices,
    render_compare,
    render_losses,
    render_policy,
    sent_calibration,
)
from toolclear.inspector.verdict_view import render_verdict, report_button
from toolclear.inspector.widgets import (
    compact,
    keep_widget_state,
    md,
    plural,
    safe,
    short,
    slider_pair,
    store,
    stored,
)
from toolclear.model import main_conversation
from toolclear.policies import preset_named, snippets
from toolclear.runs import eino_sweep as sweeps
from toolclear.runs import report
from toolclear.runs.losses import message_text

_HERE = Path(__file__).resolve().parent
# the bundled samples: inside the installed package, or sample_data/ of a checkout
SAMPLE_DIR = next((d for d in (_HERE / "samples", _HERE.parents[1] / "sample_data") if d.is_dir()),
                  _HERE / "samples")
SAMPLES = {
    "Coding agent (eino JSON Lines)": "coding-agent.eino.jsonl",
    "Coding agent (OpenAI Chat Completions)": "coding-agent.openai.json",
    "Coding agent (Anthropic Messages)": "coding-agent.anthropic.json",
    "Coding agent (Claude Code session)": "coding-agent.claude-code.jsonl",
    "Coding agent (LangChain messages)": "coding-agent.langchain.json",
    "Four short runs (a file of several conversations)": "several-runs.openai.json",
}
NO_SAMPLE = "(none)"
# the file `toolclear app FILE` opens (passed in the environment: under AppTest the
# script's own argv is the test runner's)
CLI_FILE = Path(os.environ["TOOLCLEAR_APP_FILE"]) if os.environ.get("TOOLCLEAR_APP_FILE") else None
CLI_CHOICE = f"{CLI_FILE.name} (given on the command line)" if CLI_FILE is not None else ""
# `toolclear app` with no file: the agent sessions on this machine first, newest first
SESSIONS_SHOWN = 50


def sessions_on() -> bool:
    return os.environ.get("TOOLCLEAR_APP_SESSIONS") == "1" and CLI_FILE is None
UPLOAD_LIMIT_MB = 200
DETAIL_CHARS = 20_000
MODES = schema.MODES
VIEWS = ("Token usage", "Replay", "Messages", "Parameter sweep", "Compare", "Export")
DEFAULTS = {
    "placeholder": tc.DEFAULT_PLACEHOLDER,
    "mode": MODES[0],
    "offload_on": False,
    "offload_limit": 20_000,
    "read_tool": "read_file",
    "counter": "eino",
    "format": "auto",
    "exclude": [],
    "policy": next(iter(policy_choices())),
}



# ---------------------------------------------------------------- cached core calls


@dataclass(frozen=True)
class Loaded:
    """What loading gave: the conversations, or the one-line error."""

    transcripts: tuple[tc.Transcript, ...] = ()
    error: str = ""


@st.cache_resource(max_entries=8, show_spinner="Reading the transcript…")
def load_source(digest: str, name: str, fmt: str, _data: bytes) -> Loaded:
    """Parse once per file content and format; the same objects come back on every rerun,
    so token counts cached on the messages survive slider moves."""
    try:
        loaded = Loaded(tuple(tc.load_all(_data, fmt, name=name)))
    except tc.ToolclearError as exc:
        return Loaded(error=str(exc))
    except (RecursionError, MemoryError) as exc:
        return Loaded(error=f"{name}: cannot read this file: {type(exc).__name__}")
    # a long transcript is millions of objects that live as long as the cache: moved out
    # of the collector's generations, a slider move no longer pays for a full collection
    gc.freeze()
    return loaded


@st.cache_data(ttl=600, show_spinner=False)
def counter_infos() -> list[tc.CounterInfo]:
    return list(tc.list_counters())


def ensure_counts(messages: tuple[tc.Message, ...], counter: str) -> tuple[int, ...]:
    """Count every message (once; cached on the message), with a progress bar while the
    counting of a long transcript runs."""
    bar = None

    def shown(fraction: float) -> None:
        nonlocal bar
        if bar is None:
            bar = st.progress(0.0, text=f"Counting tokens ({counter})…")
        bar.progress(fraction, text=f"Counting tokens ({counter})…")

    counts = tc.count_tokens(messages, counter, progress=shown if len(messages) > 2000 else None)
    if bar is not None:
        bar.empty()
    return counts


@st.cache_resource(max_entries=32, show_spinner="Sweeping threshold × keep…")
def sweep_cached(key: tuple[Any, ...], _messages: tuple[tc.Message, ...], _config: tc.ClearToolResultConfig,
                 thresholds: tuple[int, ...], keeps: tuple[int, ...], mode: schema.Mode,
                 pricing: tc.Pricing | None = None, calibrate: bool = False,
                 compactions: tuple[int, ...] = ()) -> sweeps.Sweep:
    return sweeps.sweep(_messages, _config, thresholds, keeps, mode=mode, pricing=pricing, calibrate=calibrate,
                        compactions=compactions)


# ---------------------------------------------------------------- state helpers


@st.cache_data(ttl=30, show_spinner=False)
def session_choices() -> dict[str, str]:
    """The newest agent sessions on this machine by their picker label (label -> path)."""
    from datetime import datetime

    from toolclear.corpus.sessions import find_sessions

    out = {}
    for f in find_sessions()[:SESSIONS_SHOWN]:
        when = datetime.fromtimestamp(f.modified).strftime("%Y-%m-%d %H:%M")
        project = f.project.rstrip("/").rsplit("/", 1)[-1] or f.project
        out[f"{f.agent} · {safe(project)} · {when} · {safe(Path(f.path).name)}"] = f.path
    return out


def init_state() -> None:
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = list(value) if isinstance(value, list) else value
    if "sample" not in st.session_state:
        wanted = st.query_params.get("sample")
        found = list(session_choices()) if sessions_on() else []
        st.session_state.sample = (NO_SAMPLE if wanted == "none" else CLI_CHOICE if CLI_FILE is not None
                                   else found[0] if found else next(iter(SAMPLES)))


def _set_eino_defaults() -> None:
    store("threshold", tc.DEFAULT_THRESHOLD)
    store("keep", tc.DEFAULT_KEEP_RECENT_TOKENS)


def _source_changed() -> None:
    for key in ("conversation", "detail_index", "table", "corpus_open"):
        st.session_state.pop(key, None)
    st.session_state.exclude = []


# ---------------------------------------------------------------- rendering


def render_source() -> tuple[str, bytes, str] | None:
    """Sidebar: upload, sample picker, format override. Returns (name, bytes, identity)
    or None; the identity changes whenever the content can have changed."""
    st.sidebar.header("Transcript")
    upload = st.sidebar.file_uploader(
        "Upload a transcript", key="upload", max_upload_size=UPLOAD_LIMIT_MB, on_change=_source_changed,
        help=", ".join(f.name for f in tc.list_formats()) + "; JSON, JSON Lines or an API cassette (YAML).",
    )
    st.sidebar.caption(
        f"Files up to {UPLOAD_LIMIT_MB} MB. The uploader refuses larger files; for those use the CLI: "
        "`toolclear inspect FILE` / `toolclear reduce FILE`."
    )
    sessions = session_choices() if sessions_on() else {}
    choices = [*([CLI_CHOICE] if CLI_FILE is not None else []), *sessions, *SAMPLES, NO_SAMPLE]
    if st.session_state.sample not in choices:
        st.session_state.sample = choices[0]
    st.sidebar.selectbox("…or a session on this machine, or a bundled sample" if sessions else
                         "…or a bundled sample", choices, key="sample", on_change=_source_changed,
                         disabled=upload is not None)
    if sessions_on() and not sessions:
        from toolclear.corpus.sessions import where_looked

        st.sidebar.caption(md("No agent session found on this machine (looked in " + ", ".join(where_looked())
                              + ")."))
    names = ["auto", *(f.name for f in tc.list_formats())]
    labels = {"auto": "auto-detect", **{f.name: f"{f.name}: {f.label}" for f in tc.list_formats()}}
    st.sidebar.selectbox("Format", names, key="format", format_func=labels.__getitem__, on_change=_source_changed)
    opened = st.session_state.get("corpus_open")
    if opened is not None and upload is None:
        st.sidebar.caption(md(f"Showing {opened[0]} from the Corpus page."))
        return opened[0], opened[1], f"corpus:{opened[0]}:{len(opened[1])}"
    if upload is not None:
        return upload.name, upload.getvalue(), f"upload:{upload.file_id}"
    if st.session_state.sample == NO_SAMPLE:
        return None
    if st.session_state.sample in sessions:
        path = Path(sessions[st.session_state.sample])
        name, data = read_source(path)
        return name, data, f"session:{path}:{path.stat().st_mtime_ns}"
    if CLI_FILE is not None and st.session_state.sample == CLI_CHOICE:
        name, data = read_source(CLI_FILE)  # a regular file only, within toolclear's size limit
        return name, data, f"file:{CLI_FILE}:{CLI_FILE.stat().st_mtime_ns}"
    path = SAMPLE_DIR / SAMPLES[st.session_state.sample]
    return path.name, path.read_bytes(), f"sample:{path}:{path.stat().st_mtime_ns}"


def pick_conversation(transcripts: tuple[tc.Transcript, ...]) -> tc.Transcript:
    if len(transcripts) == 1:
        return transcripts[0]
    sizes = {t.id: (len(t.messages), sum(tc.count_tokens(t.messages, "eino"))) for t in transcripts}
    ids = [t.id for t in transcripts]
    if st.session_state.get("conversation") not in ids:  # opened on the conversation with the most tool results
        st.session_state.conversation = main_conversation(transcripts).id
    st.sidebar.selectbox(
        f"Conversation ({len(ids)} in this file)", ids, key="conversation",
        format_func=lambda i: f"{short(safe(i), 24)} · {sizes[i][0]:,} msgs",
    )
    chosen = st.session_state.conversation
    st.sidebar.caption(f"{md(chosen)}: {sizes[chosen][0]:,} messages, ~{sizes[chosen][1]:,} tokens")
    return next(t for t in transcripts if t.id == chosen)


def _pick_counter() -> str:
    """The counter select box; an unavailable choice falls back to eino, and says so."""
    infos = counter_infos()
    by_name = {c.name: c for c in infos}
    if st.session_state.counter not in by_name:
        st.session_state.counter = "eino"
    st.sidebar.selectbox(
        "Token counter", [c.name for c in infos], key="counter",
        format_func=lambda n: n + ("" if by_name[n].available else " (not here)"),
    )
    chosen = by_name[st.session_state.counter]
    if chosen.available:
        st.sidebar.caption(md(chosen.label))
        return chosen.name
    st.sidebar.warning(f"{md(chosen.name)} is not available here: {md(chosen.reason)}. Counting with the eino "
                       "estimate instead.")
    return "eino"


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


def _render_exclusions(t: tc.Transcript) -> None:
    tools = Counter(m.tool_name for m in t.messages if m.role == "tool")
    st.session_state.exclude = [n for n in st.session_state.exclude if n in tools]
    st.sidebar.multiselect(
        "Never clear these tools", sorted(tools, key=lambda n: (-tools[n], n)), key="exclude",
        format_func=lambda n: f"{report.visible(safe(n)) or '(unnamed)'} ({plural(tools[n], 'result')})",
    )


def _render_offloading(counter: str) -> tc.ToolResultOffloadingConfig | None:
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


def _offloads(label: str) -> bool:
    """Whether the picked policy takes offloading (eino's clear policy): it has the page
    with the protection window, offloading and the exclusions in the sidebar."""
    return preset_named(policy_choices()[label])[0].offloads


def render_settings(t: tc.Transcript) -> tuple[tc.ToolResultOffloadingConfig | None, str]:
    """The sidebar's policy controls; returns the offloading settings and the counter."""
    st.sidebar.header("Policy")
    st.sidebar.selectbox("Policy", list(policy_choices()), key="policy",
                         help="The context policy to simulate: each with its own controls, faithful to its "
                         "reference (see the README).")
    if not _offloads(st.session_state.policy):
        counter = _pick_counter()
        st.sidebar.radio("Mode", MODES, key="mode", horizontal=True,
                         help="single pass: the policy once, on the whole history. replay: before every model "
                         "call, as an agent runs it.")
        return None, counter
    counter = _pick_counter()
    _render_exclusions(t)
    st.sidebar.text_input("Placeholder", key="placeholder", help="What a cleared tool result holds afterwards.")
    st.sidebar.radio("Mode", MODES, key="mode", horizontal=True,
                     help="single pass: the policy once, on the whole history. replay: before every model "
                     "call, as an agent runs it; what is cleared stays cleared.")
    return _render_offloading(counter), counter


def current_config(counter: str) -> tc.ClearToolResultConfig:
    return tc.ClearToolResultConfig(
        tool_result_token_threshold=stored("threshold", tc.DEFAULT_THRESHOLD),
        keep_recent_tokens=stored("keep", tc.DEFAULT_KEEP_RECENT_TOKENS),
        placeholder=st.session_state.placeholder,
        exclude_tools=tuple(st.session_state.exclude),
        token_counter=counter,
    )


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


def render_table(t: tc.Transcript, result: tc.Result) -> None:
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


def _safely(run: Any, *args: Any) -> None:
    """Run a part of the app; an error is one st.error line, and the app keeps working."""
    try:
        run(*args)
    except tc.ToolclearError as exc:  # e.g. a setting the core refuses: say so, keep working
        st.error(md(str(exc)))
    except Exception as exc:  # a bug: one line instead of a traceback
        st.error(md(f"Something went wrong inside toolclear ({type(exc).__name__}: {exc}); please report it."))


def main() -> None:
    st.set_page_config(page_title="toolclear inspector", page_icon="✂", layout="wide")
    _safely(run_app)


def _digest(identity: str, data: bytes) -> str:
    """The content hash, computed once per upload (or sample) rather than on every rerun."""
    memo = st.session_state.get("_digest")
    if memo is not None and memo[0] == identity:
        return memo[1]
    digest = hashlib.sha256(data).hexdigest()
    st.session_state["_digest"] = (identity, digest)
    return digest


def run_app() -> None:
    keep_widget_state(tuple(DEFAULTS))
    init_state()
    st.title("toolclear inspector")
    page = st.sidebar.radio("Page", ["One run", "Corpus"], key="page", horizontal=True,
                            help="One run: a transcript in depth. Corpus: many runs at once, and which setting "
                                 "to pick across them.")
    if page == "Corpus":
        render_corpus_page()
        return
    st.caption("What a context policy (eino's, Anthropic's, LangChain's, observation masking) does to an agent run, "
               "and which numbers to pick.")
    source = render_source()
    if source is None:
        st.info("Upload a transcript in the sidebar, or pick a bundled sample.")
        return
    name, data, identity = source
    digest = _digest(identity, data)
    loaded = load_source(digest, name, st.session_state.format, data)
    if loaded.error:
        st.error(md(loaded.error))
        st.caption("Nothing was changed. Pick another file, another format, or a sample in the sidebar.")
        return
    t = pick_conversation(loaded.transcripts)
    st.caption(
        f"{md(t.source)} · format {md(t.format)}"
        + (f" · conversation {md(t.id)}" if len(loaded.transcripts) > 1 else "")
        + f" · {len(t.messages):,} messages"
    )
    offloading, counter = render_settings(t)
    pricing, calibrate = money.render_pricing(t)
    kind = policy_choices()[st.session_state.policy]
    if preset_named(kind)[0].offloads:
        results(t, digest, counter, offloading, len(loaded.transcripts), pricing, calibrate)
    else:
        policy_results(kind, t, digest, counter, pricing, calibrate)


@st.fragment
def policy_results(kind: str, t: tc.Transcript, digest: str, counter: str, pricing: tc.Pricing | None,
                   calibrate: bool) -> None:
    """A policy other than eino's clear-tool-result: its controls and the same views."""
    _safely(render_policy, kind, t, digest, counter, render_metrics, render_table, render_transcript_notes, VIEWS,
            pricing, calibrate)


@st.fragment
def results(t: tc.Transcript, digest: str, counter: str, offloading: tc.ToolResultOffloadingConfig | None,
            conversations: int, pricing: tc.Pricing | None = None, calibrate: bool = False) -> None:
    """Everything the threshold and keep controls change. A fragment: moving them reruns
    this part only, not the sidebar, the upload or the loading above it."""
    _safely(_results, t, digest, counter, offloading, conversations, pricing, calibrate)


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


if __name__ == "__main__":  # `toolclear app` runs this file itself
    main()
