"""The One run page: a transcript in depth under one policy. The sidebar picks the file,
the conversation, the policy, the counter, the mode and the pricing; the page shows the
verdict, what the policy leaves in the history, and one view per tab. Every policy takes
the same road: its controls and views are read from the registry (``controls``)."""

from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.counters import DEFAULT_COUNTER
from toolclear.formats._source import read_source
from toolclear.inspector import money
from toolclear.inspector.compare_view import render_compare
from toolclear.inspector.controls import (
    current_policy,
    pick_counter,
    policy_choices,
    render_offloading,
    sizes_of,
)
from toolclear.inspector.export_view import render_export
from toolclear.inspector.history import (
    VIEWS,
    render_losses,
    render_metrics,
    render_table,
    render_transcript_notes,
)
from toolclear.inspector.replay_view import render_replay
from toolclear.inspector.shown import Shown, run_policy
from toolclear.inspector.sweep_view import render_sweep
from toolclear.inspector.usage_view import render_usage
from toolclear.inspector.verdict_view import render_verdict
from toolclear.inspector.widgets import md, safe, safely, short
from toolclear.model import main_conversation
from toolclear.policies import preset_named, spec_for
from toolclear.runs import report

__all__ = ["DEFAULTS", "SAMPLES", "render_page", "session_choices"]

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
UPLOAD_LIMIT_MB = 200
DEFAULTS = {
    "mode": schema.MODES[0],
    "offload_on": False,
    "offload_limit": 20_000,
    "read_tool": "read_file",
    "counter": DEFAULT_COUNTER,
    "format": "auto",
    "policy": next(iter(policy_choices())),
}
"""The sidebar's settings and their first values (kept across pages)."""


def sessions_on() -> bool:
    return os.environ.get("TOOLCLEAR_APP_SESSIONS") == "1" and CLI_FILE is None


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


# ---------------------------------------------------------------- the sidebar


def init_state() -> None:
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value
    if "sample" not in st.session_state:
        wanted = st.query_params.get("sample")
        found = list(session_choices()) if sessions_on() else []
        st.session_state.sample = (NO_SAMPLE if wanted == "none" else CLI_CHOICE if CLI_FILE is not None
                                   else found[0] if found else next(iter(SAMPLES)))


def _source_changed() -> None:
    for key in ("conversation", "detail_index", "table", "corpus_open"):
        st.session_state.pop(key, None)


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
    sizes = {t.id: (len(t.messages), sum(tc.count_tokens(t.messages, DEFAULT_COUNTER))) for t in transcripts}
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


def render_settings() -> tuple[str, str, tc.ToolResultOffloadingConfig | None]:
    """The sidebar's policy, counter, mode and (for a policy that takes it) offloading."""
    st.sidebar.header("Policy")
    choices = policy_choices()
    if st.session_state.policy not in choices:
        st.session_state.policy = next(iter(choices))
    st.sidebar.selectbox("Policy", list(choices), key="policy",
                         help="The context policy to simulate: each with its own controls, faithful to its "
                         "reference (see the README).")
    kind = choices[st.session_state.policy]
    counter = pick_counter()
    st.sidebar.radio("Mode", schema.MODES, key="mode", horizontal=True,
                     help="single pass: the policy once, on the whole history. replay: before every model call, "
                     "as an agent runs it.")
    offloading = render_offloading(counter) if preset_named(kind)[0].offloads else None
    return kind, counter, offloading


def _digest(identity: str, data: bytes) -> str:
    """The content hash, computed once per upload (or sample) rather than on every rerun."""
    memo = st.session_state.get("_digest")
    if memo is not None and memo[0] == identity:
        return memo[1]
    digest = hashlib.sha256(data).hexdigest()
    st.session_state["_digest"] = (identity, digest)
    return digest


# ---------------------------------------------------------------- the page


def render_page() -> None:
    """The page: the sidebar, then what the policy does (a fragment: moving a policy's
    control reruns only that part, not the sidebar, the upload or the loading)."""
    st.caption("What a context policy does to an agent run, in dollars with the prompt cache, and which numbers "
               "to pick.")
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
    kind, counter, offloading = render_settings()
    pricing, calibrate = money.render_pricing(t)
    results(t, digest, len(loaded.transcripts), kind, counter, offloading, pricing, calibrate)


@st.fragment
def results(t: tc.Transcript, digest: str, conversations: int, kind: str, counter: str,
            offloading: tc.ToolResultOffloadingConfig | None, pricing: tc.Pricing | None, calibrate: bool) -> None:
    safely(_results, t, digest, conversations, kind, counter, offloading, pricing, calibrate)


def _results(t: tc.Transcript, digest: str, conversations: int, kind: str, counter: str,
             offloading: tc.ToolResultOffloadingConfig | None, pricing: tc.Pricing | None, calibrate: bool) -> None:
    config, files = current_policy(kind, t, counter)
    mode: schema.Mode = st.session_state.mode
    v = render_verdict(t, config, counter, pricing, calibrate, offloading)
    result, backend = _same_replay(v, mode, calibrate, files, offloading) or \
        run_policy(t, config, mode, counter, offloading, files)
    view = Shown(t, digest, conversations, kind, config, counter, mode, pricing, calibrate, offloading, files,
                 result, backend, v)
    summary = report.summary_dict(result)
    st.subheader("In the history", anchor=False)
    render_metrics(summary, mode)
    lost = render_losses(result, mode)
    _notes(view, summary)
    render_transcript_notes(t)
    tabs = st.tabs(list(VIEWS), key="view", on_change="rerun")
    for name, tab in zip(VIEWS, tabs):
        if not tab.open:  # only the open tab runs: the others cost nothing until opened
            continue
        with tab:
            if name == "Token usage":
                render_usage(view)
            elif name == "Replay":
                render_replay(view, lost)
            elif name == "Messages":
                render_table(t, result)
            elif name == "Parameter sweep":
                render_sweep(view)
            elif name == "Compare":
                render_compare(view)
            elif name == "Export":
                render_export(view)


def _same_replay(v: Any, mode: schema.Mode, calibrate: bool, files: bool, offloading: Any) -> tuple[tc.Result, None] | None:
    """The verdict's own replay when it is the one ``run_policy`` would make (a replay in
    tokens as sent, no files, no backend): a slider move replays the run once, not twice
    (40 ms at 100,000 messages, and its losses are then found once)."""
    if v is None or v.comparison is None or mode != "replay" or not calibrate or files or offloading is not None:
        return None
    result = v.comparison.results[0]
    return None if spec_for(result.config).needs_backend(result.config) else (result, None)


def _notes(view: Shown, summary: schema.SummaryDict) -> None:
    """What the numbers above need said: nothing changed and why, results truncated or
    not offloaded, the policy's own notes."""
    result = view.result
    truncated = summary["status_counts"].get("offloaded", 0)
    if truncated and view.offloading is None:
        st.caption(f"{truncated:,} result(s) truncated as the tool returned: the model sees the head and tail, the "
                   "full text is saved.")
    if summary.get("offload_failures"):
        st.warning(f"{len(summary['offload_failures'])} offload write(s) failed; those results were kept.")
    for note in result.notes:
        st.warning(md(note))
    if not result.cleared_indices:
        explain = view.spec.why_nothing
        sizes = sizes_of(view.t, view.counter)
        st.info("Nothing is changed at these settings: " + (
            explain(view.config, sizes) if explain is not None else
            f"{sizes['uses']} tool result(s); this policy changed none of them at these settings."))
