"""The benchmarks call the package as users do: a renamed or removed function breaks
them silently (they are not run by the suite), so their in-process rows run here on a
small run. Their figures are not checked: timings live in benchmarks/, not in tests."""

from __future__ import annotations

import sys

from .conftest import ROOT


def test_the_app_rows_run_on_a_small_run() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run as bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rows, own = bench.app_10k(bench.ten_k_transcript(400))
    assert [r[0].strip().split(" ")[0] for r in rows] == ["10,000-message", "count", "core", "chart", "toolclear's"]
    assert own > 0 and all(r[1] for r in rows)


def test_the_opentelemetry_row_runs_in_a_process_of_its_own() -> None:
    """benchmarks/run.py reads its rows from ``otel_bench.py --json`` (as the live rows)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run as bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rows = bench.own_process("otel_bench.py")
    assert len(rows) == 1 and rows[0][0].startswith("OpenTelemetry: 750 chat spans -> 3,000")
    assert " -> " in rows[0][1] and rows[0][2].endswith("(<= 5 x, linear)")


def test_the_peer_rows_tree_gives_each_copy_its_own_calls(tmp_path, monkeypatch) -> None:
    """The ccusage row's ~/.claude tree: every copy of a session bills its own calls
    (both tools bill a call repeated across files once), so toolclear's total over the
    tree is the copies' sum; and where npm cannot install ccusage the row says so."""
    import json

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import peer_bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from toolclear.cli import main

    files, _ = peer_bench.tree(tmp_path, copies=2)
    assert files == 2 * len(list((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("entire*")))
    import io

    for key in ("CODEX_HOME", "GEMINI_CLI_HOME", "HOME"):
        monkeypatch.setenv(key, str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    out = io.BytesIO()
    assert main(["sessions", "--agent", "claude", "--limit", "0"], stdout=out) == 0
    assert "counted once" not in out.getvalue().decode()  # no call shared between the copies
    out = io.BytesIO()
    assert main(["sessions", "--agent", "claude", "--limit", "0", "--json"], stdout=out) == 0
    listed = json.loads(out.getvalue())
    assert len(listed) == files and all(s["recorded_dollars"] for s in listed)
    monkeypatch.setattr(peer_bench, "ccusage", lambda: None)
    monkeypatch.setattr(peer_bench, "COPIES", 1)
    found = peer_bench.rows()
    assert len(found) == 2  # the tree, and one twice its size
    assert all(row[1] == "not run" and "npm could not install ccusage" in row[2] for row in found)
