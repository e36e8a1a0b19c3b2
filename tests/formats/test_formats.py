"""Every real transcript loads, shows sensible tool results, and round-trips unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import toolclear as tc
from toolclear import ClearToolResultConfig, TranscriptError

from ..conftest import CORPUS, CORPUS_FILES, DATA, SAMPLE_FILES, SAMPLES, corpus_id

EXPECTED_FORMAT = {
    "anthropic_messages": "anthropic",
    "claude_code": "claude-code",
    "codex_cli": "codex",
    "eino": "eino",
    "openhands": "openhands",
    "swe_agent": "swe-agent",
}


def _expected_format(path) -> str:
    if path.name.startswith("mini-swe-agent"):
        return "mini-swe-agent"
    return EXPECTED_FORMAT.get(path.parent.name, "openai")


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[corpus_id(p) for p in CORPUS_FILES])
def test_corpus_file_loads_and_round_trips(path) -> None:
    data = path.read_bytes()
    transcripts = tc.load_all(path)
    assert transcripts and all(t.format == _expected_format(path) for t in transcripts)
    assert len({t.id for t in transcripts}) == len(transcripts)
    for t in transcripts:
        assert len(t.origins) == len(t.messages)
        for m in t.messages:
            if m.role == "tool" and path.parent.name != "eino":
                assert m.tool_name, f"a tool result without a tool name in {t.id}"
        assert tc.dump(t) == data
        assert tc.dump(t, list(t.messages)) == data
    assert tc.dump_all([(t, t.messages) for t in transcripts]) == data
    # and the same from bytes and from text
    assert [t.messages for t in tc.load_all(data)] == [t.messages for t in transcripts]


@pytest.mark.parametrize("path", CORPUS_FILES + SAMPLE_FILES, ids=[corpus_id(p) for p in CORPUS_FILES + SAMPLE_FILES])
def test_cleared_export_reloads_with_only_tool_contents_changed(path) -> None:
    config = ClearToolResultConfig(tool_result_token_threshold=50, keep_recent_tokens=400)
    transcripts = tc.load_all(path)
    results = [tc.reduce_by_tokens(t.messages, config) for t in transcripts]
    out = tc.dump_all([(t, r.messages) for t, r in zip(transcripts, results)])
    again = tc.load_all(out, name=path.name)
    assert len(again) == len(transcripts)
    for t, r, t2 in zip(transcripts, results, again):
        assert [m.content for m in t2.messages] == [m.content for m in r.messages]
        assert [(m.role, m.tool_calls, m.tool_call_id, m.tool_name) for m in t2.messages] == [
            (m.role, m.tool_calls, m.tool_call_id, m.tool_name) for m in t.messages]
    original = path.read_bytes()
    if path.suffix == ".jsonl":
        old_lines, new_lines = original.split(b"\n"), out.split(b"\n")
        assert len(old_lines) == len(new_lines)
        touched = {int(o.split(":")[0].split()[1]) - 1
                   for t, r in zip(transcripts, results) for i in r.cleared_indices for o in [t.origins[i]]}
        for k, (a, b) in enumerate(zip(old_lines, new_lines)):
            if k not in touched:
                assert a == b, f"line {k + 1} changed although nothing in it was cleared"
    elif path.suffix == ".json":
        # a JSON document keeps its layout: only the cleared strings differ
        assert out.count(b"\n") == original.count(b"\n")


def test_api_cassette_request_bodies_load_as_anthropic() -> None:
    cassette = yaml.safe_load((CORPUS / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml").read_text())
    bodies = [it["request"]["parsed_body"] for it in cassette["interactions"] if "parsed_body" in it["request"]]
    assert len(bodies) == 11
    longest = max(bodies, key=lambda b: len(b["messages"]))
    data = json.dumps(longest).encode()
    t = tc.load(data)
    assert t.format == "anthropic"
    tools = [m for m in t.messages if m.role == "tool"]
    assert tools and all(m.tool_name for m in tools)
    assert {m.tool_name for m in tools} >= {"search_tools"}
    assert tc.dump(t) == data
    reduced = tc.reduce_by_tokens(t.messages, ClearToolResultConfig(tool_result_token_threshold=0, keep_recent_tokens=0))
    body = json.loads(tc.dump(t, reduced.messages))
    cleared = [blk for m in body["messages"] if isinstance(m["content"], list) for blk in m["content"]
               if blk.get("type") == "tool_result" and blk.get("content") == "[Old tool result content cleared]"]
    assert len(cleared) == len(reduced.cleared_indices) > 0
    assert body["tools"] == longest["tools"] and body["model"] == longest["model"]


def test_document_tool_result_counts_and_clears_the_document() -> None:
    path = CORPUS / "anthropic_messages" / "pydantic-ai_vcr_multimodal_tool_return_document_anthropic.yaml"
    last = tc.load_all(path)[-1]
    [result] = [m for m in last.messages if m.role == "tool"]
    assert result.tool_name == "get_file" and '"type":"document"' in result.content
    assert tc.eino_tokens(result) > 5000  # the base64 PDF is counted, so it can be cleared


def test_tau_bench_runs() -> None:
    path = CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"
    runs = tc.load_all(path)
    assert len(runs) == 200 and runs[0].id == "task_id=0, trial=0"
    assert sum(len(t.messages) for t in runs) == 5308
    assert sum(1 for t in runs for m in t.messages if m.role == "tool") == 1164
    first = runs[0]
    assert [m.tool_name for m in first.messages if m.role == "tool"][:2] == ["get_user_details", "search_direct_flight"]
    with pytest.raises(TranscriptError, match="200 conversations.*load_all"):
        tc.load(path)
    assert len(tc.load_all(path.read_bytes(), "openai")) == 200


def test_claude_code_sidechains_are_separate() -> None:
    path = CORPUS / "claude_code" / "claude-code-viewer_cc-1.0.98_sidechain-subagents_fe5e1c67.jsonl"
    main, *sides = tc.load_all(path)
    assert main.title == "main conversation" and len(sides) == 5
    assert tc.load(path).messages == main.messages
    assert all(t.id.startswith("sidechain-") for t in sides)
    main_lines = {o.split(":")[0] for o in main.origins}
    side_lines = {o.split(":")[0] for t in sides for o in t.origins}
    assert not main_lines & side_lines
    assert sum(1 for m in main.messages if m.role == "tool") + sum(
        1 for t in sides for m in t.messages if m.role == "tool") == 167


def test_claude_code_merges_split_replies_and_clears_tool_use_result() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl"
    t = tc.load(path)
    calls = [c for m in t.messages for c in m.tool_calls]
    results = [m for m in t.messages if m.role == "tool"]
    assert len(calls) == len(results) == 14
    assert {c.id for c in calls} == {m.tool_call_id for m in results}
    r = tc.reduce_by_tokens(t.messages, ClearToolResultConfig(tool_result_token_threshold=100, keep_recent_tokens=100))
    original = path.read_text().split("\n")
    out = tc.dump(t, r.messages).decode().split("\n")
    for i in r.cleared_indices:
        n = int(t.origins[i].split()[1].rstrip(":")) - 1
        line, before = json.loads(out[n]), json.loads(original[n])
        assert [b["content"] for b in line["message"]["content"] if b.get("type") == "tool_result"] == [r.config.placeholder]
        _assert_same_types_result_text_cleared(before["toolUseResult"], line["toolUseResult"], r.config.placeholder)


def _assert_same_types_result_text_cleared(before, after, placeholder) -> None:
    """toolUseResult keeps its shape and every field's type; long texts become the placeholder."""
    if isinstance(before, dict):
        assert isinstance(after, dict) and before.keys() == after.keys()
        for k in before:
            if k in ("filePath", "type", "mode", "status"):
                assert after[k] == before[k]
            _assert_same_types_result_text_cleared(before[k], after[k], placeholder)
    elif isinstance(before, list):
        assert isinstance(after, list) and len(before) == len(after)
        for x, y in zip(before, after):
            _assert_same_types_result_text_cleared(x, y, placeholder)
    elif isinstance(before, str):
        assert isinstance(after, str)
        assert after == before or after == placeholder
        if len(before) >= 80 or "\n" in before:
            assert after == placeholder
    else:
        assert after == before


