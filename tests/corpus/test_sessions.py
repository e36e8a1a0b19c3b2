"""The agent logs on this machine: found where the agents keep them, listed newest first,
inspected without naming a path, and advised on, from a fake home holding real logs."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.corpus.sessions import find_sessions, read_session, where_looked

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
CC_BIG = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
CC_SMALL = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
CODEX = CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"
GEMINI = ROOT / "tests" / "data" / "formats" / "gemini-cli_session.json"


def _put(src: Path, dst: Path, mtime: float) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    os.utime(dst, (mtime, mtime))
    return dst


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home where Claude Code, Codex CLI and Gemini CLI left their logs, as each lays them out."""
    h = tmp_path / "home"
    _put(CC_SMALL, h / ".claude" / "projects" / "-Users-alex-cli" / "86-4e0c91f5c0.jsonl", 1_700_000_000)
    _put(CC_BIG, h / ".claude" / "projects" / "-Users-alex-cli" / "4c-ff5845d5a2.jsonl", 1_700_000_300)
    _put(CODEX, h / ".codex" / "sessions" / "2025" / "11" / "17" / "rollout-2025-11-17T15-30-28-019a93b9.jsonl",
         1_700_000_200)
    _put(GEMINI, h / ".gemini" / "tmp" / "9f2c9f2c" / "chats" / "session-2025-10-02.json", 1_700_000_100)
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(h))
    return h


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue().decode(), err.getvalue()


def test_sessions_are_found_where_the_agents_keep_them_newest_first(home) -> None:
    found = find_sessions()
    assert [f.agent for f in found] == ["Claude Code", "Codex CLI", "Gemini CLI", "Claude Code"]
    assert Path(found[0].path).name == "4c-ff5845d5a2.jsonl"
    # the project is the working folder the log names, not the folder's encoded name
    assert found[0].project == "/Users/alex/workspace/cli/.worktrees/3"
    assert found[1].project == "/home/user/projects/temp/chatbot-ui"
    assert find_sessions(agent="Codex CLI") == [found[1]]


def test_the_homes_follow_the_agents_own_variables(home, tmp_path, monkeypatch) -> None:
    elsewhere = tmp_path / "cfg"
    _put(CC_SMALL, elsewhere / "projects" / "p" / "s.jsonl", 1_800_000_000)
    codex = tmp_path / "codexhome"
    _put(CODEX, codex / "sessions" / "2026" / "01" / "01" / "rollout-x.jsonl", 1_800_000_100)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    found = find_sessions()
    # CLAUDE_CONFIG_DIR replaces ~/.claude (as in Claude Code and ccusage); CODEX_HOME replaces ~/.codex
    assert [(f.agent, Path(f.path).name) for f in found] == [
        ("Codex CLI", "rollout-x.jsonl"), ("Claude Code", "s.jsonl"), ("Gemini CLI", "session-2025-10-02.json")]
    assert str(elsewhere / "projects") in where_looked() and str(codex / "sessions") in where_looked()


def test_a_session_summary_is_what_its_log_recorded(home) -> None:
    f = find_sessions()[0]
    s, t = read_session(f)
    assert t is not None and s.error == ""
    calls = [m for m in t.messages if m.role == "assistant"]
    assert s.model_calls == len(calls) and s.compactions == len(t.marks) == 1
    assert s.peak_context == max(m.usage.prompt_tokens for m in calls if m.usage is not None)
    assert s.recorded_dollars == pytest.approx(tc.recorded_cost(t.messages).dollars)
    assert s.start == next(u.timestamp for u in (m.usage for m in calls) if u is not None and u.timestamp)
    assert s.model.startswith("claude-")
    assert 0.5 < (s.cache_hit_rate or 0) < 1


def test_the_sessions_command_lists_them_with_json(home) -> None:
    code, out, err = run("sessions")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["agent", "project", "start"]
    assert "Claude Code" in lines[1] and "4c-ff5845d5a2.jsonl" in lines[1] and "$" in lines[1]
    code, out, _ = run("sessions", "--json", "--agent", "codex")
    rows = json.loads(out)
    assert code == 0 and [r["agent"] for r in rows] == ["Codex CLI"]
    assert rows[0]["model_calls"] > 0 and rows[0]["peak_context"] > 0 and rows[0]["recorded_dollars"] > 0
    code, out, _ = run("sessions", "--limit", "1")
    assert code == 0 and "... and 3 older" in out
    # the listing is the same however many processes read it (--jobs; read here below 64 MB)
    code, shared, _ = run("sessions", "--json", "--jobs", "2")
    assert code == 0 and shared == run("sessions", "--json", "--jobs", "1")[1]
    assert [r["agent"] for r in json.loads(shared)] == ["Claude Code", "Codex CLI", "Gemini CLI", "Claude Code"]


