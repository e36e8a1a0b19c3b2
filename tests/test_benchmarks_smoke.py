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
