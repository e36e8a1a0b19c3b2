"""Corpus sweeps at scale: a 1,000-run corpus (resampled from the real transcripts) x a
10 x 10 grid in replay mode, on 1 and 2 worker processes; peak memory of the workers.

    .venv/bin/python benchmarks/corpus_bench.py [RUNS]
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "corpus"


def make_corpus(folder: Path, runs: int, seed: int = 0) -> int:
    """``runs`` files of eino JSON Lines, each a conversation drawn from the real corpus;
    returns the size in bytes of the largest."""
    pool = [t for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix in (".json", ".jsonl")
            for t in tc.load_all(p) if any(m.role == "tool" for m in t.messages)]
    rng = random.Random(seed)
    largest = 0
    for k in range(runs):
        t = rng.choice(pool)
        data = "".join(json.dumps(m.to_dict(), ensure_ascii=False) + "\n" for m in t.messages).encode()
        (folder / f"run-{k:05d}.jsonl").write_bytes(data)
        largest = max(largest, len(data))
    return largest


def _hwm_mb() -> float:
    """This process's own peak RSS (VmHWM: ru_maxrss of a spawned child starts from the
    parent's, as the child is forked before it execs)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _file_with_peak(f):  # type: ignore[no-untyped-def]
    from toolclear.corpus import sweeps as c

    rows = c._work_batch([(f, None, None)])
    return rows, _hwm_mb()


def worker_peak_mb(corpus, configs) -> float:  # type: ignore[no-untyped-def]
    """Run the sweep's own worker function on every file in 2 spawned workers, each
    reporting its peak RSS."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from toolclear.corpus import sweeps as c
    from toolclear.runs.lab import policy_spec

    shared = (corpus.format, configs, [policy_spec(x) for x in configs], "replay", None, None, False)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=c._init,
                             initargs=(shared,)) as pool:
        return max(peak for _, peak in pool.map(_file_with_peak, corpus.files, chunksize=8))


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        largest = make_corpus(folder, runs)
        corpus = tc.load_corpus(folder)
        configs = tc.grid(tc.ClearToolResultConfig(), threshold=[2_000 * k for k in range(1, 11)],
                          keep=[4_000 * k for k in range(1, 11)])
        rows = []
        times = {}
        for workers in (1, 2):
            t0 = time.perf_counter()
            sw = tc.sweep_corpus(corpus, configs, workers=workers, engine="process" if workers > 1 else "serial")
            times[workers] = time.perf_counter() - t0
            rows.append((f"{runs:,} runs x {len(configs)} settings, replay, {workers} worker(s)",
                         f"{times[workers]:.1f} s", f"{len(sw.table):,} rows, {len(sw.table) / times[workers]:,.0f}/s"))
        rows.append(("speed-up 1 -> 2 workers", f"{times[1] / times[2]:.2f} x", ">= 1.7 x"))
        per_core = len(sw.table) / times[1]
        rows.append(("throughput per core (run x setting replays)", f"{per_core:,.0f}/s",
                     f"100,000 runs x 100 settings: {100_000 * 100 / per_core / 3600:.1f} core-hours"))
        rows.append(("peak RSS of a worker process (VmHWM)", f"{worker_peak_mb(corpus, configs):.0f} MB",
                     f"largest run {largest / 1e6:.1f} MB on disk; a bare 'import toolclear' is 23 MB"))
        print("| what | measured | note |\n|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]} |")
        print(f"(cores here: {os.cpu_count()})")


if __name__ == "__main__":
    main()