def test_inspect_with_no_path_takes_the_newest_session(home) -> None:
    code, out, err = run("inspect")
    assert code == 0, err
    assert "the newest session" in err and "4c-ff5845d5a2.jsonl" in err
    assert out.splitlines()[3].startswith("  verdict (claude-opus-4-6, prompt cache counted): eino ")


def test_nothing_found_says_where_it_looked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    for command in ("sessions", "advise", "inspect"):
        code, out, err = run(command)
        assert code == 2 and out == "" and err.count("\n") == 1, (command, err)
        assert "no agent session found" in err and str(tmp_path / ".claude" / "projects") in err
        assert "Traceback" not in err


def test_advise_picks_per_agent_with_the_corpus_rule(home) -> None:
    code, out, err = run("advise", "--json")
    assert code == 0, err
    found = {a["agent"]: a for a in json.loads(out)}
    assert set(found) == {"Claude Code", "Codex CLI", "Gemini CLI"}
    cc = found["Claude Code"]
    assert len(cc["sessions"]) == 2 and cc["compactions"] == 1 and cc["peak_context"] > 100_000
    assert cc["recorded_dollars"] == pytest.approx(sum(s["recorded_dollars"] for s in cc["sessions"]))
    # the pick is the corpus's own recommendation over the same sessions and settings
    from toolclear.corpus.advice import ADVISE_SPECS

    corpus = tc.load_corpus([s["path"] for s in cc["sessions"]])
    rec = tc.sweep_corpus(corpus, [tc.runs.lab.parse_policy(s) for s in ADVISE_SPECS], pricing="auto",
                          engine="serial").recommend()
    assert cc["best"] == (rec.label or None) and cc["pays"] == (rec.config is not None)
    if not cc["pays"]:
        assert cc["snippet"] is None and "No setting does better than no policy" in cc["summary"]
    code, text, _ = run("advise")
    assert code == 0 and "Claude Code: 2 recent session(s)" in text
    assert ("no policy pays once the prompt cache is counted" in text) or ("a policy pays:" in text)


