"""Round trips as properties: for every format, generated transcripts written in varied
JSON styles come back byte for byte with nothing cleared; with clearing, only the cleared
contents change and every tool call stays paired with its result."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolclear as tc

from ..conftest import hypothesis_examples

EXAMPLES = hypothesis_examples(60)

text = st.text(max_size=60)
ascii_or_any = st.one_of(text, st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
names = st.sampled_from(["read_file", "grep", "bash", "漢字", "a b"])


@st.composite
def runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A run: user turns and assistant turns with tool calls, each answered."""
    steps = []
    for k in range(draw(st.integers(1, 5))):
        calls = [
            {"id": f"call_{k}_{j}", "name": draw(names), "args": {"q": draw(text)}, "result": draw(ascii_or_any)}
            for j in range(draw(st.integers(0, 3)))
        ]
        steps.append({"user": draw(text), "thought": draw(text), "calls": calls})
    return steps


def dumps(value: Any, style: tuple[Any, bool]) -> str:
    indent, ascii_ = style
    return json.dumps(value, indent=indent, ensure_ascii=ascii_)


styles = st.tuples(st.sampled_from([None, 2, 4]), st.booleans())
line_styles = st.booleans()


def _line(value: Any, spaced: bool) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))


def openai(run: list[dict]) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": "be brief"}]
    for s in run:
        out.append({"role": "user", "content": s["user"]})
        if s["calls"]:
            out.append({"role": "assistant", "content": s["thought"] or None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                for c in s["calls"]]})
            out += [{"role": "tool", "tool_call_id": c["id"], "content": c["result"]} for c in s["calls"]]
        else:
            out.append({"role": "assistant", "content": s["thought"]})
    return out


def eino(run: list[dict]) -> list[dict]:
    out = []
    for m in openai(run):
        m = {**m, "content": m["content"] or ""}
        if m["role"] == "tool":
            m["tool_name"] = next(c["name"] for s in run for c in s["calls"] if c["id"] == m["tool_call_id"])
        out.append(m)
    return out


def anthropic(run: list[dict]) -> dict:
    msgs: list[dict] = []
    for s in run:
        msgs.append({"role": "user", "content": s["user"]})
        blocks: list[dict] = [{"type": "text", "text": s["thought"]}]
        blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in s["calls"]]
        msgs.append({"role": "assistant", "content": blocks})
        if s["calls"]:
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": c["id"], "content": c["result"]} for c in s["calls"]]})
    return {"model": "claude", "max_tokens": 10, "system": "be brief", "messages": msgs}


def claude_code(run: list[dict]) -> list[dict]:
    lines: list[dict] = []
    parent = None

    def add(kind: str, message: dict, **extra: Any) -> None:
        nonlocal parent
        uid = f"u{len(lines)}"
        lines.append({"parentUuid": parent, "isSidechain": False, "sessionId": "s", "type": kind,
                      "message": message, "uuid": uid, **extra})
        parent = uid

    for k, s in enumerate(run):
        add("user", {"role": "user", "content": s["user"]})
        reply = {"id": f"msg_{k}", "role": "assistant", "type": "message"}
        add("assistant", {**reply, "content": [{"type": "text", "text": s["thought"]}]})
        for c in s["calls"]:  # one line per tool_use, results in between, as Claude Code writes them
            add("assistant", {**reply, "content": [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}]})
            add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c["id"], "content": c["result"]}]},
                toolUseResult={"stdout": c["result"], "stderr": ""})
    return lines


def codex(run: list[dict]) -> list[dict]:
    lines: list[dict] = [{"type": "session_meta", "payload": {"id": "sess"}}]
    for s in run:
        lines.append({"type": "response_item", "payload": {"type": "message", "role": "user",
                                                           "content": [{"type": "input_text", "text": s["user"]}]}})
        lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": None}})
        for c in s["calls"]:
            lines.append({"type": "response_item", "payload": {"type": "function_call", "name": c["name"],
                                                               "arguments": json.dumps(c["args"]), "call_id": c["id"]}})
        for c in s["calls"]:
            lines.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": c["id"],
                                                               "output": c["result"]}})
    return lines


def langchain(run: list[dict]) -> list[dict]:
    out: list[dict] = []
    for s in run:
        out.append({"type": "human", "data": {"content": s["user"], "type": "human"}})
        out.append({"type": "ai", "data": {"content": s["thought"], "type": "ai", "tool_calls": [
            {"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"} for c in s["calls"]]}})
        out += [{"type": "tool", "data": {"content": c["result"], "type": "tool", "tool_call_id": c["id"],
                                          "name": c["name"]}} for c in s["calls"]]
    return out


def openhands(run: list[dict]) -> list[dict]:
    events: list[dict] = []
    for s in run:
        events.append({"id": len(events), "source": "user", "action": "message", "message": s["user"],
                       "args": {"content": s["user"]}})
        for c in s["calls"]:
            meta = {"function_name": c["name"], "tool_call_id": c["id"], "total_calls_in_response": 1}
            events.append({"id": len(events), "source": "agent", "action": "run", "message": "", "tool_call_metadata": meta,
                           "args": {"command": c["args"]["q"], "thought": s["thought"]}})
            events.append({"id": len(events), "source": "agent", "observation": "run", "cause": len(events) - 1,
                           "tool_call_metadata": meta, "content": c["result"], "extras": {}})
    return events


