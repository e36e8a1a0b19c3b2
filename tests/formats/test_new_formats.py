"""The formats added for issue 9: detection, results named and paired, lossless
write-back, clear-and-reload, and the copies a tool keeps cleared too."""

from __future__ import annotations

import json
import sys

import pytest

import toolclear as tc

from ..conftest import DATA

FORMATS = DATA / "formats"
# file -> (format, tool results as (tool name, first characters of the text))
EXPECTED = {
    "gemini-cli_session.json": ("gemini-cli", [("list_directory", "README.md"), ("read_file", "   1  def f1")]),
    "gemini-cli_session.jsonl": ("gemini-cli", [("list_directory", "README.md"), ("read_file", "   1  def f1")]),
    "openai-responses_request.json": ("openai-responses", [("shell", "README.md"), ("shell", "   1  def f1"),
                                                           ("apply_patch", "Done!")]),
    "openai-agents_run-state.json": ("openai-responses", [("shell", "README.md")]),
    "gemini-api_request.json": ("gemini-api", [("list_directory", "README.md"), ("read_file", "   1  def f1"),
                                               ("list_directory", '{"files":')]),
    "google-adk_session.json": ("google-adk", [("list_directory", "README.md")]),
    "smolagents_steps.json": ("smolagents", [("list_dir", "README.md"), ("read_file", "   1  def f1")]),
    "smolagents_messages.json": ("smolagents", [("list_dir", "Call id: call_0"), ("read_file", "Observation:")]),
    "openhands-v1_events.json": ("openhands", [("terminal", "README.md"), ("file_editor", "   1  def f1")]),
    "openhands-v1_events.jsonl": ("openhands", [("terminal", "README.md"), ("file_editor", "   1  def f1")]),
    "claude-code-2.1.86_session.jsonl": ("claude-code", [("Read", "   1  def f1"), ("Bash", "README.md"),
                                                         ("Grep", "setup.py:1:")]),
    "codex-0.146_rollout.jsonl": ("codex", [("shell_command", '{"output": "README.md'), ("apply_patch", '{"output"'),
                                            ("view_image", "diagram.png")]),
    "openhands-2024_eval-pairs.jsonl": ("openhands", [("run", "README.md"), ("read", "   1  def f1")]),
}
NAMES = sorted(EXPECTED)


def test_files_match_their_generator() -> None:
    sys.path.insert(0, str(FORMATS))
    try:
        import make_formats
    finally:
        sys.path.remove(str(FORMATS))
    assert set(make_formats.files()) == set(EXPECTED) | {"openhands-2024_resolver-output.jsonl"}
    for name, text in make_formats.files().items():
        assert (FORMATS / name).read_text() == text, name


def test_every_new_format_is_listed() -> None:
    names = {f.name for f in tc.list_formats()}
    assert {"gemini-cli", "openai-responses", "gemini-api", "smolagents", "google-adk"} <= names


@pytest.mark.parametrize("name", NAMES)
def test_detected_results_named_and_paired(name) -> None:
    fmt, results = EXPECTED[name]
    path = FORMATS / name
    t = tc.load(path)
    assert t.format == fmt
    tools = [m for m in t.messages if m.role == "tool"]
    assert [(m.tool_name, m.content[: len(start)]) for m, (_, start) in zip(tools, results)] == results
    assert len(tools) == len(results)
    seen: set[str] = set()
    for m in t.messages:  # every result answers an earlier call
        seen.update(c.id for c in m.tool_calls)
        if m.role == "tool":
            assert m.tool_call_id in seen
    assert not [w for w in t.warnings if "no result" in w or "tool output" in w]
    assert tc.load(path, format=fmt).messages == t.messages  # forcing the format reads the same
    assert tc.dump(t) == path.read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_clear_and_reload_changes_only_the_results(name) -> None:
    path = FORMATS / name
    data = path.read_bytes()
    t = tc.load(path)
    reduced = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    assert reduced.cleared_indices
    out = tc.dump(t, reduced.messages)
    again = tc.load(out)
    assert again.format == t.format
    assert [m.content for m in again.messages] == [m.content for m in reduced.messages]
    for i in reduced.cleared_indices:  # no copy of a cleared result is left anywhere in the file
        original = t.messages[i].content
        if len(original) > 20:
            assert original.split("\n")[0] not in out.decode() or original.split("\n")[0] in data.decode().replace(
                original, "")
    # and the file is still what the tool reads: same JSON shape, every field its type
    _same_shape(_parse(data), _parse(out))


def _parse(data: bytes):
    text = data.decode()
    try:
        return json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _same_shape(a, b) -> None:
    if isinstance(a, dict) and b == {"output": "[gone]"}:
        return  # a function response without a text field is cleared as {"output": text}: still an object
    if isinstance(a, list) and b == "[gone]" and any(isinstance(p, dict) and p.get("type") == "input_image" for p in a):
        return  # an output with an image is cleared whole to a string output (what the API also takes)
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same_shape(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_shape(x, y)


def test_gemini_cli_jsonl_follows_rewrites_and_rewinds_and_clears_every_copy() -> None:
    path = FORMATS / "gemini-cli_session.jsonl"
    t = tc.load(path)
    assert "oops, wrong prompt" not in [m.content for m in t.messages]  # rewound away
    reduced = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    out = tc.dump(t, reduced.messages).decode()
    assert "README.md" not in out  # both the executing and the finished copy of the call were cleared
    lines = out.splitlines()
    assert len(lines) == len(path.read_text().splitlines())


def test_recorded_usage_of_the_new_formats() -> None:
    cli = [m.usage for m in tc.load(FORMATS / "gemini-cli_session.json").messages if m.usage]
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) for u in cli] == [
        (2123, 6000, 41, 88), (1850, 8100, 17, 0)]
    adk = [m.usage for m in tc.load(FORMATS / "google-adk_session.json").messages if m.usage]
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in adk] == [(900, 0, 12), (150, 800, 6)]
    smol = [m.usage for m in tc.load(FORMATS / "smolagents_steps.json").messages if m.usage]
    assert [u.input_tokens for u in smol] == [1200, 1500, 1700]


