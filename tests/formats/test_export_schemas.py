"""An export stays valid for the tool that wrote it: each exported file is parsed the
way that tool (or its official SDK) parses it, before and after clearing."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter

import toolclear as tc

from ..conftest import DATA

CLEAR = tc.ClearToolResultConfig(0, 0, "[Old tool result content cleared]")


def _cleared(path) -> tuple[list[tc.Transcript], bytes]:
    ts = tc.load_all(path)
    pairs = [(t, tc.reduce_by_tokens(t.messages, CLEAR).messages) for t in ts]
    assert any(a is not b for t, ms in pairs for a, b in zip(t.messages, ms)), "nothing was cleared"
    return ts, tc.dump_all(pairs)


@pytest.mark.parametrize("path", sorted((DATA / "corpus" / "claude_code").glob("entire-cli*.jsonl")),
                         ids=lambda p: p.name[:40])
def test_claude_code_export_parses_with_claude_code_log(path) -> None:
    """claude-code-log (a Claude Code transcript viewer) reads every exported line into
    the same entry type, with toolUseResult of the same model type as before."""
    from claude_code_log.factories.transcript_factory import create_transcript_entry

    _, out = _cleared(path)
    before = path.read_text().splitlines()
    after = out.decode().splitlines()
    assert len(before) == len(after)
    checked = 0
    for old, new in zip(before, after):
        if old == new:
            continue
        a, b = create_transcript_entry(json.loads(old)), create_transcript_entry(json.loads(new))
        assert type(a) is type(b)
        assert type(getattr(a, "toolUseResult", None)) is type(getattr(b, "toolUseResult", None))
        checked += 1
    assert checked > 5


def test_anthropic_cassette_export_loads_with_vcrpy_and_validates_with_the_sdk() -> None:
    from anthropic.types import MessageParam
    from vcr.serializers import yamlserializer

    path = DATA / "corpus" / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml"
    _, out = _cleared(path)
    cassette = yamlserializer.deserialize(out.decode())
    adapter = TypeAdapter(list[MessageParam])
    bodies = [i["request"]["parsed_body"] for i in cassette["interactions"] if "parsed_body" in i["request"]]
    assert bodies
    for body in bodies:
        adapter.validate_python(body["messages"], strict=False)
    assert "[Old tool result content cleared]" in out.decode()


def test_openai_chat_export_validates_with_the_sdk() -> None:
    from openai.types.chat import ChatCompletionMessageParam

    path = DATA / "corpus" / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"
    _, out = _cleared(path)
    adapter = TypeAdapter(list[ChatCompletionMessageParam])
    for run in json.loads(out)[:40]:
        adapter.validate_python(run["traj"])


def test_responses_export_validates_with_the_sdk() -> None:
    from openai.types.responses import ResponseInputItemParam

    _, out = _cleared(DATA / "formats" / "openai-responses_request.json")
    items = json.loads(out)["input"]
    TypeAdapter(list[ResponseInputItemParam]).validate_python(items)
    assert any(i.get("output") == "[Old tool result content cleared]" for i in items)


@pytest.mark.parametrize("name", ["gemini-api_request.json", "google-adk_session.json"])
def test_gemini_exports_validate_with_google_genai(name) -> None:
    from google.genai import types

    _, out = _cleared(DATA / "formats" / name)
    doc = json.loads(out)
    contents = doc["contents"] if "contents" in doc else [e["content"] for e in doc["events"]]
    parsed = [types.Content.model_validate(c) for c in contents]
    responses = [p.function_response for c in parsed for p in c.parts or () if p.function_response]
    assert responses and all(isinstance(r.response, dict) for r in responses)