def test_claude_code_compaction_keeps_the_whole_run() -> None:
    t = tc.load(CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl")
    assert sum(1 for m in t.messages if m.role == "tool") > 150
    assert any("compacted" in n for n in t.notes)


def test_claude_code_keeps_broken_lines_and_reports_them() -> None:
    t = tc.load(CORPUS / "claude_code" / "fixture_claude-code-log_edge_cases.jsonl")
    assert any("line 13" in w for w in t.warnings)
    assert [m.role for m in t.messages].count("tool") == 1


def test_codex_merges_calls_and_names_results() -> None:
    t = tc.load(CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl")
    assert t.id == "019a93b9-f380-7600-98ff-940e6b99603c"
    results = [m for m in t.messages if m.role == "tool"]
    assert len(results) == 39 and {m.tool_name for m in results} == {"shell", "update_plan"}
    assert any("reasoning" in n for n in t.notes)


def test_swe_agent_observations_as_tool_results() -> None:
    t = tc.load(CORPUS / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj")
    tools = [m for m in t.messages if m.role == "tool"]
    assert len(tools) == 11 and tools[0].tool_name == "create"
    assert any("observations sent as user turns" in n for n in t.notes)
    fc = tc.load(CORPUS / "swe_agent" / "swe-agent_function-calling-replay_marshmallow-1867.traj")
    assert [m.tool_name for m in fc.messages if m.role == "tool"][:2] == ["create", "insert"]


def test_openhands_evaluation_output_has_one_conversation_per_instance() -> None:
    runs = tc.load_all(CORPUS / "openhands" / "openhands_multi-swe-bench_example_output.jsonl")
    assert [t.id for t in runs][0] == "ponylang__ponyc-4595" and len(runs) == 3
    assert sum(1 for t in runs for m in t.messages if m.role == "tool") >= 100


def test_mini_swe_agent_keeps_extra_and_unknown_roles() -> None:
    t = tc.load(CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json")
    assert t.messages[-1].role == "exit"
    assert any("'exit'" in w for w in t.warnings)


def test_langchain_three_spellings_and_langgraph_state() -> None:
    to_dict = [
        {"type": "human", "data": {"content": "hi", "type": "human"}},
        {"type": "ai", "data": {"content": "", "type": "ai", "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1"}]}},
        {"type": "tool", "data": {"content": "found it", "type": "tool", "tool_call_id": "c1"}},
    ]
    dumpd = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": {"content": "hi"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "", "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1"}]}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
         "kwargs": {"content": [{"type": "text", "text": "found it"}], "tool_call_id": "c1"}},
    ]
    plain = {"messages": [{"type": "human", "content": "hi"},
                          {"type": "ai", "content": "", "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1"}]},
                          {"type": "tool", "content": "found it", "tool_call_id": "c1", "name": "search"}],
             "step": 3}
    for doc in (to_dict, dumpd, plain):
        data = json.dumps(doc).encode()
        t = tc.load(data)
        assert t.format == "langchain"
        assert [m.role for m in t.messages] == ["user", "assistant", "tool"]
        assert t.messages[2].tool_name == "search" and t.messages[2].content == "found it"
        assert t.messages[1].tool_calls[0].arguments == '{"q":"x"}'
        assert tc.dump(t) == data
        cleared = tc.dump(t, [*t.messages[:2], t.messages[2].with_content("[gone]")])
        assert b"found it" not in cleared and b"[gone]" in cleared


