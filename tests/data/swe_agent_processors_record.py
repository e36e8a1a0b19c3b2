# Records tests/data/swe_agent_processors_vectors.jsonl.gz: see its README.
"""Record vectors of SWE-agent's RemoveRegex and ClosedWindowHistoryProcessor
(sweagent/agent/history_processors.py at 3ea751c087f3), run on generated histories."""
import copy
import gzip
import json
import random
import sys

sys.path.insert(0, ".")
from sweagent.agent.history_processors import ClosedWindowHistoryProcessor, RemoveRegex

FILES = ["/repo/src/a.py", "/repo/src/b.py", "/repo/tests/test_a.py"]

def window(rng):
    f = rng.choice(FILES)
    start = rng.randint(1, 50)
    n = rng.randint(1, 8)
    body = "".join(f"{start + k}:    line {start + k} of {f.rsplit('/', 1)[1]}\n" for k in range(n))
    head = f"[File: {f} ({rng.randint(60, 400)} lines total)]\n" if rng.random() < 0.85 else ""
    tail = rng.choice(["", f"({rng.randint(1, 300)} more lines below)\n", "(Open file: x)\n(Current directory: /repo)\nbash-$"])
    return head + f"({start - 1} more lines above)\n" * (rng.random() < 0.5) + body + tail

def observation(rng):
    k = rng.random()
    if k < 0.45:
        return window(rng)
    if k < 0.65:
        return "diff follows\n<diff>\n--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n</diff>\nand after" + (" <diff>two</diff> end" if rng.random() < 0.3 else "")
    if k < 0.75:
        return "12: a numbered line without a file header\n13: another"
    return rng.choice(["", "ok", "Your command ran successfully and did not produce any output.", "x" * 50])

def history(rng):
    h = [{"role": "system", "content": "You are SWE-agent. <diff>sys</diff>", "message_type": "system"}]
    if rng.random() < 0.3:
        h.append({"role": "user", "content": window(rng), "is_demo": True, "message_type": "observation"})
    h.append({"role": "user", "content": "fix the bug <diff>in the task</diff>", "message_type": "observation"})
    for _ in range(rng.randint(1, 14)):
        h.append({"role": "assistant", "content": rng.choice(["open a.py", "edit <diff>x</diff>", "goto 40"]),
                  "message_type": "action"})
        role = "tool" if rng.random() < 0.15 else "user"
        h.append({"role": role, "content": observation(rng), "message_type": "observation"})
    return h

rng = random.Random(7)
PATTERNS = [["<diff>.*</diff>"], ["<diff>.*?</diff>", "^\\d+:"], ["line \\d+"]]
with gzip.open(sys.argv[1], "wt") as out:
    for n in range(600):
        h = history(rng)
        if n % 2 == 0:
            cfg = {"remove": rng.choice(PATTERNS), "keep_last": rng.choice([0, 0, 1, 2, 5])}
            got = RemoveRegex(**cfg)(copy.deepcopy(h))
            kind = "remove_regex"
        else:
            cfg = {}
            got = ClosedWindowHistoryProcessor()(copy.deepcopy(h))
            kind = "closed_window"
        out.write(json.dumps({"processor": kind, "config": cfg, "history": h, "expected": got}) + "\n")