def swe_agent(run: list[dict]) -> dict:
    history: list[dict] = [{"role": "system", "content": "you are an agent", "agent": "main"}]
    for m in openai(run)[1:]:
        m = {**m, "content": m["content"] or ""}
        if m["role"] == "tool":
            m["tool_call_ids"] = [m.pop("tool_call_id")]
        history.append(m)
    return {"environment": "main", "trajectory": [], "history": history, "info": {"exit_status": "submitted"}}


def mini(run: list[dict]) -> dict:
    return {"info": {"mini_version": "1.0"}, "messages": openai(run), "trajectory_format": "mini-swe-agent-1"}


JSON_FORMATS = {"openai": openai, "eino": eino, "anthropic": anthropic, "langchain": langchain,
                "openhands": openhands, "swe-agent": swe_agent, "mini-swe-agent": mini}
JSONL_FORMATS = {"claude-code": claude_code, "codex": codex, "eino": eino}


def _pairs(t: tc.Transcript) -> tuple[set[str], set[str]]:
    calls = {c.id for m in t.messages for c in m.tool_calls}
    results = {m.tool_call_id for m in t.messages if m.role == "tool"}
    return calls, results


def _check(data: bytes, fmt: str, jsonl: bool) -> None:
    t = tc.load(data)
    if fmt == "eino" and not jsonl and not any(m.role == "tool" for m in t.messages):
        assert t.format in ("eino", "openai")  # a plain message list without tool results is both
    else:
        assert t.format == fmt
    assert tc.dump(t) == data  # nothing cleared: byte for byte
    calls, results = _pairs(t)
    if fmt == "mini-swe-agent" and not calls:
        # no tool calls at all reads as an old mini-swe-agent run: user turns answering the
        # assistant are its observations (documented), so they are 'bash' results
        assert all(m.tool_name == "bash" for m in t.messages if m.role == "tool")
    else:
        assert calls == results  # the generator answers every call
    config = tc.ClearToolResultConfig(tool_result_token_threshold=0, keep_recent_tokens=3)
    reduced = tc.reduce_by_tokens(t.messages, config)
    out = tc.dump(t, reduced.messages)
    again = tc.load(out)
    assert [m.content for m in again.messages] == [m.content for m in reduced.messages]
    assert _pairs(again) == (calls, results)  # still paired, no orphans either way
    if jsonl:
        old, new = data.split(b"\n"), out.split(b"\n")
        assert len(old) == len(new)
        touched = {int(t.origins[i].split(":")[0].split()[1]) - 1 for i in reduced.cleared_indices}
        assert all(a == b for k, (a, b) in enumerate(zip(old, new)) if k not in touched)
    else:
        _only_placeholders_differ(json.loads(data), json.loads(out), config.placeholder, fmt)


def _only_placeholders_differ(a: Any, b: Any, ph: str, fmt: str) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in a:
            _only_placeholders_differ(a[k], b[k], ph, fmt)
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _only_placeholders_differ(x, y, ph, fmt)
    elif a != b:
        assert b == ph, f"{fmt}: {a!r} became {b!r}"


@settings(max_examples=EXAMPLES, deadline=None)
@given(runs(), st.sampled_from(sorted(JSON_FORMATS)), styles)
def test_hyp_json_formats_round_trip(run, fmt, style) -> None:
    indent, ascii_ = style
    doc = JSON_FORMATS[fmt](run)
    data = (dumps(doc, (indent, ascii_)) + ("\n" if indent else "")).encode("utf-8", "surrogatepass")
    if not ascii_ and any(0xD800 <= ord(ch) <= 0xDFFF for ch in data.decode("utf-8", "surrogatepass")):
        data = (dumps(doc, (indent, True)) + ("\n" if indent else "")).encode()
    _check(data, fmt, jsonl=False)


@settings(max_examples=EXAMPLES, deadline=None)
@given(runs(), st.sampled_from(sorted(JSONL_FORMATS)), line_styles, st.booleans())
def test_hyp_jsonl_formats_round_trip(run, fmt, spaced, crlf) -> None:
    lines = [_line(r, spaced) for r in JSONL_FORMATS[fmt](run)]
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    data = text.encode("utf-8", "surrogatepass")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        data = ("\n".join(json.dumps(r) for r in JSONL_FORMATS[fmt](run)) + "\n").encode()
    _check(data, fmt, jsonl=True)


_PIECES = [b"NaN", b"Infinity", b"-", b":", b",", b"[", b" ", b"\n", b"\t", b"a", b"_", b"1", b'"', b"]", b"{", b"\xc3\xa9"]


@given(st.lists(st.sampled_from(_PIECES), max_size=16))
@settings(max_examples=3000, deadline=None)
def test_non_finite_in_finds_what_the_regex_finds(pieces: list[bytes]) -> None:
    """The word-by-word search that replaced the regex over the whole file says the same."""
    from toolclear.formats._doc import _NON_FINITE, non_finite_in

    data = b"".join(pieces)
    hit = _NON_FINITE.search(data)
    assert non_finite_in(data) == (hit.group(1).decode() if hit else "")


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(alphabet=st.characters(codec="utf-8"))
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none(), st.floats()), inner, max_size=4),
    max_leaves=20,
)


@given(_json_values)
@settings(max_examples=hypothesis_examples(400), deadline=None)
def test_compact_json_writes_what_json_dumps_writes(value: Any) -> None:
    """``compact_json`` keeps the stdlib's C encoder set up once: every value (NaN, tiny
    floats, non-string keys, lone surrogates) comes out as ``json.dumps`` writes it."""
    from toolclear.formats._base import compact_json

    assert compact_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
