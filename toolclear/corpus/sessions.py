"""The agent logs on this machine, where the agents themselves keep them.

Claude Code writes a JSON Lines file per session under ``~/.claude/projects/<project>/``
(and ``~/.config/claude/projects``; ``CLAUDE_CONFIG_DIR``, comma-separated, replaces
both, as in ccusage); Codex CLI under ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``
(``CODEX_HOME``); Gemini CLI under ``~/.gemini/tmp/<project hash>/chats/``
(``GEMINI_CLI_HOME`` in place of the home folder). ``find_sessions`` lists them newest
first without reading them; ``read_session`` reads one into its summary (``session_summary``:
the summary alone, sooner).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..formats.claude_code_usage import SessionCalls
    from ..model import Message

__all__ = ["AGENTS", "SessionFile", "SessionSummary", "find_sessions", "read_session", "session_summaries",
           "session_summary", "where_looked"]

AGENTS = ("Claude Code", "Codex CLI", "Gemini CLI")
_CWD = re.compile(rb'"cwd"\s*:\s*"((?:[^"\\]|\\.){1,1000})"')
_HEAD = 256 * 1024
"""How much of a file is read for its project (the first lines name the working folder)."""


@dataclass(frozen=True)
class SessionFile:
    """One agent's session log: where it is and when it was last written."""

    agent: str
    path: str
    modified: float
    """Seconds since the epoch (the file's mtime): the listing's order, newest first."""

    @cached_property
    def project(self) -> str:
        """The working folder the log names (read from its first lines when first asked:
        a listing of hundreds of sessions reads only the ones it shows)."""
        return _project(self.agent, Path(self.path))


@dataclass(frozen=True)
class SessionSummary:
    """What one session did, as its log recorded it."""

    agent: str
    path: str
    project: str
    start: str
    """The first timestamp the log holds (ISO 8601), else the file's time."""
    model: str
    model_calls: int
    peak_context: int
    """The largest prompt one call sent, as the provider counted it (or as estimated)."""
    recorded_dollars: float | None
    """The session's bill from its recorded usage; None when the log recorded none."""
    compactions: int
    cache_hit_rate: float | None
    """Of the input tokens the provider counted, the share read from its cache."""
    error: str = ""
    call_dollars: tuple[tuple[str, float], ...] = field(default=(), repr=False)
    """Each recorded call's ids and dollars: totals over sessions bill a call that
    several hold (a resumed session) once."""

    def as_dict(self) -> dict[str, Any]:
        # (not ``asdict``: it deep-copies every call's ids only for them to be dropped)
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "call_dollars"}


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _roots(env: Mapping[str, str]) -> list[tuple[str, Path, str]]:
    """(agent, folder, glob) for every place an agent keeps its logs, as env says."""
    home = _home(env)
    out: list[tuple[str, Path, str]] = []
    claude = [Path(p.strip()).expanduser() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()] \
        or [home / ".config" / "claude", home / ".claude"]
    out += [("Claude Code", d / "projects", "*/*.jsonl") for d in claude]
    codex = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
    out += [("Codex CLI", codex / "sessions", "**/rollout-*.jsonl"), ("Codex CLI", codex / "archived_sessions",
                                                                      "**/rollout-*.jsonl")]
    gemini = Path(env["GEMINI_CLI_HOME"]).expanduser() if env.get("GEMINI_CLI_HOME") else home
    out += [("Gemini CLI", gemini / ".gemini" / "tmp", "*/chats/*.json"),
            ("Gemini CLI", gemini / ".gemini" / "tmp", "*/chats/*.jsonl")]
    return out


def where_looked(env: Mapping[str, str] | None = None) -> list[str]:
    """The folders ``find_sessions`` searches (what a user is told when none is found)."""
    seen: list[str] = []
    for _, root, _ in _roots(os.environ if env is None else env):
        if str(root) not in seen:
            seen.append(str(root))
    return seen


def _project(agent: str, path: Path) -> str:
    if agent == "Gemini CLI":
        return path.parent.parent.name[:12]
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        head = b""
    m = _CWD.search(head)
    if m:
        try:
            return str(json.loads(b'"' + m.group(1) + b'"'))
        except ValueError:
            pass
    return path.parent.name if agent == "Claude Code" else ""


def _files(env: Mapping[str, str]) -> Iterator[SessionFile]:
    seen: set[str] = set()
    for agent, root, pattern in _roots(env):
        if not root.is_dir():
            continue
        for path in root.glob(pattern):
            try:
                st = path.stat()
                real = str(path.resolve())
            except OSError:
                continue
            if real in seen or not path.is_file() or st.st_size == 0:
                continue
            seen.add(real)
            yield SessionFile(agent, str(path), st.st_mtime)


def find_sessions(env: Mapping[str, str] | None = None, agent: str | None = None) -> list[SessionFile]:
    """Every agent session log on this machine, newest first (``env``: the environment
    to read the homes from, ``os.environ`` by default; ``agent``: one of ``AGENTS``)."""
    env = os.environ if env is None else env
    found = [f for f in _files(env) if agent is None or f.agent == agent]
    found.sort(key=lambda f: (-f.modified, f.path))
    return found