def test_python_dash_m_cli_runs_every_command(tmp_path) -> None:
    """The module run as a script reaches the helpers defined below its commands."""
    (tmp_path / "a.json").write_bytes((ROOT / "sample_data" / "coding-agent.openai.json").read_bytes())
    done = subprocess.run([sys.executable, "-m", "toolclear.cli", "corpus", str(tmp_path), "--engine", "serial"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "NameError" not in done.stderr and done.stdout.startswith("run,")


def test_the_app_with_no_file_opens_on_the_newest_session(home, monkeypatch) -> None:
    """`toolclear app` with no file sets TOOLCLEAR_APP_SESSIONS: the picker lists the
    sessions on this machine first, newest first, and the app opens on the newest."""
    from streamlit.testing.v1 import AppTest

    from toolclear.inspector import app as inspector

    inspector.session_choices.clear()
    monkeypatch.setenv("TOOLCLEAR_APP_SESSIONS", "1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    box = at.selectbox(key="sample")
    assert box.value.startswith("Claude Code · 3 · ") and box.value.endswith("4c-ff5845d5a2.jsonl")
    assert [o.split(" · ")[0] for o in box.options[:4]] == ["Claude Code", "Codex CLI", "Gemini CLI", "Claude Code"]
    assert at.metric[0].label.startswith("Verdict: ")
    assert any("4c-ff5845d5a2.jsonl" in c.value.replace("\\", "") for c in at.caption)
    box.set_value(box.options[1]).run()  # the Codex session
    assert not at.exception and any("format codex" in c.value.replace("\\", "") for c in at.caption)
    inspector.session_choices.clear()


def test_toolclear_app_asks_for_the_picker_only_without_a_file(monkeypatch) -> None:
    from toolclear import cli

    seen = {}

    class Child:
        def __init__(self, cmd, env):
            seen.update(env=env)

        def wait(self, *a):
            return 0

        def poll(self):
            return 0

    monkeypatch.setattr("subprocess.Popen", Child)
    assert run("app", "--headless")[0] == 0 and seen["env"]["TOOLCLEAR_APP_SESSIONS"] == "1"
    assert run("app", str(CC_SMALL), "--headless")[0] == 0 and "TOOLCLEAR_APP_SESSIONS" not in seen["env"]
    del cli


def _resumed(src: Path, dst: Path, mtime: float) -> Path:
    """What `claude --resume` writes: a new session file holding the calls of the one it
    resumed (the same message and request ids) under a new session id, then its own."""
    lines = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    new_id = "resumed-0000-4000-8000-000000000000"
    for r in lines:
        if "sessionId" in r:
            r["sessionId"] = new_id
    last = next(r for r in reversed(lines) if r.get("type") == "assistant" and isinstance(r.get("message"), dict))
    extra = json.loads(json.dumps(last))
    extra["uuid"], extra["parentUuid"] = "resumed-new-call", last.get("uuid")
    extra["message"]["id"], extra["requestId"] = "msg_resumed_new", "req_resumed_new"
    lines.append(extra)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("".join(json.dumps(r) + "\n" for r in lines))
    os.utime(dst, (mtime, mtime))
    return dst


def _bill_from_the_lines(paths: list[Path]) -> tuple[float, int]:
    """The bill over raw Claude Code lines, written out plainly: each call (message id and
    request id) once, with the usage of its last line, at its model's prices."""
    calls: dict[str, dict] = {}
    for p in paths:
        for line in p.read_text().splitlines():
            r = json.loads(line) if line.strip() else {}
            m = r.get("message") if isinstance(r, dict) else None
            if r.get("type") == "assistant" and isinstance(m, dict) and isinstance(m.get("usage"), dict) \
                    and m.get("model") != "<synthetic>":
                calls[f"{m['id']}:{r['requestId']}"] = m
    total = 0.0
    for m in calls.values():
        u, p = m["usage"], tc.pricing_for(m["model"])
        one_h = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        write = u.get("cache_creation_input_tokens", 0)
        total += (u.get("input_tokens", 0) * p.input + (write - one_h) * p.cache_write
                  + one_h * (p.cache_write_1h if p.cache_write_1h is not None else p.cache_write)
                  + u.get("cache_read_input_tokens", 0) * p.cache_read + u.get("output_tokens", 0) * p.output) / 1e6
    return total, len(calls)


def test_a_call_that_a_resumed_session_repeats_is_billed_once_in_totals(home) -> None:
    """Two real session files sharing calls (a session and its resumption): `sessions`
    and `advise` bill each call once (as ccusage keys them, message id and request id),
    equal to the bill written out from the raw lines; each session's own view still shows
    all its calls, and the output says how many were shared."""
    from toolclear.corpus.advice import advise
    from toolclear.corpus.sessions import find_sessions, read_session
    from toolclear.cost.billing import call_dollars, recorded_total

    project = home / ".claude" / "projects" / "-Users-alex-cli"
    resumed = _resumed(project / "86-4e0c91f5c0.jsonl", project / "resumed.jsonl", 1_700_000_400)
    files = [f for f in find_sessions(agent="Claude Code")]
    summaries = [read_session(f)[0] for f in files]
    total = recorded_total(s.call_dollars for s in summaries)
    want, calls = _bill_from_the_lines([Path(f.path) for f in files])
    assert total.calls == calls and total.dollars == pytest.approx(want, abs=1e-6)
    original = tc.load(project / "86-4e0c91f5c0.jsonl")
    assert total.shared == len(call_dollars(original.messages)) > 10
    by_path = {s.path: s for s in summaries}
    assert by_path[str(resumed)].model_calls == sum(m.role == "assistant" for m in original.messages) + 1
    assert sum(s.recorded_dollars for s in summaries) > total.dollars  # what summing the files would bill
    code, out, err = run("sessions", "--agent", "claude")
    assert code == 0, err
    assert f"{total.shared:,} calls that resumed sessions repeat are counted once" in out
    (advice,) = [a for a in advise(recent=10) if a.agent == "Claude Code"]
    assert advice.recorded_dollars == total.dollars and advice.shared_calls == total.shared
