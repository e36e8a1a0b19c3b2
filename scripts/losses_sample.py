"""Draw the seeded sample of lost references judged in docs/losses-precision.md: ten per
policy from the real runs of the test corpus, each with the cleared text and the reply
around its first term.

    .venv/bin/python scripts/losses_sample.py
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402
from toolclear.runs.losses import message_text  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "corpus"
FILES = (sorted((CORPUS / "claude_code").glob("entire-cli*.jsonl")) + sorted((CORPUS / "swe_agent").glob("*.traj"))
         + sorted((CORPUS / "openai_chat").glob("*.traj.json")))
POLICIES = {"eino 10k/20k": tc.ClearToolResultConfig(10_000, 20_000),
            "swe-agent n=3": tc.ObservationMaskingConfig.swe_agent(n=3),
            "anthropic 30k/3": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=30_000, keep_tool_uses=3)}


def around(text: str, term: str, width: int = 160) -> str:
    k = text.find(term)
    return text[max(0, k - width):k + len(term) + width].replace("\n", " ⏎ ")


def main() -> None:
    rng = random.Random(7)
    for name, config in POLICIES.items():
        refs = []
        for path in FILES:
            t = tc.load_all(path)[0]
            refs += [(path.name, t, ref) for ref in tc.losses(tc.replay(t.messages, config)).references]
        sample = rng.sample(refs, min(10, len(refs)))
        print(f"##### {name}: {len(refs)} lost references, {len(sample)} drawn")
        for k, (fname, t, ref) in enumerate(sample, 1):
            term = ref.terms[0]
            cleared, reply = t.messages[ref.message_index], t.messages[ref.call_index]
            print(f"--- {k}. {fname[:40]} call {ref.call_index}, message {ref.message_index} "
                  f"({cleared.tool_name}): {', '.join(ref.terms[:4])}")
            print("  cleared:", around(message_text(cleared), term)[:400])
            print("  reply:  ", around(message_text(reply), term)[:400])


if __name__ == "__main__":
    main()
