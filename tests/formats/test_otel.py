"""Agent runs kept as OpenTelemetry traces: OTLP JSON recorded by the real
instrumentations (pydantic-ai's, OpenInference's OpenAI, Azure AI Inference's) around a
local fake OpenAI backend, read back into the conversation the model was sent."""

from __future__ import annotations

import base64
import json
import sys

import pytest

import toolclear as tc

from ..conftest import DATA

FORMATS = DATA / "formats"
sys.path.insert(0, str(FORMATS))
import make_otel  # noqa: E402

sys.path.remove(str(FORMATS))

# otel_pydantic-ai-1.0.18-events.json: pydantic-ai-slim 1.0.18 with InstrumentationSettings(version=1), the
# messages as a JSON "events" span attribute (recorded once: pydantic-ai 2 dropped version 1; see make_otel.py)
FILES = ("otel_pydantic-ai.json", "otel_pydantic-ai-1.0.18-events.json", "otel_openinference.jsonl",
         "otel_azure-ai-inference.json")
EXPECTED = [
    ("system", make_otel.SYSTEM, (), ""),
    ("user", make_otel.QUESTION, (), ""),
    ("assistant", "", ("list_dir",), ""),
    ("tool", make_otel.LS, (), "list_dir"),
    ("assistant", "Reading setup.py.", ("read_file",), ""),
    ("tool", make_otel.CAT, (), "read_file"),
    ("assistant", "A Python package with a src/ layout.", (), ""),
]


def shape(t: tc.Transcript) -> list[tuple[str, str, tuple[str, ...], str]]:
    return [(m.role, m.content, tuple(c.name for c in m.tool_calls), m.tool_name) for m in t.messages]


def check_run(t: tc.Transcript) -> None:
    assert t.format == "otel"
    assert shape(t) == EXPECTED
    calls = {c.id for m in t.messages for c in m.tool_calls}
    assert {m.tool_call_id for m in t.messages if m.role == "tool"} == calls == {"call_ls", "call_cat"}
    replies = [m for m in t.messages if m.role == "assistant"]
    assert all(m.usage is not None and m.usage.model == "gpt-4o-2024-08-06" for m in replies)
    assert [m.usage.output_tokens for m in replies if m.usage] == [12, 12, 12]
    prompts = [m.usage.prompt_tokens for m in replies if m.usage]
    assert prompts == sorted(prompts) and prompts[0] > 0  # each call's prompt holds the one before
    assert not t.warnings


@pytest.mark.parametrize("name", FILES)
def test_a_recorded_trace_reads_as_the_conversation_sent(name) -> None:
    runs = tc.load_all(FORMATS / name)
    assert len(runs) == 1
    check_run(runs[0])


@pytest.mark.parametrize("name", FILES)
def test_cleared_and_written_as_an_openai_transcript(name) -> None:
    path = FORMATS / name
    t = tc.load(path)
    reduced = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0, "[gone]"))
    assert reduced.cleared_indices == (3, 5)
    out = tc.dump(t, reduced.messages)
    assert out.endswith(b"\n") and (out.count(b"\n") == 1) == name.endswith(".jsonl")  # the file's own kind
    again = tc.load(out, name="export" + path.suffix)
    assert again.format in ("openai", "eino")
    assert [m.content for m in again.messages] == [m.content for m in reduced.messages]
    assert make_otel.LS not in out.decode() and "def f1(x)" not in out.decode()
    body = json.loads(out.splitlines()[0]) if name.endswith(".jsonl") else json.loads(out)
    assert body["model"] == "gpt-4o-2024-08-06" and body["messages"][3] == {
        "role": "tool", "tool_call_id": "call_ls", "content": "[gone]"}
    untouched = tc.load(tc.dump(t), name="export" + path.suffix)
    assert [m.content for m in untouched.messages] == [m.content for m in t.messages]


def test_every_instrumentation_recorded_anew_reads_the_same() -> None:
    """The instrumentations pinned for the tests, run now: what they write today reads
    as the committed files do (ids and times differ)."""
    for name, text in make_otel.files().items():
        runs = tc.load_all(text.encode(), name=name)
        assert len(runs) == 1, name
        check_run(runs[0])


