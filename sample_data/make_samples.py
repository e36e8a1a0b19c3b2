"""Write the bundled sample transcripts (run from the repository root).

One made-up but realistic coding-agent run (a model fixing a bug in this very project:
it lists files, reads source files, greps, runs the tests) written in every format
toolclear reads natively, plus a small file of several runs. The tool results add up to
well over eino's default threshold, so the inspector shows the policy at work on its
first screen with the default settings.

    python sample_data/make_samples.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "sample_data"

SYSTEM = (
    "You are a careful coding agent working in a Python repository. Use the tools to look "
    "around before you change anything, keep edits small, and run the tests after each change."
)
TASK = (
    "`toolclear inspect` prints a traceback when the transcript file is empty. "
    "Find where that happens, make it a one-line error with exit status 2, and add a test."
)


def _read(rel: str, limit: int = 40000) -> str:
    text = (ROOT / rel).read_text(encoding="utf-8")
    lines = text.splitlines()[:900]
    numbered = "\n".join(f"{i + 1:>5}\t{line}" for i, line in enumerate(lines))
    return numbered[:limit]


def _listing() -> str:
    files = sorted(
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file() and ".git" not in p.parts and ".venv" not in p.parts and "__pycache__" not in p.parts
        and "sample_data" not in p.parts and "data" not in p.parts
    )
    return "\n".join(files[:120])


def _grep(pattern: str) -> str:
    hits = []
    for p in sorted((ROOT / "toolclear").rglob("*.py")):
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern in line:
                hits.append(f"{p.relative_to(ROOT)}:{n}:{line.strip()}")
    return "\n".join(hits[:400]) or "(no matches)"


def _pytest(rng: random.Random, failing: bool) -> str:
    names = [
        "test_conformance.py", "test_formats.py", "test_cli.py", "test_replay.py",
        "test_offload.py", "test_counters.py", "test_clearing.py",
    ]
    out = ["============================= test session starts ==============================",
           "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0",
           "rootdir: /workspace/toolclear", "configfile: pyproject.toml",
           f"collected {rng.randint(300, 420)} items", ""]
    for name in names:
        dots = "".join("." for _ in range(rng.randint(20, 70)))
        out.append(f"tests/{name} {dots}" + ("F" if failing and name == "test_cli.py" else "") + " [ 42%]")
    if failing:
        out += ["", "=================================== FAILURES ===================================",
                "_________________________ test_inspect_empty_file _________________________", ""]
        for frame in range(12):
            out.append(f"toolclear/formats/_doc.py:{200 + frame * 7}: in parse")
            out.append(f"    value = _loads(text)  # frame {frame}")
        out += ["E   json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)", "",
                "=========================== short test summary info ============================",
                "FAILED tests/test_cli.py::test_inspect_empty_file - json.decoder.JSONDecodeError",
                f"========================= 1 failed, {rng.randint(300, 400)} passed in 41.2s ========================="]
    else:
        out.append(f"============================= {rng.randint(300, 420)} passed in 39.8s ==============================")
    return "\n".join(out)


def _pytest_verbose(rng: random.Random) -> str:
    out = ["============================= test session starts ==============================",
           "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0 -- /workspace/.venv/bin/python",
           "cachedir: .pytest_cache", "rootdir: /workspace/toolclear", "collected 640 items", ""]
    names = ["conformance", "formats", "cli", "replay", "offload", "counters", "clearing", "report"]
    for k in range(640):
        mod = names[k % len(names)]
        case = f"test_{mod}_{rng.choice(['roundtrip', 'vector', 'status', 'window', 'error', 'limit'])}_{k:03d}"
        param = rng.choice(["", "[eino]", "[openai]", "[anthropic-cassette]", "[claude-code-sidechain]", "[case-0187]"])
        out.append(f"tests/test_{mod}.py::{case}{param} PASSED{'':>20}[{100 * (k + 1) // 640:>3}%]")
    out.append("============================= 640 passed in 48.31s =============================")
    return "\n".join(out)


def run_steps(rng: random.Random, size: str = "full") -> list[tuple[str, str, dict, str]]:
    """(thought, tool name, arguments, result) for each step of the run."""
    steps = [
        ("Let me look at the layout of the repository first.", "list_dir", {"path": "."}, _listing()),
        ("The CLI lives in toolclear/cli.py; reading it.", "read_file", {"path": "toolclear/cli.py"}, _read("toolclear/cli.py")),
        ("Errors seem to come from the format layer. Reading the document parser.", "read_file",
         {"path": "toolclear/formats/_doc.py"}, _read("toolclear/formats/_doc.py")),
        ("Where is TranscriptError raised?", "grep", {"pattern": "TranscriptError("}, _grep("TranscriptError(")),
        ("Reading the registry that dispatches formats.", "read_file", {"path": "toolclear/formats/__init__.py"},
         _read("toolclear/formats/__init__.py")),
        ("Running the tests to see the failure.", "run_tests", {"args": ["-q"]}, _pytest(rng, True)),
        ("The message model, to check what an empty transcript becomes.", "read_file",
         {"path": "toolclear/model.py"}, _read("toolclear/model.py")),
        ("And the errors module.", "read_file", {"path": "toolclear/errors.py"}, _read("toolclear/errors.py")),
        ("Checking how the chat formats report problems.", "read_file", {"path": "toolclear/formats/chat.py"},
         _read("toolclear/formats/chat.py")),
        ("Where else is parse() called?", "grep", {"pattern": "parse("}, _grep("parse(")),
        ("The fix belongs in parse(): an empty file gets its own message.", "edit_file",
         {"path": "toolclear/formats/_doc.py", "old": "value = _loads(text)",
          "new": "if not text.strip():\n        raise TranscriptError('the file is empty')\n    value = _loads(text)"},
         "Edited toolclear/formats/_doc.py: 1 replacement."),
        ("Running the tests again.", "run_tests", {"args": ["-q"]}, _pytest(rng, False)),
        ("Reading the report module the CLI uses.", "read_file", {"path": "toolclear/report.py"},
         _read("toolclear/report.py")),
        ("How are counters chosen? Reading counters.py.", "read_file", {"path": "toolclear/counters.py"},
         _read("toolclear/counters.py")),
        ("And the policy itself, to be sure nothing else breaks.", "read_file", {"path": "toolclear/policies/eino_clear.py"},
         _read("toolclear/policies/eino_clear.py")),
        ("The replay module calls the policy too.", "read_file", {"path": "toolclear/_replay.py"},
         _read("toolclear/_replay.py")),
        ("Adding the test.", "edit_file", {"path": "tests/test_cli.py", "append": "def test_inspect_empty_file(tmp_path): ..."},
         "Edited tests/test_cli.py: appended 9 lines."),
        ("Re-reading the parser after the edit.", "read_file", {"path": "toolclear/formats/_doc.py"},
         _read("toolclear/formats/_doc.py")),
        ("Which functions does the package define? A broad grep.", "grep", {"pattern": "def "}, _grep("def ")),
        ("Full verbose test run before finishing.", "run_tests", {"args": ["-v"]}, _pytest_verbose(rng)),
        ("Final quick run of the CLI tests.", "run_tests", {"args": ["-q", "tests/test_cli.py"]}, _pytest(rng, False)),
    ]
    if size == "small":
        steps = [(t, n, a, r[:3000]) for t, n, a, r in steps[:6]]
    return steps


FINAL = (
    "Fixed: an empty or whitespace-only file now gives `toolclear: error: <file>: the file is empty` "
    "with exit status 2 instead of a traceback. The check sits in `formats/_doc.parse`, so the library, "
    "the CLI and the app all get it; `tests/test_cli.py::test_inspect_empty_file` covers it."
)


def openai_messages(steps: list[tuple[str, str, dict, str]], prefix: str = "call") -> list[dict]:
    msgs: list[dict] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for i, (thought, name, args, result) in enumerate(steps):
        cid = f"{prefix}_{i:02d}"
        msgs.append({"role": "assistant", "content": thought, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": cid, "content": result})
    msgs.append({"role": "assistant", "content": FINAL})
    return msgs


def eino_lines(steps: list[tuple[str, str, dict, str]]) -> list[dict]:
    out = []
    for m in openai_messages(steps):
        m = dict(m)
        if m["role"] == "tool":
            m["tool_name"] = next(
                s[1] for i, s in enumerate(steps) if f"call_{i:02d}" == m["tool_call_id"]
            )
        out.append(m)
    return out


def anthropic_body(steps: list[tuple[str, str, dict, str]]) -> dict:
    msgs: list[dict] = [{"role": "user", "content": [{"type": "text", "text": TASK}]}]
    for i, (thought, name, args, result) in enumerate(steps):
        tid = f"toolu_{i:02d}"
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": thought},
            {"type": "tool_use", "id": tid, "name": name, "input": args}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": result}]})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": FINAL}]})
    return {"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": SYSTEM, "messages": msgs}


def langchain_messages(steps: list[tuple[str, str, dict, str]]) -> list[dict]:
    out: list[dict] = [
        {"type": "system", "data": {"content": SYSTEM, "additional_kwargs": {}, "type": "system"}},
        {"type": "human", "data": {"content": TASK, "additional_kwargs": {}, "type": "human"}},
    ]
    for i, (thought, name, args, result) in enumerate(steps):
        cid = f"call_{i:02d}"
        out.append({"type": "ai", "data": {"content": thought, "additional_kwargs": {}, "type": "ai",
                                           "tool_calls": [{"name": name, "args": args, "id": cid, "type": "tool_call"}]}})
        out.append({"type": "tool", "data": {"content": result, "type": "tool", "name": name,
                                             "tool_call_id": cid, "status": "success"}})
    out.append({"type": "ai", "data": {"content": FINAL, "additional_kwargs": {}, "type": "ai", "tool_calls": []}})
    return out


def claude_code_lines(steps: list[tuple[str, str, dict, str]]) -> list[dict]:
    session = "0b5c4d3e-sample-0000-0000-toolclear0001"
    lines: list[dict] = []
    parent = None
    n = 0

    def event(kind: str, message: dict, **extra: object) -> None:
        nonlocal parent, n
        n += 1
        uid = f"00000000-0000-4000-8000-{n:012d}"
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/workspace/toolclear",
                      "sessionId": session, "version": "2.1.37", "type": kind, "message": message, "uuid": uid,
                      "timestamp": f"2026-11-30T10:{n // 60:02d}:{n % 60:02d}.000Z", **extra})
        parent = uid

    event("user", {"role": "user", "content": TASK})
    for i, (thought, name, args, result) in enumerate(steps):
        tid = f"toolu_{i:02d}"
        reply = {"id": f"msg_{i:02d}", "type": "message", "role": "assistant", "model": "claude-opus-4-5"}
        event("assistant", {**reply, "content": [{"type": "text", "text": thought}]})
        event("assistant", {**reply, "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}]})
        event("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": result}]},
              toolUseResult={"stdout": result, "stderr": "", "interrupted": False, "isImage": False})
    event("assistant", {"id": "msg_final", "type": "message", "role": "assistant", "model": "claude-opus-4-5",
                        "content": [{"type": "text", "text": FINAL}]})
    return lines


def main() -> None:
    steps = run_steps(random.Random(7))
    (OUT / "coding-agent.openai.json").write_text(json.dumps(openai_messages(steps), indent=2) + "\n")
    (OUT / "coding-agent.eino.jsonl").write_text(
        "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in eino_lines(steps)))
    (OUT / "coding-agent.anthropic.json").write_text(json.dumps(anthropic_body(steps), indent=2) + "\n")
    (OUT / "coding-agent.langchain.json").write_text(json.dumps(langchain_messages(steps), indent=2) + "\n")
    (OUT / "coding-agent.claude-code.jsonl").write_text(
        "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in claude_code_lines(steps)))
    runs = []
    for k in range(4):
        rng = random.Random(100 + k)
        small = run_steps(rng, "small")[: 3 + k]
        runs.append({"task_id": k, "reward": round(rng.random(), 2), "traj": openai_messages(small, f"call_{k}")})
    (OUT / "several-runs.openai.json").write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
