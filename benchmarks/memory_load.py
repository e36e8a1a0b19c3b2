"""Peak memory of loading a big JSON Lines transcript (run in its own process).

    python benchmarks/memory_load.py [SIZE_MB] [--format claude-code|eino]

Writes a transcript of about SIZE_MB (default 200) to a temporary folder, then loads it in
a fresh child process and reports the child's peak RSS against the file size.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


ASCII_WORDS = ["alpha", "beta", "gamma", "delta", "file", "def", "return", "self", "import", "x = 1", "\n    ",
               "assert", "{", "}", "PASSED", "tests/test_cli.py::test_help"]


def write_eino(path: Path, size_mb: int, profile: str = "typical") -> None:
    """typical: code and logs, ASCII but for one tool result in a hundred with CJK or an
    emoji (as real agent logs are); emoji: every tool result holds an emoji, so Python
    stores every one at 4 bytes per character (the worst case)."""
    rng = random.Random(3)
    target = size_mb * 1024 * 1024
    written = 0
    i = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            i += 1
            if i % 3 == 0:
                body = " ".join(rng.choice(ASCII_WORDS) for _ in range(rng.randint(200, 3000)))
                if profile == "emoji" or rng.random() < 0.01:
                    body += " 测试 🙂"
                rec = {"role": "tool", "tool_call_id": f"c{i - 1}", "tool_name": rng.choice(["read_file", "grep"]),
                       "content": body}
            elif i % 3 == 1:
                rec = {"role": "assistant", "content": "let me look",
                       "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "read_file",
                                                                                       "arguments": '{"path": "a.py"}'}}]}
            else:
                rec = {"role": "user", "content": "go on"}
            line = json.dumps(rec, ensure_ascii=False) + "\n"
            fh.write(line)
            written += len(line.encode())


# VmHWM (this process's own peak): ru_maxrss carries over the parent's peak on Linux,
# so a big benchmark process would be counted as the child's
CHILD = """
import re, sys, time
sys.path.insert(0, {root!r})
def hwm():
    return int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
base = hwm()
import toolclear as tc
t0 = time.perf_counter()
t = tc.load({path!r})
t1 = time.perf_counter()
n = sum(tc.count_tokens(t.messages))
t2 = time.perf_counter()
peak = hwm()
print(len(t.messages), n, t1 - t0, t2 - t1, base, peak)
"""


def measure(path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(path))],
                         capture_output=True, text=True, check=True)
    messages, tokens, load_s, count_s, base_kb, peak_kb = out.stdout.split()
    size = path.stat().st_size
    return {
        "file_mb": size / 2**20,
        "messages": int(messages),
        "tokens": int(tokens),
        "load_s": float(load_s),
        "count_s": float(count_s),
        "baseline_mb": int(base_kb) / 1024,
        "peak_mb": int(peak_kb) / 1024,
        "peak_over_file": int(peak_kb) * 1024 / size,
    }


def run(size_mb: int = 200, profile: str = "typical") -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        write_eino(path, size_mb, profile)
        return measure(path)


def write_tiny(path: Path, messages: int = 200_000) -> None:
    """The worst case per byte: eino JSON Lines of tiny messages (a call, its two-letter
    result, a user turn, a one-letter reply: about 50 bytes a message)."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(messages):
            k = i % 4
            rec: dict[str, object] = (
                {"role": "assistant", "tool_calls": [{"id": f"{i}", "function": {"name": "ls"}}]} if k == 0
                else {"role": "tool", "tool_call_id": f"{i - 1}", "content": "ok"} if k == 1
                else {"role": "user", "content": "go"} if k == 2 else {"role": "assistant", "content": "k"})
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")


def inspect_tiny(messages: int = 200_000) -> dict[str, float]:
    """Peak RSS of ``toolclear inspect`` (the verdict included) on ``write_tiny``'s file,
    in a fresh process, against the file's size."""
    from bad_inputs import _one

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tiny.jsonl"
        write_tiny(path, messages)
        code, seconds, peak_mb = _one(path)  # its own VmHWM, whatever ran before it
        if code:
            raise RuntimeError(f"toolclear inspect exited {code} on the tiny-messages file")
        size = path.stat().st_size
        return {"file_mb": size / 2**20, "messages": messages, "seconds": seconds, "peak_mb": peak_mb,
                "peak_over_file": peak_mb * 2**20 / size}


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
    profile = "emoji" if "--emoji" in sys.argv else "typical"
    print(json.dumps(run(size, profile), indent=2))


if __name__ == "__main__":
    main()
