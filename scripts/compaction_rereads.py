"""Ground truth from real context loss: in the Claude Code sessions of the test corpus
that compacted, treat the compaction as clearing everything before it, and count the
files the agent read again after it that ``toolclear.losses`` flags (the path, or a
piece of it, among the terms lost at the call that re-reads it).

    .venv/bin/python scripts/compaction_rereads.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402
from toolclear.result import Step  # noqa: E402
from toolclear.runs.losses import pieces  # noqa: E402


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


def compaction_as_clearing(msgs: tuple[tc.Message, ...], cut: int) -> SimpleNamespace:
    """A replay in which, at the first call after the compaction, everything before it
    is emptied (what the model no longer saw)."""
    final = tuple(tc.Message(m.role, "") if i < cut else m for i, m in enumerate(msgs))
    steps, first = [], True
    for c in (i for i, m in enumerate(msgs) if m.role == "assistant"):
        steps.append(Step(c, tuple(range(cut)) if c > cut and first else (), 0, 0, False))
        first = first and c <= cut
    return SimpleNamespace(messages=final, steps=tuple(steps), token_counts=tuple(tc.count_tokens(msgs)),
                           token_counts_original=(), mode="replay", _seen=msgs)


def main() -> None:
    total = predicted = 0
    for path in sorted((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("*.jsonl")):
        for t in tc.load_all(path):
            if not t.marks:
                continue
            msgs, cut = t.messages, t.marks[0][0]
            lost_at: dict[int, set[str]] = {}
            for ref in tc.losses(compaction_as_clearing(msgs, cut)).references:
                lost_at.setdefault(ref.call_index, set()).update(ref.terms)
            before = reads(msgs, 0, cut)
            again = [(p, i) for p, i in reads(msgs, cut, len(msgs)).items() if p in before]
            hits = [(p, i) for p, i in again if lost_at.get(i, set()) & (pieces(p) | {p})]
            total, predicted = total + len(again), predicted + len(hits)
            print(f"{path.name}: compaction at message {cut} of {len(msgs)}; {len(again)} file(s) read again "
                  f"after it, {len(hits)} predicted")
            for p, i in again:
                print(f"    call {i}: {p}" + ("  (predicted)" if (p, i) in hits else ""))
    print(f"in all: {predicted} of {total} re-reads predicted")


if __name__ == "__main__":
    main()
