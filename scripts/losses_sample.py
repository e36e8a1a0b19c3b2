"""Draw the sample of lost references judged in docs/losses-precision.md: for each policy
family (clearing, masking, reduction, compaction), the references whose seeded hash is
smallest, over runs never used to design the rules, each printed with the text it is
charged to and the reply around its first term, for a reader to judge.

    .venv/bin/python scripts/losses_sample.py RUNS_DIR [--per 26] [--seed 7]

RUNS_DIR holds the runs (docs/losses-precision.md lists them: Claude Code sessions from
the ``entire/checkpoints/v1`` branch of entireio/cli, SWE-agent demonstrations). The draw
is by hash, not by position in a list: a reference a rule change removes drops out and
the next one by hash takes its place, while every other drawn reference stays, so a
second judging reads only the newcomers.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402
from toolclear.runs.lab import parse_policy  # noqa: E402
from toolclear.runs.report import call_inputs  # noqa: E402
from toolclear.runs.terms import message_text  # noqa: E402

FAMILIES = {
    "clearing": ["eino:threshold=5000,keep=10000", "eino:threshold=10000,keep=20000",
                 "anthropic:trigger=30000,keep=3", "langchain:trigger=30000,keep=3"],
    "masking": ["swe-agent:n=5", "swe-agent:n=3", "openhands"],
    "reduction": ["eino-reduction:threshold=40000", "eino-reduction:threshold=80000"],
    "compaction": ["claude-code-compact", "anthropic-compaction:trigger=80000", "codex-compact:limit=60000",
                   "as-recorded"],
}
"""The settings each family is judged at: the issue's and round numbers that act on
sessions of 50k-300k tokens."""


def around(text: str, term: str, width: int = 150) -> str:
    k = text.find(term)
    if k < 0:
        k = max(0, text.lower().find(term.lower()))
    return text[max(0, k - width):k + len(term) + width].replace("\n", " ⏎ ")


def draw(runs: list[Path], per: int, seed: int) -> dict[str, list[tuple[str, str, tc.Transcript, tc.LostReference]]]:
    """Per family, the ``per`` references of smallest hash of (seed, family, setting, run,
    call, message)."""
    loaded = {p.name: tc.load_all(p)[0] for p in runs}
    out = {}
    for family, specs in FAMILIES.items():
        found = []
        for spec in specs:
            config = parse_policy(spec)
            for name, t in loaded.items():
                try:
                    r = tc.replay(t.messages, config, backend=tc.MemoryBackend())
                except tc.ToolclearError:
                    continue
                for ref in tc.losses(r).references:
                    key = f"{seed}:{family}:{spec}:{name}:{ref.call_index}:{ref.message_index}"
                    found.append((hashlib.sha256(key.encode()).hexdigest(), spec, name, t, ref))
        found.sort(key=lambda x: x[0])
        out[family] = [(spec, name, t, ref) for _, spec, name, t, ref in found[:per]]
        print(f"##### {family}: {len(found)} references, {len(out[family])} drawn")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path, help="the folder of the runs")
    ap.add_argument("--per", type=int, default=26, help="references drawn per family (default 26)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    runs = sorted(p for p in args.runs.rglob("*") if p.is_file())
    for family, refs in draw(runs, args.per, args.seed).items():
        for k, (spec, name, t, ref) in enumerate(refs, 1):
            term = ref.terms[0]
            inputs = call_inputs(t.messages)
            held, reply = t.messages[ref.message_index], t.messages[ref.call_index]
            print(f"--- {family[0].upper()}{k}. [{spec}] {name[:24]} call {ref.call_index} <- msg "
                  f"{ref.message_index} ({ref.kind} {held.tool_name} {str(inputs[ref.message_index])[:70]!r}) "
                  f"terms: {', '.join(ref.terms[:5])}")
            print("  HELD:", around(message_text(held), term)[:330])
            print("  REPLY:", around(message_text(reply), term)[:380])


if __name__ == "__main__":
    main()