def test_eino_and_openai_are_told_apart() -> None:
    eino = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "content": "r", "tool_call_id": "c", "tool_name": "f"}]
    openai = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
              {"role": "tool", "content": [{"type": "text", "text": "r"}], "tool_call_id": "c"}]
    assert tc.load(text=json.dumps(eino)).format == "eino"
    t = tc.load(text=json.dumps(openai))
    assert t.format == "openai" and t.messages[1].tool_name == "f" and t.messages[1].content == "r"
    assert tc.load(text=json.dumps({"model": "gpt-4o", "messages": openai})).format == "openai"
    jsonl = "\n".join(json.dumps(m) for m in eino) + "\n"
    assert tc.load(text=jsonl).format == "eino"
    assert tc.load(text=json.dumps(eino), format="openai").format == "openai"


def test_fine_tuning_jsonl_is_one_conversation_per_line() -> None:
    lines = [json.dumps({"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": "a"}]})
             for i in range(3)]
    ts = tc.load_all(text="\n".join(lines) + "\n")
    assert [t.id for t in ts] == ["line 1", "line 2", "line 3"]


def test_format_names_and_aliases() -> None:
    names = [f.name for f in tc.list_formats()]
    assert names[:2] == ["claude-code", "codex"] and "langchain" in names and "eino" in names
    path = CORPUS / "eino" / "eino-examples_einoagent_memory_f1d40587.jsonl"
    assert tc.load(path, format="EINO").format == "eino"
    with pytest.raises(TranscriptError, match="unknown format 'nope'; known formats: auto, claude-code"):
        tc.load(path, format="nope")


