"""toolclear beside its peer: ccusage (a native binary that reads and prices Claude Code
logs) on the same ``~/.claude`` tree, both as a user runs them (``toolclear sessions``,
``ccusage session --json --offline``), each the median of runs taken in turn; and
their totals, which must agree.

The tree: the corpus's six Claude Code sessions (``tests/data/corpus/claude_code/
entire*``), forty copies each over eight projects (and eighty, the size of the corpus
issue 40 measured), each copy with its own message and request ids (both tools bill a
call repeated across files once: copies sharing ids would be one session's calls read
forty times). ccusage is installed with npm into a
cache (``~/.cache/toolclear-benchmarks``) once; where npm cannot install it the row
says so and the JSON floor row of the formats group stands.

    .venv/bin/python benchmarks/peer_bench.py
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CCUSAGE = "20.0.24"  # the version issue 40 measured
COPIES = 40


def ccusage() -> Path | None:
    """ccusage's executable, installed with npm into a cache on first use (None when npm
    cannot install it here)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolclear-benchmarks" / \
        f"ccusage-{CCUSAGE}"
    exe = cache / "node_modules" / ".bin" / "ccusage"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None
        try:
            subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), f"ccusage@{CCUSAGE}"],
                           capture_output=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return exe if exe.exists() else None


def tree(home: Path, copies: int = COPIES) -> tuple[int, float]:
    """The sessions laid out as Claude Code leaves them under ``home/projects``: files, MB."""
    sources = sorted((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("entire*"))
    files, size = 0, 0
    for k in range(copies):
        project = home / "projects" / f"-home-user-proj{k % 8}"
        project.mkdir(parents=True, exist_ok=True)
        for p in sources:
            data = p.read_bytes().replace(b'"requestId":"req_', f'"requestId":"req_{k}x'.encode()) \
                .replace(b'"id":"msg_', f'"id":"msg_{k}x'.encode())
            (project / f"{k:02d}-{p.name}").write_bytes(data)
            files, size = files + 1, size + len(data)
    return files, size / 2**20


def rows() -> list[tuple[str, str, str]]:
    exe = ccusage()
    # the tree of forty copies, and one of eighty: the size of the corpus issue 40 measured (433 MB)
    return [row for copies in dict.fromkeys((COPIES, 2 * COPIES)) for row in _row(exe, copies)]


def _row(exe: Path | None, copies: int) -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as d:
        home = Path(d)
        files, mb = tree(home, copies)
        what = f"read + price {files} Claude Code sessions ({mb:.0f} MB, a ~/.claude tree): toolclear sessions"
        if exe is None:
            return [(what, "not run", "npm could not install ccusage here: the JSON floor row stands")]
        # only this tree: no other agent's home, no real ~/.claude
        env = {**os.environ, "CLAUDE_CONFIG_DIR": d, "HOME": d, "CODEX_HOME": d, "GEMINI_CLI_HOME": d}
        ours = [sys.executable, "-m", "toolclear", "sessions", "--agent", "claude", "--limit", "0", "--json"]
        theirs = [str(exe), "session", "--json", "--offline"]
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        out: dict[str, Any] = {}
        for _ in range(5):
            for name, cmd in (("ours", ours), ("theirs", theirs)):
                start = time.perf_counter()
                done = subprocess.run(cmd, capture_output=True, env=env, check=False, cwd=d)
                times[name].append(time.perf_counter() - start)
                if done.returncode:
                    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
                    return [(what, "failed", f"{cmd[0]} exited {done.returncode}: {said[-1] if said else ''}")]
                out[name] = json.loads(done.stdout)
    t_ours, t_theirs = statistics.median(times["ours"]), statistics.median(times["theirs"])
    # no call is shared between these files, so the sessions' own totals add up
    ours_total = sum(s["recorded_dollars"] or 0.0 for s in out["ours"])
    theirs_total = float(out["theirs"]["totals"]["totalCost"])
    agree = f"totals equal (${ours_total:,.2f})" if abs(ours_total - theirs_total) < 0.005 else \
        f"totals DIFFER (${ours_total:,.2f} against ccusage's ${theirs_total:,.2f})"
    return [(what, f"{t_ours * 1000:,.1f} ms",
             f"{t_ours / t_theirs:.2f} x ccusage {CCUSAGE} session --json --offline ({t_theirs * 1000:,.1f} ms; "
             f"goal <= 2 x); {agree}")]


if __name__ == "__main__":  # (benchmarks/run.py's peer group calls rows() in its own process)
    for row in rows():
        print("| " + " | ".join(row) + " |")