@pytest.mark.parametrize("version", [2, 3, 4, 5, 6])
def test_every_pydantic_ai_instrumentation_version_reads_the_same(version) -> None:
    """pydantic-ai's InstrumentationSettings(version=N), each data format it writes today."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # versions 2-4 are deprecated
        spans = make_otel.pydantic_ai_run(version=version)
    check_run(tc.load(json.dumps(make_otel.otlp_json(spans)).encode(), name="trace.json"))


def test_pydantic_ai_events_attribute_without_messages_is_not_a_conversation() -> None:
    """An 'events' attribute that holds no gen_ai message event is not read as one."""
    data = json.loads((FORMATS / "otel_pydantic-ai-1.0.18-events.json").read_text())
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for a in span.get("attributes", ()):
            if a["key"] == "events":
                a["value"] = {"stringValue": json.dumps([{"event.name": "something.else", "content": "x"}])}
    with pytest.raises(tc.TranscriptError, match="no model call's messages"):
        tc.load(json.dumps(data).encode(), name="trace.json")


def test_protobuf_json_ids_and_a_stray_line_are_named() -> None:
    """protobuf's own JSON writes ids in base64 (OTLP JSON: hex); a Collector file with a
    line that is no export names that line."""
    lines = (FORMATS / "otel_openinference.jsonl").read_text().splitlines()
    recoded = []
    for line in lines:
        request = json.loads(line)
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    span["traceId"] = base64.b64encode(bytes.fromhex(span["traceId"])).decode()
        recoded.append(json.dumps(request))
    text = "\n".join(recoded[:2] + ['{"resourceLogs": []}'] + recoded[2:]) + "\n"
    t = tc.load(text.encode(), name="traces.jsonl")
    assert shape(t) == EXPECTED
    assert any(w.startswith("line 3:") and "resourceSpans" in w for w in t.warnings)
    assert len(t.id) == 32 and all(c in "0123456789abcdef" for c in t.id)


def test_two_agents_in_one_trace_are_two_conversations_and_a_trace_without_messages_is_refused() -> None:
    data = json.loads((FORMATS / "otel_pydantic-ai.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chats = [s for s in spans if s["name"].startswith("chat")]
    other = json.loads(json.dumps(chats[0]))  # a second agent's first call in the same trace
    for kv in other["attributes"]:
        if kv["key"] == "gen_ai.input.messages":
            kv["value"]["stringValue"] = json.dumps([{"role": "user", "parts": [{"type": "text",
                                                                                "content": "summarise it"}]}])
    other["startTimeUnixNano"] = str(int(chats[-1]["startTimeUnixNano"]) + 1)
    spans.append(other)
    runs = tc.load_all(json.dumps(data).encode(), name="two.json")
    assert [len(r.messages) for r in runs] == [7, 3]  # the second: its instructions, question and reply
    assert runs[0].id.endswith("/1") and runs[1].id.endswith("/2")
    assert [m.role for m in runs[1].messages] == ["system", "user", "assistant"]
    assert runs[1].messages[1].content == "summarise it"
    for s in spans:  # content capture off: no messages on any span
        s["attributes"] = [kv for kv in s["attributes"] if not kv["key"].startswith(("gen_ai.input", "gen_ai.output",
                                                                                        "gen_ai.system_instr"))]
    with pytest.raises(tc.TranscriptError, match="no model call.s messages in this OTLP export"):
        tc.load(json.dumps(data).encode(), name="bare.json")


def test_listed_with_its_export_explained() -> None:
    info = next(f for f in tc.list_formats() if f.name == "otel")
    assert "not rewritten in place" in info.export_changes and "OTLP JSON" in info.label
    assert info.writes_as == "openai" and next(f for f in tc.list_formats() if f.name == "codex").writes_as == "codex"


def test_a_run_whose_agent_cleared_its_own_history_stays_one_conversation() -> None:
    """An agent that already clears (or compacts) sends a later call a history that is
    not the earlier calls' input plus output: it is still the same run, and the
    conversation is what its last call was sent."""
    data = json.loads((FORMATS / "otel_pydantic-ai.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    last = max((s for s in spans if s["name"].startswith("chat")), key=lambda s: int(s["startTimeUnixNano"]))
    for kv in last["attributes"]:
        if kv["key"] == "gen_ai.input.messages":
            sent = json.loads(kv["value"]["stringValue"])
            sent[2]["parts"][0]["result"] = "[cleared]"
            kv["value"]["stringValue"] = json.dumps(sent)
    (t,) = tc.load_all(json.dumps(data).encode(), name="cleared.json")
    assert [m.content for m in t.messages if m.role == "tool"] == ["[cleared]", make_otel.CAT]
    assert any("history the agent had changed" in n for n in t.notes)


def test_the_cli_reduces_a_trace_into_an_openai_transcript_and_says_so(tmp_path) -> None:
    from ..cli.test_cli import run

    out = tmp_path / "reduced.jsonl"
    code, _, err = run("reduce", str(FORMATS / "otel_openinference.jsonl"), "--threshold", "0", "--keep", "0",
                       "-o", str(out))
    assert code == 0 and "2 tool result(s) cleared" in err and "in openai format (otel files are not rewritten" in err
    back = tc.load(out)
    assert back.format in ("openai", "eino") and [m.content for m in back.messages if m.role == "tool"] == [
        "[Old tool result content cleared]"] * 2
    code, listing, _ = run("formats")
    assert code == 0 and b"written back as: openai" in listing


def _trace(spans: int, separate: bool) -> bytes:
    """OTLP JSON of `spans` chat spans: one agent conversation per span (a new user
    request each time), in one trace or each in its own."""
    out = []
    for k in range(spans):
        inputs = [{"role": "system", "parts": [{"type": "text", "content": "You are helpful."}]},
                  {"role": "user", "parts": [{"type": "text", "content": f"task {k}"}]}]
        outputs = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{k}", "name": "ls",
                                                    "arguments": {}}]}]
        out.append({"traceId": f"{(k if separate else 1):032x}", "spanId": f"{k + 1:016x}", "name": "chat m",
                    "startTimeUnixNano": str(1_700_000_000_000_000_000 + k), "attributes": [
                        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}},
                        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(outputs)}}]})
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": out}]}]}).encode()


@pytest.mark.parametrize("separate", [False, True], ids=["one trace", "a trace each"])
def test_reading_chat_spans_is_linear(separate, monkeypatch) -> None:
    """Each message's shape is worked out once, whatever the number of conversations (it
    was once per call and conversation: 3,000 spans took 17x the time of 750). The time
    itself is a row of benchmarks/run.py, not a test."""
    from toolclear.formats import otel

    seen = {"shapes": 0}
    real = otel._shape

    def counted(m):
        seen["shapes"] += 1
        return real(m)

    monkeypatch.setattr(otel, "_shape", counted)
    for n in (750, 3000):
        seen["shapes"] = 0
        runs = tc.load_all(_trace(n, separate), "otel")
        assert len(runs) == n  # every span a conversation of its own
        assert seen["shapes"] <= 3 * n  # two inputs and one output per span, once each


@pytest.mark.parametrize("name", ["otel_azure-ai-inference.json", "otel_pydantic-ai-1.0.18-events.json",
                                  "otel_pydantic-ai.json", "big"])
def test_the_rebuilt_body_is_written_as_the_stdlib_writes_it(name, monkeypatch) -> None:
    """A trace is rebuilt into an OpenAI request body and written out (what exports
    start from): orjson writes it, a twentieth of the stdlib's time. The text is the
    stdlib's, byte for byte, on the real traces and a 3,000-span one; a trace with a
    NaN in it is written by the stdlib (orjson would write null)."""
    from toolclear.formats import otel

    data = _trace(3000, False) if name == "big" else (DATA / "formats" / name).read_bytes()
    fast = tc.load_all(data, "otel")
    monkeypatch.setattr(otel, "_indented", lambda value, doc: None)
    slow = tc.load_all(data, "otel")
    assert [t._binding.doc.data for t in fast] == [t._binding.doc.data for t in slow]
    assert [t.messages for t in fast] == [t.messages for t in slow]


def test_a_trace_with_a_nan_is_written_by_the_stdlib() -> None:
    from toolclear.formats import otel
    from toolclear.formats._doc import parse

    assert otel._indented({"x": 1e-5, "y": [1, "é"]}, parse(b'{"a": 1}')) == '{\n  "x": 0.00001,\n  "y": [\n    1,\n    "\xe9"\n  ]\n}\n'
    assert otel._indented({"x": float("nan")}, parse(b'{"a": NaN}')) is None
    assert otel._indented({"x": 2**70}, parse(b'{"a": 1}')) is None
    assert otel._indented({1: 2}, parse(b'{"a": 1}')) is None