def test_gemini_api_in_a_cassette_and_pairing_without_ids(tmp_path) -> None:
    body = json.loads((FORMATS / "gemini-api_request.json").read_text())
    cassette = ("interactions:\n- request:\n    parsed_body: " + json.dumps(body) + "\n  response:\n    status: 200\n")
    ts = tc.load_all(cassette.encode())
    assert [t.format for t in ts] == ["gemini-api"] and ts[0].container.startswith("API cassette")
    ids = [m.tool_call_id for m in ts[0].messages if m.role == "tool"]
    calls = [c.id for m in ts[0].messages for c in m.tool_calls]
    assert ids == calls and len(set(ids)) == 3  # the second list_directory call is answered by the later response


def test_smolagents_structured_observations_are_counted_and_clear() -> None:
    import json as _json

    import toolclear as tc

    steps = [{"system_prompt": "sys"}, {"task": "do it"},
             {"step_number": 1, "model_output": "calling", "observations": {"hits": ["a" * 300, "b" * 300]},
              "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": {}}}]},
             {"step_number": 2, "model_output": "final", "tool_calls": [], "observations": None}]
    t = tc.load(_json.dumps(steps).encode(), "smolagents")
    (tool,) = [m for m in t.messages if m.role == "tool"]
    assert _json.loads(tool.content) == steps[2]["observations"] and tool.tool_call_id == "c1"
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    assert _json.loads(tc.dump(t, r.messages))[2]["observations"] == tc.DEFAULT_PLACEHOLDER


def test_a_responses_output_with_an_image_clears_whole() -> None:
    """An image part beside the text is counted; once cleared, nothing of it stays."""
    import json as _json

    import toolclear as tc

    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}]},
             {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1", "output": [
                 {"type": "input_text", "text": "here"},
                 {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 500}]},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]
    t = tc.load(_json.dumps(items).encode(), "openai-responses")
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    out = tc.dump(t, r.messages)
    assert _json.loads(out)[2]["output"] == tc.DEFAULT_PLACEHOLDER and b"base64" not in out


def test_openhands_resolver_output_of_2024_one_conversation_per_issue() -> None:
    """The resolver's output.jsonl: one issue per line, events paired by ``cause`` (no
    tool-call ids); an issue whose run failed early has an empty history and is named."""
    path = FORMATS / "openhands-2024_resolver-output.jsonl"
    data = path.read_bytes()
    runs = tc.load_all(path)
    assert [(t.format, t.id) for t in runs] == [("openhands", "acme/widgets#7"), ("openhands", "acme/widgets#8")]
    first, empty = runs
    tools = [m for m in first.messages if m.role == "tool"]
    assert [(m.tool_name, m.content[:9]) for m in tools] == [("run", "README.md"), ("read", "   1  def")]
    calls = {c.id: c for m in first.messages for c in m.tool_calls}
    assert all(calls[m.tool_call_id].name == m.tool_name for m in tools)
    assert first.messages[0].role == "user" and first.messages[0].content.startswith("Please fix issue #7")
    assert not empty.messages and any("no message" in w for w in empty.warnings)
    assert tc.dump_all([(t, t.messages) for t in runs]) == data
    reduced = tc.reduce_by_tokens(first.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    out = tc.dump_all([(first, reduced.messages), (empty, empty.messages)])
    again = tc.load_all(out, name=path.name)
    assert [m.content for m in again[0].messages] == [m.content for m in reduced.messages]
    _same_shape(_parse(data), _parse(out))
    assert CAT_LINE not in out.decode() and LS_LINE not in out.decode()


CAT_LINE, LS_LINE = "   1  def f1(x):", "README.md\\nsetup.py"


def test_newer_claude_code_keeps_a_result_linked_through_an_attachment() -> None:
    """Claude Code 2.1.8x links a hook's attachment line between a parallel call and its
    result: the result hangs off a side branch through a line that is not a message."""
    t = tc.load(FORMATS / "claude-code-2.1.86_session.jsonl")
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == ["toolu_A", "toolu_B", "toolu_C"]
    assert t.messages[-1].content == "A Python package."


def test_codex_0_146_names_the_items_it_does_not_count_and_its_own_session() -> None:
    t = tc.load(FORMATS / "codex-0.146_rollout.jsonl")
    assert t.id == "019b0c3e-0000-7000-8000-00000000a146"  # the first session_meta: a fork repeats its parent's
    note = next(n for n in t.notes if "not counted (kept" in n)
    for kind in ("tool_search_call (1)", "tool_search_output (1)", "ghost_snapshot (1)", "world_state (1)"):
        assert kind in note
    image = next(m for m in t.messages if m.tool_name == "view_image")
    assert image.content.startswith("diagram.png (64x64)")