def read_session(f: SessionFile, data: bytes | None = None) -> tuple[SessionSummary, Any]:
    """One session read and summed up from what its log recorded; with the transcript
    (None when it could not be read: the summary's ``error`` says why). ``data``: the
    file's bytes, when already read."""
    from ..errors import ToolclearError
    from ..formats import load_all
    from ..model import main_conversation

    try:
        transcripts = load_all(f.path if data is None else data, name=f.path)
    except ToolclearError as exc:
        return _unreadable(f, exc), None
    t = main_conversation(transcripts)
    return summarize(f.agent, f.path, f.project, t.messages, len(t.marks), _when(f)), t


def session_summary(f: SessionFile) -> SessionSummary:
    """``read_session``'s summary, without the transcript: a Claude Code log is read
    for its calls alone where it can be (``formats.claude_code_usage``: the same calls,
    a third of the time), which is what listing a year of sessions spends its time on."""
    found = _calls_or_summary(f)
    return found if isinstance(found, SessionSummary) else _summary_of(f, found)


def session_summaries(files: Sequence[SessionFile], jobs: int | None = None) -> list[SessionSummary]:
    """``session_summary`` of each file, in order; read by ``jobs`` processes (default:
    one per core) when there is enough to share: a year of sessions is read at the
    speed of the machine, a handful in this process."""
    n = max(1, min(jobs or os.cpu_count() or 1, os.cpu_count() or 1, len(files)))
    ctx = _pool_context(files) if n > 1 else None
    if ctx is None:
        return [session_summary(f) for f in files]
    import sys
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from ..formats.claude_code_usage import session_calls
    from ._workers import stop_workers

    session_calls(b"")  # msgspec and the readers imported once, before the workers are forked
    for stream in (sys.stdout, sys.stderr):  # (a forked worker flushes what it inherited on exit)
        if stream is not None:
            stream.flush()
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
    try:
        # small tasks, in order: this process prices each answer while the workers read on
        found = pool.map(_calls_or_summary, files, chunksize=max(1, len(files) // (8 * n)))
        from ..cost.prices import load_library

        load_library()  # while the workers read
        out = [s if isinstance(s, SessionSummary) else _summary_of(f, s) for f, s in zip(files, found)]
        pool.shutdown(wait=True)
        return out
    except BrokenProcessPool:  # a worker died (out of memory, killed): read them here instead
        stop_workers(pool)
        return [session_summary(f) for f in files]
    except BaseException:
        stop_workers(pool)  # Ctrl-C, SIGTERM: no worker reads on
        raise


_PARALLEL_BYTES = 64 * 2**20
"""How much a listing reads before it is shared among processes (a fork costs a few
milliseconds; reading 64 MB of logs, a quarter of a second)."""


def _pool_context(files: Sequence[SessionFile]) -> Any:
    """How workers start for these files (None: read them here). Forked on Linux from a
    process with one thread (the CLI), where a worker costs milliseconds; elsewhere a
    worker starts a new interpreter, worth it only for a big listing."""
    import multiprocessing
    import sys
    import threading

    size = 0
    for f in files:
        try:
            size += os.stat(f.path).st_size
        except OSError:
            continue
    if size < _PARALLEL_BYTES:
        return None
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn") if size >= 4 * _PARALLEL_BYTES else None


def _calls_or_summary(f: SessionFile) -> SessionSummary | SessionCalls:
    """What a worker hands back: a Claude Code log's calls (plain data, priced by the
    caller), else the summary of the full read."""
    if f.agent == "Claude Code":
        from ..errors import ToolclearError
        from ..formats._source import read_source
        from ..formats.claude_code_usage import session_calls

        try:
            _, data = read_source(f.path)
        except ToolclearError as exc:
            return _unreadable(f, exc)
        calls = session_calls(data)
        return calls if calls is not None else read_session(f, data)[0]
    return read_session(f)[0]


def _summary_of(f: SessionFile, calls: SessionCalls) -> SessionSummary:
    return summarize(f.agent, f.path, f.project, calls.messages, calls.compactions, _when(f))


def _when(f: SessionFile) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(f.modified, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _unreadable(f: SessionFile, exc: Exception) -> SessionSummary:
    return SessionSummary(f.agent, f.path, f.project, _when(f), "", 0, 0, None, 0, None, str(exc))


def summarize(agent: str, path: str, project: str, messages: Sequence[Message], compactions: int,
              when: str) -> SessionSummary:
    """The summary of a conversation's messages (one rule for the full read and the
    usage-only one: they cannot disagree)."""
    from ..cost.billing import recorded_cost
    from ..cost.windows import run_model

    calls = [m for m in messages if m.role == "assistant"]
    used = [m.usage for m in calls if m.usage is not None]
    prompts = [u.prompt_tokens for u in used]
    if prompts:
        peak = max(prompts)
    else:
        from ..counters import count_tokens

        total, peak = 0, 0
        for m, c in zip(messages, count_tokens(messages, "eino")):
            if m.role == "assistant":
                peak = max(peak, total)
            total += c
    read = sum(u.cache_read_tokens for u in used)
    counted = sum(u.prompt_tokens for u in used)
    dollars = None
    calls_priced: tuple[tuple[str, float], ...] = ()
    if used:
        from ..cost.billing import call_dollars

        bill = recorded_cost(messages)
        dollars = float(bill.dollars) if bill.calls else None
        calls_priced = tuple(call_dollars(messages, bill))
    start = next((m.usage.timestamp for m in messages if m.usage is not None and m.usage.timestamp), "") or when
    return SessionSummary(agent, path, project, start, run_model(messages), len(calls), int(peak), dollars,
                          compactions, round(read / counted, 4) if counted else None, call_dollars=calls_priced)
