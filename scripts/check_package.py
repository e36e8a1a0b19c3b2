"""Run by scripts/check_package.sh with the fresh venv's Python, from a folder outside
the checkout: the installed wheel, used as a user would. Stdlib only besides toolclear.
Arguments: the development venv's Python and scripts/render_check.py (Playwright is a
test tool, not a dependency of the package)."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import pkgutil
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path.cwd()


def check(ok: bool, what: str, done: subprocess.CompletedProcess[str] | None = None) -> None:
    if not ok:
        said = f"\n{done.stderr.strip()[-2000:]}" if done is not None and done.stderr else ""
        sys.exit(f"package check failed: {what}{said}")
    print(f"package: ok: {what}", file=sys.stderr)


def tc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["toolclear", *args], capture_output=True, text=True, env=env, timeout=600)


def modules() -> None:
    import toolclear

    check("site-packages" in toolclear.__file__, f"toolclear imports from the venv ({toolclear.__file__})")
    count = 0
    for info in pkgutil.walk_packages(toolclear.__path__, "toolclear."):
        if info.name.endswith(".__main__"):  # runs the CLI on import: `python -m toolclear` is checked below
            continue
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # an integration's framework is its own extra, not [app]
            check(info.name.startswith("toolclear.integrations") and not (exc.name or "").startswith("toolclear"),
                  f"{info.name} imports ({exc})")
        count += 1
    check(count >= 60, f"every one of the {count} modules of the wheel imports")
    samples = Path(toolclear.__file__).parent / "inspector" / "samples"
    check(len(list(samples.glob("*.json*"))) >= 6, "the bundled samples are in the wheel")
    root = Path(toolclear.__file__).parent.parent
    wanted = Path("shipped.txt").read_text().split()
    missing = [f for f in wanted if not (root / f).is_file()]
    check(not missing and len(wanted) > 60, f"every one of the {len(wanted)} files of the checkout's package is "
          f"installed (missing: {missing[:5]})")


def commands() -> None:
    want = importlib.metadata.version("toolclear")
    done = tc("--version")
    check(done.returncode == 0 and done.stdout.strip() == f"toolclear {want}", f"--version says {want}", done)
    done = subprocess.run([sys.executable, "-m", "toolclear", "--version"], capture_output=True, text=True)
    check(done.returncode == 0 and done.stdout.strip() == f"toolclear {want}", "python -m toolclear --version", done)
    done = tc("inspect", "session.jsonl")
    check(done.returncode == 0 and "verdict (claude-opus-4-6, prompt cache counted)" in done.stdout,
          "inspect gives the verdict first", done)
    done = tc("reduce", "session.jsonl", "--policy", "anthropic:trigger=50000", "--replay", "-o", "reduced.jsonl")
    check(done.returncode == 0 and Path("reduced.jsonl").stat().st_size > 0, "reduce writes the reduced session", done)
    done = tc("compare", "session.jsonl", "--json")
    doc = json.loads(done.stdout or "{}")
    check(done.returncode == 0 and len(doc.get("policies", ())) == 6
          and doc.get("verdict", {}).get("pricing") == "claude-opus-4-6",
          "compare prices every policy", done)
    from toolclear.formats.claude_code_usage import session_calls

    calls = session_calls(Path("session.jsonl").read_bytes())  # (None without msgspec: the full read)
    check(calls is not None and len(calls.usage_lines) > 0,
          "the sessions listing reads a Claude Code log for its calls alone (msgspec, from [app])")
    done = tc("report", "session.jsonl", "-o", "report.html")
    text = Path("report.html").read_text()
    check(done.returncode == 0 and "<html" in text and "Plotly" in text, "report writes a self-contained HTML file", done)


def homes() -> None:
    for how in ("default", "variables"):
        home = Path(tempfile.mkdtemp())
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
        env["HOME"] = str(home)
        claude, codex = home / ".claude", home / ".codex"
        if how == "variables":
            claude, codex = home / "cc-config", home / "codex-home"
            env.update(CLAUDE_CONFIG_DIR=str(claude), CODEX_HOME=str(codex))
        (claude / "projects" / "-work-cli").mkdir(parents=True)
        shutil.copy("session.jsonl", claude / "projects" / "-work-cli" / "4c-ff5845d5a2.jsonl")
        day = codex / "sessions" / "2025" / "11" / "17"
        day.mkdir(parents=True)
        shutil.copy("rollout.jsonl", day / "rollout-2025-11-17T15-30-28-019a93b9.jsonl")
        done = tc("sessions", "--json", env=env)
        rows = json.loads(done.stdout or "[]")
        check(done.returncode == 0 and sorted(r["agent"] for r in rows) == ["Claude Code", "Codex CLI"],
              f"sessions finds both agents' logs ({how})", done)
        done = tc("advise", "--json", env=env)
        found = json.loads(done.stdout or "[]")
        check(done.returncode == 0 and {a["agent"] for a in found} == {"Claude Code", "Codex CLI"}
              and all(isinstance(a["pays"], bool) for a in found), f"advise answers for each agent ({how})", done)
        done = tc("inspect", env=env)
        check(done.returncode == 0 and "the newest session" in done.stderr, f"inspect takes the newest ({how})", done)
    env = dict(os.environ, HOME=tempfile.mkdtemp())
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    done = tc("advise", env=env)
    check(done.returncode == 2 and done.stderr.count("\n") == 1 and "looked in" in done.stderr,
          "advise with nothing found says where it looked", done)


def app(dev_python: str, render: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(["toolclear", "app", "session.jsonl", "--headless", "--port", str(port),
                               "--address", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        for _ in range(120):
            try:
                with opener.open(url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            check(False, "toolclear app answers its health check")
        done = subprocess.run([dev_python, render, url, "Verdict", "session.jsonl"],
                              capture_output=True, text=True, timeout=180)
        check(done.returncode == 0, f"toolclear app renders in Chromium ({done.stdout.strip()}{done.stderr.strip()})", done)
    finally:
        server.terminate()
        server.wait(20)


if __name__ == "__main__":
    modules()
    commands()
    homes()
    app(sys.argv[1], sys.argv[2])
