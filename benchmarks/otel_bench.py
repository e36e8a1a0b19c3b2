"""Reading OpenTelemetry traces, 750 chat spans against 3,000 (a conversation each):
the reader is linear when the larger takes at most 5x the smaller. Run in a process of
its own, as the CLI reads a trace: the full table's rows before this one leave their
100,000-message runs in their process, whose heap slowed the larger read alone (5.4x
there against 4.1-4.4x in a process of its own; the reader's functions each scale 4.0-
4.7x under a profiler either way).

    .venv/bin/python benchmarks/otel_bench.py [--json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import interleaved, ms  # noqa: E402

import toolclear as tc  # noqa: E402
from tests.formats.test_otel import _trace  # noqa: E402


def rows() -> list[tuple[str, str, str]]:
    small, large = _trace(750, True), _trace(3000, True)
    tc.load_all(small, "otel")  # the first read imports the reader
    # in turn, after a full collection each: a drift of the machine touches both alike
    t_small, t_large = interleaved(lambda: tc.load_all(small, "otel"), lambda: tc.load_all(large, "otel"), 5)
    return [("OpenTelemetry: 750 chat spans -> 3,000 (a conversation each; own process)",
             f"{ms(t_small)} -> {ms(t_large)}", f"{t_large / t_small:.1f} x (<= 5 x, linear)")]


def main() -> None:
    table = rows()
    if "--json" in sys.argv[1:]:  # for benchmarks/run.py
        print(json.dumps(table))
        return
    for what, figure, target in table:
        print(f"| {what} | {figure} | {target} |")


if __name__ == "__main__":
    main()
