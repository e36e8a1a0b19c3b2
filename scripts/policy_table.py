"""The table of every built-in policy's dollars and losses on the same real runs (the
Claude Code sessions of tests/data/corpus with ten tool results or more), priced with the
prompt cache at Sonnet 4.5 prices, for docs/policies.md:

    .venv/bin/python scripts/policy_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402

SETTINGS = [
    "as-recorded", "eino:threshold=5000,keep=10000", "eino", "eino-reduction:threshold=50000,skip_truncation=true",
    "anthropic:trigger=30000,keep=3", "anthropic", "langchain:trigger=30000,keep=3", "swe-agent:n=5", "openhands",
    "openai-trimmer", "swe-agent-remove-regex", "swe-agent-closed-window", "claude-code-microcompact",
    "claude-code-microcompact:gap=10", "deepagents-evict", "deepagents-evict:limit=2000", "anthropic-thinking",
    "anthropic-thinking:keep=1,trigger=30000",
    "cache-aware:base=anthropic,threshold=30000,keep=3",
    "cache-aware:base=eino,threshold=5000,keep=10000", "cache-aware:base=swe-agent,keep=5",
    "anthropic-compaction", "anthropic-compaction:trigger=60000", "claude-code-compact", "codex-compact",
    "codex-compact:limit=100000", 'langchain-summarization:trigger=["tokens",60000]', "eino-summarization",
    "eino-summarization:tokens=80000", "openhands-summarizing", "openai-compaction:threshold=100000",
    "adk-compaction:threshold=80000", "hybrid", "hybrid:base=openai-trimmer,keep=1,compaction=anthropic-compaction",
]


def main() -> None:
    runs = [t for p in sorted((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("*.jsonl"))
            for t in [tc.load(p)] if sum(m.role == "tool" for m in t.messages) >= 10]
    configs = [tc.parse_policy(s) for s in SETTINGS]
    totals = {s: [0.0, 0, 0, 0] for s in SETTINGS}  # dollars, tokens saved, needed, runs that save money
    for t in runs:
        for s, row in zip(SETTINGS, tc.compare(t, configs, pricing="claude-sonnet-4-5").rows):
            tot = totals[s]
            tot[0] += row["net_dollars_saved"]
            tot[1] += row["tokens_saved"]
            tot[2] += row["needed_results"]
            tot[3] += row["net_dollars_saved"] > 0.005
    print(f"{len(runs)} real Claude Code sessions (tests/data/corpus/claude_code), Sonnet 4.5 prices, prompt cache "
          "counted:\n")
    print("| `--policy` | net $ saved | tokens saved | results needed later | runs it saves money on |")
    print("|---|---:|---:|---:|---:|")
    for s, (dollars, tokens, needed, paying) in totals.items():
        print(f"| `{s}` | {dollars:+.2f} | {tokens:,} | {needed} | {paying} of {len(runs)} |")


if __name__ == "__main__":
    main()
