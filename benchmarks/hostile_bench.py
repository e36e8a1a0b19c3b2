"""Hostile corpora: time and peak memory of each against its bound, every input made here.

    .venv/bin/python benchmarks/hostile_bench.py

Each case runs in a fresh process (its peak RSS is its own): a 20,000-entry zip and
tar.gz swept on every core (bound: 60 s); 20,000 members all named run.json (labels in
linear time); decompression bombs (a 2 MB zip of zeros, a repetitive transcript); one
damaged member among good ones. Memory bound: max(256 MB, 20 x the input's bytes).
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = b"\n".join(json.dumps(m).encode() for m in [
    {"role": "user", "content": "fix the bug in src/app/main_1.py"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "read_file", "arguments": "{\"path\": \"src/app/main_1.py\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "def main():\n    return 1\n" * 40},
    {"role": "assistant", "content": "done: main_1.py returns 1"}])

CASE = r"""
import resource, sys, time
sys.path.insert(0, {root!r})
import toolclear as tc
t0 = time.perf_counter()
corpus = tc.load_corpus({path!r})
listed = time.perf_counter() - t0
sweep = tc.sweep_corpus(corpus, [tc.ClearToolResultConfig(100, 100)], engine={engine!r}, mode="replay")
took = time.perf_counter() - t0
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(took, listed, own * 1024, worker * 1024, len(sweep.table), len(sweep.errors))
"""


def make_zip(path: Path, members: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)


def make_tgz(path: Path, n: int) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for k in range(n):
            info = tarfile.TarInfo(f"runs/{k:05d}.jsonl")
            info.size = len(RUN)
            tf.addfile(info, io.BytesIO(RUN))


def case(name: str, path: Path, engine: str = "process", bound_s: float | None = None) -> tuple[str, ...]:
    out = subprocess.run([sys.executable, "-c", CASE.format(root=str(ROOT), path=str(path), engine=engine)],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        return (name, "failed", out.stderr.strip().splitlines()[-1] if out.stderr else "", "", "")
    took, listed, own, worker, rows, errors = out.stdout.split()
    size = path.stat().st_size
    mem_bound = max(256 << 20, 20 * size)
    peak = max(int(own), int(worker))
    return (name, f"{float(took):.1f} s (listing {float(listed):.1f} s)" + (f" / {bound_s:.0f} s" if bound_s else ""),
            f"{peak / 2**20:,.0f} MB (main {int(own) / 2**20:,.0f}, worker {int(worker) / 2**20:,.0f}) "
            f"/ {mem_bound / 2**20:,.0f} MB", f"{int(rows):,} rows", f"{int(errors):,}")


def build(d: Path) -> None:
    """Every input, written to ``d`` (run in a process of its own, see main)."""
    make_zip(d / "n20k.zip", [(f"runs/{k:05d}.jsonl", RUN) for k in range(20_000)])
    make_tgz(d / "n20k.tar.gz", 20_000)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_zip(d / "same.zip", [("run.json", RUN)] * 20_000)
    make_zip(d / "zeros.zip", [("ok.jsonl", RUN), ("bomb.jsonl", b"0" * (1 << 30))])
    make_zip(d / "repeat.zip", [("run.jsonl", RUN * 200_000)])
    good = [(f"r{k}.jsonl", RUN) for k in range(10)]
    make_zip(d / "damaged.zip", [*good, ("bad.jsonl", RUN * 50)])
    data = bytearray((d / "damaged.zip").read_bytes())
    with zipfile.ZipFile(d / "damaged.zip") as zf:
        info = zf.getinfo("bad.jsonl")
    start = info.header_offset + 30 + len(info.filename)
    data[start:start + 20] = b"\xff" * 20
    (d / "damaged.zip").write_bytes(bytes(data))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--build":
        build(Path(sys.argv[2]))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        subprocess.run([sys.executable, __file__, "--build", str(d)], check=True, timeout=900)
        rows.append(case("zip, 20,000 entries", d / "n20k.zip", bound_s=60))
        rows.append(case("tar.gz, 20,000 entries", d / "n20k.tar.gz", bound_s=60))
        rows.append(case("zip, 20,000 entries all named run.json", d / "same.zip", bound_s=60))
        rows.append(case(f"zip bomb ({(d / 'zeros.zip').stat().st_size / 2**20:.1f} MB: 1 GiB of zeros)",
                         d / "zeros.zip"))
        rows.append(case(f"one repetitive transcript ({(d / 'repeat.zip').stat().st_size / 2**10:,.0f} KB zipped)",
                         d / "repeat.zip"))
        rows.append(case("a corrupt member among 10 good", d / "damaged.zip"))
    print(f"toolclear hostile corpora ({os.cpu_count()} cores, Python {sys.version.split()[0]})\n")
    head = ("input", "time / bound", "peak memory / bound", "swept", "errors")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    _ = resource, time


if __name__ == "__main__":
    main()
