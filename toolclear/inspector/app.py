"""toolclear inspector: what a context policy does to a real agent run, tuned and compared.

    toolclear app [FILE]          # or, in a checkout: streamlit run app.py

Streamlit only: widgets (each with a key), cached wrappers around the core, and
render_* functions. Every number shown comes from ``toolclear``; transcript text is
always shown as text (code blocks, tables, escaped markdown), never as HTML.
"""

from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.formats._source import read_source
from toolclear.inspector import money
from toolclear.inspector.corpus_page import render_corpus_page
from toolclear.inspector.eino_page import offloads, render_exclusions, render_offloading, results
from toolclear.inspector.policy_views import (
    policy_choices,
    render_policy,
)
from toolclear.inspector.widgets import (
    keep_widget_state,
    md,
    safe,
    safely,
    short,
)
from toolclear.model import main_conversation
from toolclear.policies import preset_named

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
MODES = schema.MODES
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


def render_settings(t: tc.Transcript) -> tuple[tc.ToolResultOffloadingConfig | None, str]:
    """The sidebar's policy controls; returns the offloading settings and the counter."""
    st.sidebar.header("Policy")
    st.sidebar.selectbox("Policy", list(policy_choices()), key="policy",
                         help="The context policy to simulate: each with its own controls, faithful to its "
                         "reference (see the README).")
    if not offloads(st.session_state.policy):
        counter = _pick_counter()
        st.sidebar.radio("Mode", MODES, key="mode", horizontal=True,
                         help="single pass: the policy once, on the whole history. replay: before every model "
                         "call, as an agent runs it.")
        return None, counter
    counter = _pick_counter()
    render_exclusions(t)
    st.sidebar.text_input("Placeholder", key="placeholder", help="What a cleared tool result holds afterwards.")
    st.sidebar.radio("Mode", MODES, key="mode", horizontal=True,
                     help="single pass: the policy once, on the whole history. replay: before every model "
                     "call, as an agent runs it; what is cleared stays cleared.")
    return render_offloading(counter), counter


def main() -> None:
    st.set_page_config(page_title="toolclear inspector", page_icon="✂", layout="wide")
    safely(run_app)


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
    safely(render_policy, kind, t, digest, counter, pricing, calibrate)


if __name__ == "__main__":  # `toolclear app` runs this file itself
    main()
