"""Plain vcrpy cassettes (the body kept as the JSON text that was sent), recorded here by
the real vcrpy around the real Anthropic and OpenAI SDKs, against a local fake API
server: read, cleared, written back byte for byte outside the cleared text, and read
again by vcrpy itself."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import toolclear as tc

BIG = "line of a big file\n" * 200


class _Fake(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path.endswith("/messages"):  # Anthropic
            n = len(body["messages"])
            reply = ({"type": "tool_use", "id": f"t{n}", "name": "read_file", "input": {"path": f"f{n}.py"}}
                     if n < 9 else {"type": "text", "text": "done"})
            out = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": body["model"],
                   "content": [reply], "stop_reason": "tool_use" if n < 9 else "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 100 * n, "output_tokens": 10}}
        elif self.path.endswith(":generateContent"):  # Gemini
            n = len(body["contents"])
            part = ({"functionCall": {"name": "read_file", "args": {"path": f"f{n}.py"}}} if n < 7
                    else {"text": "done"})
            out = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 100 * n, "candidatesTokenCount": 10,
                                     "totalTokenCount": 100 * n + 10}, "modelVersion": "gemini-2.5-flash"}
        else:  # OpenAI Chat Completions
            n = len(body["messages"])
            msg: dict = ({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}
                if n < 9 else {"role": "assistant", "content": "done"})
            out = {"id": f"cc{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 100 * n, "completion_tokens": 10, "total_tokens": 100 * n + 10}}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def _record_anthropic(url: str, path: Path) -> None:
    import anthropic
    import vcr

    client = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
    messages: list = [{"role": "user", "content": "read the files"}]
    with vcr.use_cassette(str(path), record_mode="all"):
        while True:
            r = client.messages.create(model="claude-haiku-4-5", max_tokens=100, messages=messages)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in r.content]})
            if r.stop_reason != "tool_use":
                break
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": r.content[0].id,
                                                          "content": BIG}]})


def _record_openai(url: str, path: Path) -> None:
    import openai
    import vcr

    client = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
    messages: list = [{"role": "user", "content": "read the files"}]
    with vcr.use_cassette(str(path), record_mode="all"):
        while True:
            r = client.chat.completions.create(model="gpt-4o", messages=messages)
            m = r.choices[0].message
            messages.append(m.model_dump(exclude_none=True))
            if not m.tool_calls:
                break
            messages.append({"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": BIG})


@pytest.mark.parametrize("record,fmt", [(_record_anthropic, "anthropic"), (_record_openai, "openai")])
def test_a_plain_vcrpy_cassette_is_read_cleared_and_written_back(server, tmp_path, record, fmt) -> None:
    import vcr
    import yaml

    path = tmp_path / "cassette.yaml"
    record(server, path)
    raw = yaml.safe_load(path.read_text())
    assert isinstance(raw["interactions"][0]["request"]["body"], str)  # vcrpy's own form, no parsed_body
    runs = tc.load_all(path)
    assert runs[0].format == fmt and len(runs) == 5
    last = runs[-1]
    assert sum(m.role == "tool" for m in last.messages) == 4
    done = tc.apply(last.messages, tc.ClearToolResultConfig(0, 0))
    assert len(done.cleared_indices) >= 3
    out = tc.dump(last, done.messages)
    back = yaml.safe_load(out)
    for k, (a, b) in enumerate(zip(raw["interactions"], back["interactions"])):
        if k != 4:
            assert a == b  # the other requests untouched
    sent_before = json.loads(raw["interactions"][4]["request"]["body"])
    sent_after = json.loads(back["interactions"][4]["request"]["body"])
    texts = json.dumps(sent_after)
    assert texts.count(tc.DEFAULT_PLACEHOLDER) == len(done.cleared_indices)
    # the body is the same text the SDK sent, but for the cleared results
    esc = json.dumps(BIG)[1:-1]
    before, after = raw["interactions"][4]["request"]["body"], back["interactions"][4]["request"]["body"]
    assert after.replace(json.dumps(tc.DEFAULT_PLACEHOLDER)[1:-1], "§").replace(esc, "§") == before.replace(esc, "§")
    assert sent_before != sent_after
    reread = tc.load_all(out, name="cassette.yaml")[-1]
    assert [m.content for m in reread.messages] == [m.content for m in done.messages]
    # vcrpy itself still reads the rewritten cassette
    (tmp_path / "out.yaml").write_bytes(out)
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serializers import yamlserializer

    requests, responses = FilesystemPersister.load_cassette(str(tmp_path / "out.yaml"), yamlserializer)
    assert len(requests) == 5 and len(responses) == 5
    _ = vcr


def _mixed_cassette() -> bytes:
    import yaml

    gem = [{"role": "user", "parts": [{"text": "weather?"}]},
           {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}]},
           {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"output": "sunny " * 80}}}]}]
    oai = [{"role": "user", "content": "time?"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": "noon " * 80}]

    def inter(uri: str, body: dict) -> dict:
        return {"request": {"method": "POST", "uri": uri, "headers": {}, "body": json.dumps(body)},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}}

    gem_uri = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    oai_uri = "https://api.openai.com/v1/chat/completions"
    cas = {"interactions": [inter(gem_uri, {"contents": gem[:1]}), inter(gem_uri, {"contents": gem}),
                            inter(oai_uri, {"model": "gpt-4o", "messages": oai[:1]}),
                            inter(oai_uri, {"model": "gpt-4o", "messages": oai})], "version": 1}
    return yaml.safe_dump(cas).encode()


def test_a_cassette_mixing_providers_reads_each_request_by_its_own_api() -> None:
    runs = tc.load_all(_mixed_cassette(), name="mixed.yaml")
    assert [(t.id, t.format) for t in runs] == [("request 0", "gemini-api"), ("request 1", "gemini-api"),
                                                 ("request 2", "openai"), ("request 3", "openai")]
    assert [m.content for m in runs[1].messages if m.role == "tool"] == ["sunny " * 80]
    assert [m.content for m in runs[3].messages if m.role == "tool"] == ["noon " * 80]
    # both written back into the one file
    pairs = [(t, tc.apply(t.messages, tc.ClearToolResultConfig(0, 0)).messages) for t in runs]
    back = tc.load_all(tc.dump_all(pairs), name="mixed.yaml")
    assert [(t.id, t.format) for t in back] == [(t.id, t.format) for t in runs]


def test_a_named_format_says_which_requests_of_other_apis_it_did_not_read() -> None:
    (first, second) = tc.load_all(_mixed_cassette(), "openai", name="mixed.yaml")
    assert first.id == "request 2" and any("2 request(s)" in w and "gemini-api" in w for w in first.warnings)


def _record_gemini(url: str) -> None:
    """google-genai over httpx: vcrpy keeps its request bodies as bytes (!!binary)."""
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url, retry_options=None))
    contents: list = [types.Content(role="user", parts=[types.Part(text="read the files")])]
    while True:
        r = client.models.generate_content(model="gemini-2.5-flash", contents=contents)
        reply = r.candidates[0].content
        contents.append(reply)
        call = reply.parts[0].function_call
        if call is None:
            break
        contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name=call.name, response={"output": BIG}))]))


@pytest.mark.parametrize("stored", ["text", "bytes", "gzip"])
def test_a_real_cassette_of_two_sdks_is_cleared_and_read_back(server, tmp_path, stored) -> None:
    """One vcrpy cassette recording google-genai and the OpenAI SDK, its bodies as vcrpy
    wrote them, or as bytes (vcrpy's !!binary: a body that is not text, or gzipped by the
    client): every conversation is cleared, written back (bytes stay bytes, gzip stays
    gzip), and read again, by toolclear and by vcrpy."""
    import gzip

    import vcr
    import yaml

    path = tmp_path / "mixed.yaml"
    with vcr.use_cassette(str(path), record_mode="all"):
        _record_gemini(server)
    _record_openai(server, tmp_path / "openai.yaml")
    mixed = yaml.safe_load(path.read_text())
    mixed["interactions"] += yaml.safe_load((tmp_path / "openai.yaml").read_text())["interactions"]
    for it in mixed["interactions"]:
        body = it["request"]["body"].encode()
        it["request"]["body"] = {"text": body.decode(), "bytes": body, "gzip": gzip.compress(body)}[stored]
    path.write_text(yaml.safe_dump(mixed))
    runs = tc.load_all(path)
    assert {t.format for t in runs} == {"gemini-api", "openai"}
    pairs = [(t, tc.apply(t.messages, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=1, keep_tool_uses=0))
              .messages) for t in runs]
    cleared = sum(m.role == "tool" for _, ms in pairs for m in ms)
    assert cleared > 8
    out = tc.dump_all(pairs)
    back = tc.load_all(out, name="mixed.yaml")
    assert [(t.id, t.format) for t in back] == [(t.id, t.format) for t in runs]
    assert [[m.content for m in t.messages] for t in back] == [[m.content for m in ms] for _, ms in pairs]
    assert sum(m.content == "[cleared]" for t in back for m in t.messages if m.role == "tool") == cleared
    again = yaml.safe_load(out)
    assert all(isinstance(a["request"]["body"], type(b["request"]["body"]))
               for a, b in zip(mixed["interactions"], again["interactions"]))
    (tmp_path / "out.yaml").write_bytes(out)
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serializers import yamlserializer

    requests, _ = FilesystemPersister.load_cassette(str(tmp_path / "out.yaml"), yamlserializer)
    assert len(requests) == len(mixed["interactions"])
    bodies = [gzip.decompress(r.body) if stored == "gzip" else r.body for r in requests]
    assert sum(b"[cleared]" in b for b in bodies) == len(runs) - 2  # all but each SDK's first request
