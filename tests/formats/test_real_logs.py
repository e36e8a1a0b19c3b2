"""Real logs read right (issue 9): every tool result found, counted independently of toolclear."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import toolclear as tc
from toolclear import cli
from toolclear.runs import report

from ..conftest import DATA

CC = sorted((DATA / "corpus" / "claude_code").glob("*.jsonl"))


def _independent_count(path: Path) -> tuple[int, set[str]]:
    """tool_result blocks of main-line (non-sidechain) user lines, read with json alone."""
    n, ids = 0, set()
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not (isinstance(rec, dict) and rec.get("type") == "user" and rec.get("isSidechain") is not True):
            continue
        content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                n += 1
                ids.add(block.get("tool_use_id"))
    return n, ids


@pytest.mark.parametrize("path", CC, ids=lambda p: p.name[:40])
def test_claude_code_keeps_every_result_of_parallel_calls(path) -> None:
    t = tc.load(path)
    n, ids = _independent_count(path)
    results = [m for m in t.messages if m.role == "tool"]
    assert len(results) == n and {m.tool_call_id for m in results} == ids
    calls = [c.id for m in t.messages for c in m.tool_calls]
    assert all(m.tool_call_id in calls for m in results)  # paired, and each result after its call
    seen: set[str] = set()
    for m in t.messages:
        seen.update(c.id for c in m.tool_calls)
        if m.role == "tool":
            assert m.tool_call_id in seen


@pytest.mark.parametrize("path", CC, ids=lambda p: p.name[:40])
def test_a_reply_split_over_lines_is_one_message_with_all_its_text(path) -> None:
    """Claude Code writes a reply a block a line (thinking, then text, then each call).
    The message read is the whole reply: its text without the thinking (what clear_thinking
    leaves) is every text block of every line of that reply, read here with json alone.
    It held the first line's alone: clearing thinking dropped the reply's words."""
    texts: dict[str, list[str]] = {}
    thinking: dict[str, int] = {}
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) and rec.get("type") == "assistant" else None
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list) or rec.get("isSidechain"):
            continue
        for block in msg["content"]:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.setdefault(msg["id"], []).append(block["text"])
            elif kind in ("thinking", "redacted_thinking"):
                thinking[msg["id"]] = thinking.get(msg["id"], 0) + 1
    t = tc.load(path)
    lines = path.read_text().splitlines()
    checked = 0
    for i, m in enumerate(t.messages):
        if m.role != "assistant" or not (m.meta or {}).get("thinking"):
            continue
        reply = json.loads(lines[t.origins.line(i)])["message"]["id"]  # the reply's first line
        assert m.meta["without_thinking"] == "\n".join(x for x in texts.get(reply, []) if x)
        assert len(m.meta["thinking"]) == thinking[reply]
        checked += 1
    assert checked == sum(1 for n in thinking.values() if n)


def test_a_pickled_session_writes_back_as_the_loaded_one() -> None:
    """Which strings of ``toolUseResult`` hold a result is found on export: a session
    pickled (Streamlit's cache, a worker process) and loaded back writes the same bytes."""
    import pickle

    path = DATA / "corpus" / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    t = tc.load(path)
    r = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    again = pickle.loads(pickle.dumps(t))
    assert tc.dump(again, r.messages) == tc.dump(t, r.messages) != path.read_bytes()


def test_parallel_results_are_rewritten_on_export() -> None:
    path = DATA / "corpus" / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    t = tc.load(path)
    r = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    again = tc.load(tc.dump(t, r.messages))
    assert [m.content for m in again.messages] == [m.content for m in r.messages]
    out = tc.dump(t, r.messages).decode()
    for i in r.cleared_indices:  # no copy of a cleared result is left in its line
        line = json.loads(out.split("\n")[int(t.origins[i].split()[1].rstrip(":")) - 1])
        assert t.messages[i].content not in json.dumps(line, ensure_ascii=False) or len(t.messages[i].content) < 20


def test_newer_record_types_are_read_and_named(tmp_path) -> None:
    src = (DATA / "corpus" / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl").read_text()
    lines = src.splitlines()
    extra = [json.dumps({"type": kind, "sessionId": "s", "x": i}) for i, kind in enumerate(
        ["attachment", "permission-mode", "mode", "ai-title", "summary", "file-history-snapshot",
         "queue-operation", "system", "some-future-type"] * 20)]
    data = "\n".join(extra + lines) + "\n"  # most lines are now not user/assistant
    for fmt in ("auto", "claude-code"):
        t = tc.load(data.encode(), fmt)
        assert t.format == "claude-code" and sum(m.role == "tool" for m in t.messages) == 14
    assert any("'some-future-type' (20)" in n for n in t.notes)
    assert tc.dump(t) == data.encode()


def test_subagent_file_has_no_empty_main_conversation() -> None:
    lines = (DATA / "corpus" / "claude_code" / "claude-code-viewer_cc-1.0.98_sidechain-subagents_fe5e1c67.jsonl"
             ).read_text().splitlines()
    side = "\n".join(line for line in lines if '"isSidechain":true' in line.replace(" ", "")) + "\n"
    ts = tc.load_all(side.encode())
    assert ts and all(t.messages for t in ts) and all(t.id.startswith("sidechain") for t in ts)
    assert tc.load(side.encode()).messages == ts[0].messages


def test_recorded_usage_is_read_per_model_call() -> None:
    t = tc.load(DATA / "corpus" / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl")
    usages = [m.usage for m in t.messages if m.usage is not None]
    assert len(usages) > 100 and all(m.role == "assistant" for m in t.messages if m.usage)
    assert sum(u.cache_read_tokens for u in usages) > 0 and usages[0].source == "message.usage"
    codex = tc.load(DATA / "corpus" / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl")
    cu = [m.usage for m in codex.messages if m.usage is not None]
    assert len(cu) > 10 and cu[1].cache_read_tokens == 10240 and cu[1].input_tokens == 1622
    line = report.recorded_usage(codex.messages)
    total = sum(cu[1:], cu[0])
    assert line is not None and f"cache read {total.cache_read_tokens:,}" in line and f"({len(cu)} model" in line
    out = io.BytesIO()
    path = DATA / "corpus" / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"
    assert cli.main(["inspect", str(path)], stdout=out, stderr=io.StringIO()) == 0
    assert line in out.getvalue().decode()
    assert report.recorded_usage(tc.load(DATA / "corpus" / "eino" / "eino-examples_einoagent_memory_f1d40587.jsonl"
                                         ).messages) is None
    # recorded usage is never message text
    assert all(str(u.input_tokens) not in m.content for m in codex.messages if (u := m.usage) and m.content)


def _resolver_record(iid: str) -> dict:
    return {"issue": {"number": 1, "title": "bug"}, "instance_id": iid, "metrics": {"accumulated_cost": 0.1},
            "history": [
                [{"id": 0, "source": "user", "action": "message", "args": {"content": "fix it"}},
                 {"message": "No observation", "observation": "null", "content": "", "extras": {}}],
                [{"id": 2, "source": "agent", "action": "run", "args": {"command": "ls", "thought": "look"}},
                 {"id": 3, "source": "agent", "cause": 2, "observation": "run", "content": "a.py\nb.py"}],
                [{"id": 4, "source": "agent", "action": "run", "args": {"command": "cat a.py"}},
                 {"id": 5, "source": "agent", "cause": 4, "observation": "run", "content": "print(1)"}],
                [{"id": 6, "source": "agent", "action": "finish", "args": {"thought": "done"}},
                 {"message": "No observation", "observation": "null", "content": "", "extras": {}}]]}


def test_openhands_2024_resolver_output_is_read() -> None:
    data = "".join(json.dumps(_resolver_record(i)) + "\n" for i in ("1", "2")).encode()
    ts = tc.load_all(data)
    assert [t.format for t in ts] == ["openhands", "openhands"] and [t.id for t in ts] == ["1", "2"]
    results = [m for m in ts[0].messages if m.role == "tool"]
    assert [(m.content, m.tool_name) for m in results] == [("a.py\nb.py", "run"), ("print(1)", "run")]
    r = tc.reduce_by_tokens(ts[0].messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    again = tc.load_all(tc.dump(ts[0], r.messages))[0]
    assert [m.content for m in again.messages] == [m.content for m in r.messages]


def test_history_only_swe_agent_traj_is_read() -> None:
    full = json.loads((DATA / "corpus" / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj").read_text())
    t = tc.load(json.dumps({"history": full["history"]}).encode())
    assert t.format == "swe-agent" and sum(m.role == "tool" for m in t.messages) == 11


def test_a_file_is_never_read_as_zero_tool_results_without_a_reason() -> None:
    plain = tc.load(DATA / "corpus" / "eino" / "eino-examples_eino_assistant_memory_ce10d8a8.jsonl")
    assert any("no tool calls and no tool results" in n for n in plain.notes)
    # tool output where toolclear does not look: a misread must be said
    odd = {"messages": [{"role": "user", "content": "go"},
                        {"role": "assistant", "content": "", "steps": [
                            {"type": "function_call_output", "output": "x" * 5000}]}]}
    t = tc.load(json.dumps(odd).encode())
    assert any("where agent logs keep tool output" in w for w in t.warnings)
    unanswered = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "and?"}]
    t = tc.load(json.dumps(unanswered).encode())
    assert any("have no result" in w for w in t.warnings)


def test_the_misread_check_skips_its_walk_only_where_it_could_not_warn() -> None:
    """check_coverage skips walking a JSON file when the tool text read is a quarter of the
    file's bytes: that holds only if the walk never counts more characters than the file
    has bytes. Checked on every real JSON / JSON Lines file, and a partial misread still warns."""
    from toolclear.formats import _looks_like_tool_output
    from toolclear.formats._doc import parse

    checked = 0
    for path in sorted((DATA / "corpus").rglob("*")):
        if path.suffix not in (".json", ".jsonl"):
            continue
        doc = parse(path.read_bytes())
        if doc.kind in ("json", "jsonl"):
            looks = _looks_like_tool_output(doc)
            assert looks is None or looks <= len(doc.data), path.name
            checked += 1
    assert checked >= 15
    # one result read, far more tool output where this reader does not look: still said
    partly = {"messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok " * 50},
        {"role": "assistant", "content": "", "steps": [{"type": "function_call_output", "output": "x" * 9000}]}]}
    t = tc.load(json.dumps(partly).encode())
    assert any("where agent logs keep tool output" in w for w in t.warnings)


def test_cassette_response_usage_is_given_to_the_reply_it_produced() -> None:
    path = DATA / "corpus" / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml"
    import yaml

    raw = yaml.safe_load(path.read_text())
    recorded = [i["response"]["parsed_body"]["usage"] for i in raw["interactions"]
                if isinstance(i["response"].get("parsed_body"), dict) and "usage" in i["response"]["parsed_body"]]
    ts = tc.load_all(path)
    seen = {(m.usage.input_tokens, m.usage.output_tokens) for t in ts for m in t.messages if m.usage}
    # every response that a later request carries as its assistant turn has its usage there
    assert seen and seen <= {(u["input_tokens"], u["output_tokens"]) for u in recorded}
    assert all(m.role == "assistant" for t in ts for m in t.messages if m.usage)
    assert len(seen) >= 5


def _walk(value):
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _records(path: Path) -> list:
    text = path.read_text()
    if path.suffix == ".yaml":
        import yaml

        return [yaml.safe_load(text)]
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _count_independently(path: Path) -> int:
    """Tool results a model saw, counted from the raw JSON by each format's own rule."""
    folder = path.parent.name
    recs = _records(path)
    nodes = [n for r in recs for n in _walk(r)]
    if folder == "claude_code":  # in message.content (a line whose message lacks 'content' is broken)
        return sum(1 for r in recs if isinstance(r, dict) and isinstance(r.get("message"), dict)
                   for b in (r["message"].get("content") if isinstance(r["message"].get("content"), list) else ())
                   if isinstance(b, dict) and b.get("type") == "tool_result")
    if folder == "anthropic_messages":
        return sum(1 for n in nodes if n.get("type") == "tool_result")
    if folder == "codex_cli":
        return sum(1 for r in recs if r.get("type") == "response_item"
                   and r["payload"].get("type") in ("function_call_output", "custom_tool_call_output"))
    if folder == "openhands":
        # with function calling, the observations with tool_call_metadata; the resolver's
        # late-2024 output (no source, id or cause), every observation of a tool
        return sum(1 for n in nodes if "observation" in n and (n.get("tool_call_metadata") or (
            not {"source", "id", "cause"} & n.keys() and n["observation"] not in ("agent_state_changed", "null"))))
    if folder == "swe_agent":
        history = recs[0]["history"]
        # a tool message, or (no function calling) the user turn answering an assistant action
        return sum(1 for k, h in enumerate(history) if h["role"] == "tool" or (
            h["role"] == "user" and k and history[k - 1]["role"] == "assistant" and history[k - 1].get("action")))
    return sum(1 for n in nodes if n.get("role") == "tool")


CORPUS_FILES = sorted(p for p in (DATA / "corpus").rglob("*") if p.is_file() and p.suffix != ".md")


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name[:45])
def test_every_corpus_file_yields_every_tool_result(path) -> None:
    found = sum(1 for t in tc.load_all(path) for m in t.messages if m.role == "tool")
    assert found == _count_independently(path)