def test_forcing_a_wrong_format_says_what_is_missing() -> None:
    path = CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"
    with pytest.raises(TranscriptError, match="openai"):
        tc.load(path, format="openai")


def test_dump_refuses_changes_it_cannot_write() -> None:
    t = tc.load(SAMPLES / "coding-agent.openai.json")
    with pytest.raises(TranscriptError, match="cannot add or remove"):
        tc.dump(t, t.messages[:-1])
    i = next(i for i, m in enumerate(t.messages) if m.role == "assistant")
    changed = list(t.messages)
    changed[i] = changed[i].with_content("rewritten")
    assert b"rewritten" in tc.dump(t, changed)  # a chat message has one content field
    moved = list(t.messages)
    moved[i] = tc.Message("user", moved[i].content)
    with pytest.raises(TranscriptError, match="more than its content"):
        tc.dump(t, moved)
    a = tc.load(SAMPLES / "coding-agent.anthropic.json")
    j = next(i for i, m in enumerate(a.messages) if m.role == "assistant")
    changed = list(a.messages)
    changed[j] = changed[j].with_content("rewritten")
    with pytest.raises(TranscriptError, match="only tool results can be rewritten"):
        tc.dump(a, changed)
    with pytest.raises(TranscriptError, match="not read by toolclear.load"):
        tc.dump(tc.Transcript("eino", t.messages), t.messages)


def test_utf16_and_bom_are_written_back_the_same_way() -> None:
    msgs = [{"role": "tool", "content": "résultat", "tool_call_id": "c", "tool_name": "f"}]
    for data in (b"\xef\xbb\xbf" + json.dumps(msgs).encode(), json.dumps(msgs).encode("utf-16")):
        t = tc.load(data)
        assert t.messages[0].content == "résultat"
        assert tc.dump(t) == data
        out = tc.dump(t, [t.messages[0].with_content("x")])
        assert out[:2] == data[:2]
        assert tc.load(out).messages[0].content == "x"


def test_a_forced_format_error_says_one_expectation() -> None:
    path = CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"
    with pytest.raises(tc.TranscriptError) as info:
        tc.load_all(path, format="claude-code")
    message = str(info.value)
    assert message.count("expected") == 1 and "found a list of objects with keys task_id" in message


