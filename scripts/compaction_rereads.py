"""Ground truth from real context loss: in Claude Code sessions that compacted, the run
as recorded (``toolclear.recorded``: each compaction where the log shows it), and the
files the agent read again after a compaction that it had read before it: how many
``toolclear.losses`` flags (the path, or a piece of it, among the terms lost at the call
that reads it again, or the read itself a re-fetch). A recall check: the agent paid to
get those back.

    .venv/bin/python scripts/compaction_rereads.py [RUNS_DIR ...]

Without a folder, the sessions of the test corpus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402
from toolclear.runs.terms import pieces  # noqa: E402


def reads(msgs: tuple[tc.Message, ...], lo: int, hi: int) -> dict[str, int]:
    """File path -> the first message in [lo, hi) whose Read call names it."""
    out: dict[str, int] = {}
    for i in range(lo, hi):
        for call in msgs[i].tool_calls:
            if call.name != "Read":
                continue
            try:
                path = json.loads(call.arguments).get("file_path")
            except (ValueError, AttributeError):
                continue
            if isinstance(path, str):
                out.setdefault(path, i)
    return out


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]] or [ROOT / "tests" / "data" / "corpus" / "claude_code"]
    total = predicted = 0
    for path in sorted(p for folder in folders for p in folder.glob("*.jsonl")):
        for t in tc.load_all(path):
            if not t.marks:
                continue
            msgs, cut = t.messages, t.marks[0][0]
            lost_at: dict[int, set[str]] = {}
            for ref in tc.losses(tc.recorded(t)).references:
                lost_at.setdefault(ref.call_index, set()).update(ref.terms)
            before = reads(msgs, 0, cut)
            again = [(p, i) for p, i in reads(msgs, cut, len(msgs)).items() if p in before]
            hits = [(p, i) for p, i in again if lost_at.get(i, set()) & (pieces(p) | {p, "(fetched again)"})]
            total, predicted = total + len(again), predicted + len(hits)
            print(f"{path.name}: compaction at message {cut} of {len(msgs)}; {len(again)} file(s) read again "
                  f"after it, {len(hits)} predicted")
            for p, i in again:
                print(f"    call {i}: {p}" + ("  (predicted)" if (p, i) in hits else ""))
    print(f"in all: {predicted} of {total} re-reads predicted")


if __name__ == "__main__":
    main()
