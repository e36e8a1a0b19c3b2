"""Every bad input answered within 5 s and 512 MB: one fresh process per input.

    .venv/bin/python benchmarks/bad_inputs.py     # prints the table alone

Each input of the bad-input corpus (the committed files and the generated big ones)
goes through ``toolclear inspect`` in its own process, so the peak RSS measured is that
input's alone (the interpreter and toolclear's imports included, as a user sees it).
The floor row is the same process on a three-message file: what every row pays anyway.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
LIMIT_S, LIMIT_MB = 5.0, 512

Row = tuple[str, str, str]

# VmHWM (this process's peak), not ru_maxrss, which Linux carries over from the parent
_CHILD = """
import re, sys, time
t0 = time.perf_counter()
from toolclear.cli import main
code = main(["inspect", sys.argv[1]], stdout=open("/dev/null", "wb"), stderr=open("/dev/null", "w"))
hwm = re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)
print(code, time.perf_counter() - t0, hwm)
"""


def _one(path: Path) -> tuple[int, float, float]:
    """(exit status, seconds, peak MB) of inspecting one file in a fresh process; the
    process is capped at 4 GB of address space so a regression cannot take the machine."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, preexec_fn=cap)
    wall = time.perf_counter() - t0
    try:
        code, _, rss_kb = done.stdout.split()
        return int(code), wall, int(rss_kb) / 1024
    except ValueError:
        return -1, wall, 0.0


def rows() -> list[Row]:
    sys.path.insert(0, str(BAD))
    import make_bad

    out: list[Row] = []
    worst_s = worst_mb = 0.0
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {name: BAD / name for name in make_bad.small()}
        for name, data in make_bad.big().items():
            (Path(tmp) / name).write_bytes(data)
            files[name] = Path(tmp) / name
        fifo = Path(tmp) / "named-pipe.json"
        os.mkfifo(fifo)
        files["named-pipe.json (a FIFO nobody writes)"] = fifo
        files["/dev/zero"] = Path("/dev/zero")
        floor = Path(tmp) / "floor.json"
        floor.write_bytes(b'[{"role": "user", "content": "hi"}]')
        _, floor_s, floor_mb = _one(floor)
        out.append(("bad inputs: floor (3-message file, same process)", f"{floor_s:.2f} s, {floor_mb:,.0f} MB", ""))
        for name in sorted(files):
            code, seconds, mb = _one(files[name])
            worst_s, worst_mb = max(worst_s, seconds), max(worst_mb, mb)
            ok = code in (0, 2) and seconds <= LIMIT_S and mb <= LIMIT_MB
            if not ok:
                failures.append(name)
            out.append((f"  {name} (exit {code})", f"{seconds:.2f} s, {mb:,.0f} MB",
                        f"<= {LIMIT_S:.0f} s, {LIMIT_MB} MB" + ("" if ok else "  FAIL")))
    out.append((f"bad inputs: worst of {len(files)}", f"{worst_s:.2f} s, {worst_mb:,.0f} MB",
                "all within" if not failures else f"{len(failures)} over"))
    return out


if __name__ == "__main__":
    table = rows()
    width = max(len(r[0]) for r in table)
    for what, figure, target in table:
        print(f"| {what:<{width}} | {figure:>18} | {target:<22} |")