def _claude_code_drifted(change: str) -> bytes:
    """The real Claude Code 2.1.86 fixture (parallel calls A and B, then C) with one link
    written as other versions and tools write it."""
    lines = [json.loads(x) for x in (DATA / "formats" / "claude-code-2.1.86_session.jsonl").read_text().splitlines()]
    by_result = {b["tool_use_id"]: r for r in lines if r.get("type") == "user"
                 for b in r["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
    if change == "result without uuid":
        del by_result["toolu_A"]["uuid"]  # the parallel result on a side branch
    elif change == "result without parent":
        by_result["toolu_B"]["parentUuid"] = None
    elif change == "last result without parent":
        by_result["toolu_C"]["parentUuid"] = None
    elif change == "result with dangling parent":
        by_result["toolu_B"]["parentUuid"] = "not-in-the-file"
    return "".join(json.dumps(r) + "\n" for r in lines).encode()


@pytest.mark.parametrize("change", ["result without uuid", "result without parent", "last result without parent",
                                    "result with dangling parent"])
def test_claude_code_links_written_differently_keep_every_result(change) -> None:
    """A result line without a uuid still hangs on its parent; a result with no parent (or
    one not in the file) follows the line before it, as a result cannot start a
    conversation. Every result is read, in file order, and written back."""
    data = _claude_code_drifted(change)
    (t,) = tc.load_all(data, name="session.jsonl")
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == ["toolu_A", "toolu_B", "toolu_C"]
    assert [m.role for m in t.messages] == ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    out = tc.dump(t, tc.apply(t.messages, tc.ClearToolResultConfig(0, 0)).messages)
    assert out.count(tc.DEFAULT_PLACEHOLDER.encode()) >= 2


def test_openhands_resolver_output_of_late_2024_pairs_each_observation_with_its_action() -> None:
    """The resolver's output.jsonl of November 2024 (real runs): events without source,
    id or cause, each action's fields at its top. Each observation answers the action
    right before it; the action's arguments are what the agent asked for."""
    runs = tc.load_all(CORPUS / "openhands" / "openhands-resolver_mock_output.jsonl")
    assert [t.id for t in runs] == ["neubig/pr-viewer#5", "neubig/pr-viewer#1"]
    assert [sum(m.role == "tool" for m in t.messages) for t in runs] == [3, 21]
    assert not any(t.warnings for t in runs)
    first = runs[0]
    assert first.messages[0].role == "user" and "MIT license" in first.messages[0].content
    call = first.messages[1].tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("run", {"command": "touch LICENSE"})
    assert first.messages[2].tool_call_id == call.id
    second = runs[1]
    reduced = tc.apply(second.messages, tc.ClearToolResultConfig(500, 500))
    assert len(reduced.cleared_indices) >= 5
    back = tc.load_all(tc.dump(second, reduced.messages), name="output.jsonl")[1]
    assert [m.content for m in back.messages] == [m.content for m in reduced.messages]


@pytest.mark.parametrize("path", [p for p in CORPUS_FILES if p.suffix == ".jsonl"], ids=corpus_id)
def test_json_lines_read_the_same_with_orjson_and_with_the_stdlib(path, monkeypatch) -> None:
    """orjson reads JSON Lines where installed (shared key strings, faster); a line it
    refuses is read by the stdlib. Without orjson every file reads the same."""
    from toolclear.formats import _doc

    assert _doc._fast_loads is not None  # the test environment has it: both roads are taken here
    fast = tc.load_all(path)
    monkeypatch.setattr(_doc, "_fast_loads", None)
    slow = tc.load_all(path)
    assert [(t.id, t.messages, t.warnings, t.notes) for t in fast] == [(t.id, t.messages, t.warnings, t.notes)
                                                                     for t in slow]


def test_lines_orjson_refuses_are_read_by_the_stdlib(monkeypatch) -> None:
    """NaN, a lone surrogate escape, an integer past 64 bits: read as the stdlib reads
    them; bad JSON refused with the stdlib's own words, with orjson or without."""
    from toolclear.formats import _doc

    lines = ['{"role": "user", "content": "a", "x": NaN}', '{"role": "tool", "content": "\\ud800", "tool_call_id": "1"}',
             '{"role": "assistant", "content": "b", "n": 123456789012345678901234567890}',
             '{"role": "user", "content": "c"}']
    t = tc.load(("\n".join(lines) + "\n").encode(), name="t.jsonl")
    assert [m.content for m in t.messages] == ["a", "\ud800", "b", "c"]
    bad = ("\n".join(lines[:3] + ['{"role": oops}'] + lines[3:]) + "\n").encode()
    errors = []
    for fast in (_doc._fast_loads, None):
        monkeypatch.setattr(_doc, "_fast_loads", fast)
        with pytest.raises(TranscriptError) as caught:
            tc.load(bad, name="t.jsonl")
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "line 4: column 10" in errors[0]


def _plain_tool_output(value) -> int:
    """The misread check's count written out plainly (the walk it replaced)."""
    from toolclear.formats import _TOOL_KEYS, _TOOL_ROLES, _TOOL_TYPES, _text_bytes

    total, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if (node.get("type") in _TOOL_TYPES if isinstance(node.get("type"), str) else False) or \
                    (node.get("kind") in _TOOL_TYPES if isinstance(node.get("kind"), str) else False) or \
                    (node.get("role") in _TOOL_ROLES if isinstance(node.get("role"), str) else False):
                total += _text_bytes({k: v for k, v in node.items() if k not in ("type", "kind", "role")})
                continue
            for key in _TOOL_KEYS:
                if isinstance(node.get(key), (str, dict, list)):
                    total += _text_bytes(node[key])
            stack.extend(v for k, v in node.items() if k not in _TOOL_KEYS and k != "toolUseResult")
        elif isinstance(node, list):
            stack.extend(node)
    return total


FORMAT_FILES = sorted(p for p in (DATA / "formats").iterdir() if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("path", CORPUS_FILES + FORMAT_FILES, ids=corpus_id)
def test_the_misread_checks_walk_counts_as_the_plain_walk(path) -> None:
    """The walk that says a file may be misread (a third of reading a log, now about half
    as long) counts what the plain walk counts, on every real file."""
    from toolclear.formats import _looks_like_tool_output
    from toolclear.formats._doc import parse

    doc = parse(path.read_bytes())
    roots = [r for _, r in doc.records()] if doc.kind == "jsonl" else [doc.value]
    assert _looks_like_tool_output(doc) == sum(_plain_tool_output(r) for r in roots)


@pytest.mark.parametrize("path", CORPUS_FILES + FORMAT_FILES, ids=corpus_id)
def test_the_misread_walk_stops_early_only_where_the_whole_walk_agrees(path) -> None:
    """Given ``enough``, the walk may stop on a bound: whenever it does (a result at most
    ``enough``), the whole walk's count is at most that bound, and above ``enough`` both
    say the same. Checked on every real file at every threshold the decision turns on."""
    from toolclear.formats import _looks_like_tool_output
    from toolclear.formats._doc import parse

    doc = parse(path.read_bytes())
    whole = _looks_like_tool_output(doc)
    if whole is None:
        return
    stopped = 0
    for enough in sorted({0, 1, 1_000, whole // 2, max(whole - 1, 0), whole, whole + 1, whole * 2,
                          len(doc.data), len(doc.data) * 4}):
        early = _looks_like_tool_output(doc, enough)
        assert early is not None
        assert (early > enough) == (whole > enough), enough
        assert whole <= early
        stopped += early != whole
    if doc.kind == "jsonl" and len(list(doc.records())) > 3 and whole:
        assert stopped, "the walk never stopped early"


def test_nan_inside_a_string_is_no_number_where_orjson_reads_the_line() -> None:
    """A log whose tool output *mentions* NaN writes no NaN as a number: orjson refuses a
    non-finite number, so only the lines it refused are looked at (the scan of the whole
    file was a tenth of reading a corpus); a real one in a usage count is still said."""
    from toolclear.formats import _doc

    if _doc._fast_loads is None:
        pytest.fail("orjson is in the test requirements")
    said = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": 'pandas printed {"x": NaN, "y": [Infinity]}'},
        {"role": "assistant", "content": "done"}]
    lines = "\n".join(json.dumps(m) for m in said)
    t = tc.load(lines.encode(), name="t.jsonl")
    assert "NaN" in t.messages[1].content
    assert not any("where a number belongs" in n for n in t.notes)
    real = lines.replace('"content": "done"', '"content": "done", "usage": {"prompt_tokens": NaN}')
    t = tc.load(real.encode(), name="t.jsonl")
    assert any("writes NaN where a number belongs" in n for n in t.notes)


def test_jsonl_records_are_let_go_after_reading_and_parsed_again_for_writing(tmp_path: Path) -> None:
    """A loaded JSON Lines log keeps its bytes and line offsets, not every parsed record
    (the largest part of a log of many small messages); a record asked for afterwards is
    the line parsed again, and writing back still changes only the edited line."""
    from toolclear.formats._doc import _LineRecords

    lines = [json.dumps({"role": "user", "content": "go"}),
             json.dumps({"role": "assistant", "content": "", "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}),
             "",
             json.dumps({"role": "tool", "tool_call_id": "c1", "content": "x" * 50, "extra": {"k": [1, 2]}})]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t = tc.load(path)
    doc = t._binding.doc
    assert isinstance(doc.value, _LineRecords)
    assert list(doc.value) == [json.loads(x) if x else None for x in lines] + [None]
    assert doc.value[-2] == json.loads(lines[3]) and doc.value[1:2] == [json.loads(lines[1])]
    out = tc.dump(t, [m.replaced("[gone]") if m.role == "tool" else m for m in t.messages]).decode().split("\n")
    assert out[:3] == lines[:3] and json.loads(out[3])["content"] == "[gone]" and json.loads(out[3])["extra"] == {"k": [1, 2]}


@pytest.mark.parametrize("fmt", ["openai", "eino"])
def test_a_loaded_log_holds_no_short_string_of_the_parse(tmp_path: Path, fmt: str) -> None:
    """Every short string a message or call holds is its own copy, made after the parse:
    one kept from the parsed records kept their memory pages (a log of tiny messages
    held 194 MB after reading, 120 MB without them). Checked by where each was made."""
    import tracemalloc

    lines = []
    for i in range(50):
        lines += [{"role": "assistant", "content": "k", "tool_calls": [{"id": f"{i}", "type": "function",
                                                                    "function": {"name": "ls", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": f"{i}", "content": "ok", **({"tool_name": "ls"} if fmt == "eino" else {})},
                  {"role": "user", "content": "go", "name": "me"}]
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    tracemalloc.start(1)
    try:
        t = tc.load(path, format=fmt)
        strings = [(m, k, getattr(m, k)) for m in t.messages for k in ("role", "content", "tool_call_id", "tool_name", "name")]
        strings += [(c, k, getattr(c, k)) for m in t.messages for c in m.tool_calls for k in ("id", "name", "arguments", "type")]
        made = [(o, k, tracemalloc.get_object_traceback(s)) for o, k, s in strings if s]
    finally:
        tracemalloc.stop()
    assert len(made) > 500
    from_parse = [(type(o).__name__, k) for o, k, tb in made if tb is not None and tb[0].filename.endswith("_doc.py")]
    assert not from_parse, from_parse[:5]


def test_origins_say_where_each_message_sits_as_the_reader_found_it() -> None:
    """Origins are kept as line numbers and shared path shapes and rendered when shown:
    the text is the same as ``where`` renders, a copy travels to a worker process."""
    import pickle

    from toolclear.formats._base import Origins, where
    from toolclear.formats._doc import parse

    lines = b'{"role": "user", "content": "go"}\n{"role": "assistant", "content": "k"}\n'
    t = tc.load(lines, format="openai")
    assert list(t.origins) == ["line 1: $", "line 2: $"] and t.origins[-1] == "line 2: $"
    doc = parse(lines)
    o = Origins(True)
    for path in [(4, "message", "content", 0), (), (5, "message", "content", 0), (7,)]:
        o.append(path)
    assert list(o) == [where(doc, (4, "message", "content", 0)), "", where(doc, (5, "message", "content", 0)),
                       "line 8: $"]
    assert o[1:3] == ["", "line 6: $.message.content[0]"] and (o.line(0), o.line(1)) == (4, None)
    assert list(pickle.loads(pickle.dumps(o))) == list(o)
    whole = tc.load(b'{"messages": [{"role": "user", "content": "go"}]}', format="openai")
    assert list(whole.origins) == ["$.messages[0]"]


def test_slots_give_back_every_path_they_were_given() -> None:
    """Write-back places are kept as a line and a shared tail per shape where every path
    of a message starts at the same line or item, else whole: each reads back as given,
    through slicing, replacing, deleting, copying and pickling."""
    import pickle

    from toolclear.formats._base import InJson, Slots, Wrap

    given = [((3, "content"),), (), ((4, "message", "content", 0), (4, "message", "content", 1)),
             (("messages", 2, "content"),), ((5, "a"), (6, "b")), ((7, InJson(), "x", Wrap("text")),), ((0,),),
             ((True, "content"),)]
    s = Slots()
    for paths in given:
        s.append(paths)
    assert list(s) == given and s[2:4] == given[2:4] and len(s) == len(given)
    s[1] = ((9, "content"),)
    assert s[1] == ((9, "content"),) and s[0] == given[0]
    copy = s.copy()
    del s[3:]
    assert list(s) == [given[0], ((9, "content"),), given[2]] and len(copy) == len(given)
    assert list(pickle.loads(pickle.dumps(copy))) == list(copy)
    assert s._tails[0] is copy._tails[0] and s._heads[0] == 3  # a line kept as a number, its tail shared
