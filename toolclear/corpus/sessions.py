"""The agent logs on this machine, where the agents themselves keep them.

Claude Code writes a JSON Lines file per session under ``~/.claude/projects/<project>/``
(and ``~/.config/claude/projects``; ``CLAUDE_CONFIG_DIR``, comma-separated, replaces
both, as in ccusage); Codex CLI under ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``
(``CODEX_HOME``); Gemini CLI under ``~/.gemini/tmp/<project hash>/chats/``
(``GEMINI_CLI_HOME`` in place of the home folder). ``find_sessions`` lists them newest
first without reading them; ``read_session`` reads one into its summary.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

__all__ = ["AGENTS", "SessionFile", "SessionSummary", "find_sessions", "read_session", "where_looked"]

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
        out = asdict(self)
        del out["call_dollars"]
        return out


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


def read_session(f: SessionFile) -> tuple[SessionSummary, Any]:
    """One session read and summed up from what its log recorded; with the transcript
    (None when it could not be read: the summary's ``error`` says why)."""
    import datetime as dt

    from ..cost.billing import recorded_cost
    from ..errors import ToolclearError
    from ..formats import load_all
    from ..model import main_conversation

    when = dt.datetime.fromtimestamp(f.modified, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        transcripts = load_all(f.path)
    except ToolclearError as exc:
        return SessionSummary(f.agent, f.path, f.project, when, "", 0, 0, None, 0, None, str(exc)), None
    t = main_conversation(transcripts)
    return summarize(f.agent, f.path, f.project, t, when, recorded_cost), t


def summarize(agent: str, path: str, project: str, t: Any, when: str, recorded_cost: Any) -> SessionSummary:
    from ..cost.windows import run_model

    calls = [m for m in t.messages if m.role == "assistant"]
    used = [m.usage for m in calls if m.usage is not None]
    prompts = [u.prompt_tokens for u in used]
    if prompts:
        peak = max(prompts)
    else:
        from ..counters import count_tokens

        total, peak = 0, 0
        for m, c in zip(t.messages, count_tokens(t.messages, "eino")):
            if m.role == "assistant":
                peak = max(peak, total)
            total += c
    read = sum(u.cache_read_tokens for u in used)
    counted = sum(u.prompt_tokens for u in used)
    dollars = None
    calls_priced: tuple[tuple[str, float], ...] = ()
    if used:
        from ..cost.billing import call_dollars

        c = recorded_cost(t.messages)
        dollars = float(c.dollars) if c.calls else None
        calls_priced = tuple(call_dollars(t.messages, c))
    start = next((m.usage.timestamp for m in t.messages if m.usage is not None and m.usage.timestamp), "") or when
    return SessionSummary(agent, path, project, start, run_model(t.messages), len(calls), int(peak), dollars,
                          len(t.marks), round(read / counted, 4) if counted else None, call_dollars=calls_priced)
