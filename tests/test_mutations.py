"""One-field mutations of real files that were internal errors (attack review, round 5):
each reads, or is refused in one line with exit 2, through inspect and a priced compare."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolclear as tc
from toolclear.cli import main

ROOT = Path(__file__).resolve().parents[1]
OTEL = ROOT / "tests" / "data" / "formats" / "otel_pydantic-ai.json"
CC = ROOT / "tests" / "data" / "corpus" / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl"
RESOLVER = ROOT / "tests" / "data" / "formats" / "openhands-2024_resolver-output.jsonl"


def _spans(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _otel(change: Callable[[dict[str, Any]], None]) -> str:
    d = json.loads(OTEL.read_text())
    change(d)
    return json.dumps(d)


def _set_ints(d: dict[str, Any], value: Any) -> None:
    for s in _spans(d):
        for a in s.get("attributes", []):
            if "intValue" in a["value"]:
                a["value"]["intValue"] = value


def _cc(change: Callable[[dict[str, Any]], bool]) -> str:
    out, done = [], False
    for line in CC.read_text().splitlines():
        d = json.loads(line)
        if not done:
            done = change(d)
        out.append(json.dumps(d))
    return "\n".join(out) + "\n"


def _message(value: Any) -> Callable[[dict[str, Any]], bool]:
    def change(d: dict[str, Any]) -> bool:
        if d.get("type") != "assistant":
            return False
        d["message"] = copy.deepcopy(value)
        return True
    return change


def _usage(value: Any) -> Callable[[dict[str, Any]], bool]:
    def change(d: dict[str, Any]) -> bool:
        if d.get("type") == "assistant" and isinstance(d.get("message", {}).get("usage"), dict):
            d["message"]["usage"]["input_tokens"] = value
        return False  # every call
    return change


CASES: dict[str, Callable[[], str]] = {
    "otel start 1e308": lambda: _otel(lambda d: _spans(d)[0].__setitem__("startTimeUnixNano", 1e308)),
    "otel start Infinity": lambda: _otel(lambda d: _spans(d)[0].__setitem__("startTimeUnixNano", "x")).replace(
        '"startTimeUnixNano": "x"', '"startTimeUnixNano": Infinity'),
    "otel intValue Infinity": lambda: _otel(lambda d: _set_ints(d, "Infinity")),
    "otel intValue 2^70": lambda: _otel(lambda d: _set_ints(d, str(2**70))),
    "otel lone-surrogate traceId": lambda: _otel(lambda d: _spans(d)[0].__setitem__("traceId", "X")).replace(
        '"traceId": "X"', '"traceId": "\\ud800ab"'),
    "otel events 5": lambda: _otel(lambda d: _spans(d)[0].__setitem__("events", 5)),
    "otel arrayValue 5": lambda: _otel(lambda d: _spans(d)[0]["attributes"].append(
        {"key": "x", "value": {"arrayValue": 5}})),
    "otel kvlistValue 5": lambda: _otel(lambda d: _spans(d)[0]["attributes"].append(
        {"key": "x", "value": {"kvlistValue": 5}})),
    "otel bool attribute": lambda: _otel(lambda d: _spans(d)[0]["attributes"].append(
        {"key": "gen_ai.usage.input_tokens", "value": True})),
    "claude-code message null": lambda: _cc(_message(None)),
    "claude-code message number": lambda: _cc(_message(5)),
    "claude-code message string": lambda: _cc(_message("hi")),
    "claude-code message list": lambda: _cc(_message([1, 2])),
    "claude-code usage 2^63": lambda: _cc(_usage(2**63)),
    "claude-code usage 2^64": lambda: _cc(_usage(2**64)),
    "claude-code usage NaN": lambda: _cc(_usage(float("nan"))),
    "openhands issue a string": lambda: json.dumps(
        {**json.loads(RESOLVER.read_text().splitlines()[0]), "issue": "a string"}) + "\n",
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("command", [["inspect"], ["compare", "--pricing", "auto"]], ids=["inspect", "compare"])
def test_a_mutated_file_is_read_or_refused_in_one_line(name, command, tmp_path) -> None:
    path = tmp_path / ("f.json" if name.startswith("otel") else "f.jsonl")
    path.write_text(CASES[name](), encoding="utf-8", errors="surrogatepass")
    out, err = io.BytesIO(), io.StringIO()
    code = main([*command, str(path)], stdout=out, stderr=err)
    assert code in (0, 2), err.getvalue()
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue()
    if code == 2:
        assert err.getvalue().count("\n") == 1


def test_an_absurd_usage_count_reads_as_not_recorded() -> None:
    from toolclear.formats._base import MAX_TOKENS, token_count

    assert token_count(MAX_TOKENS) == MAX_TOKENS and token_count(MAX_TOKENS + 1) == 0
    assert token_count(True) == 0 and token_count(-1) == 0 and token_count(float("nan")) == 0
    t = tc.load(text=_cc(_usage(2**64)), format="claude-code")
    assert all(m.usage is None or m.usage.input_tokens <= MAX_TOKENS for m in t.messages)
    tc.recorded_cost(t.messages)  # priced, no overflow


def test_an_empty_pricing_name_is_a_usage_error() -> None:
    for command in (["compare"], ["inspect"], ["reduce"], ["corpus", "--replay"]):
        err = io.StringIO()
        code = main([*command, str(ROOT / "sample_data" / "coding-agent.openai.json"), "--pricing", ""],
                    stdout=io.BytesIO(), stderr=err)
        assert code == 2 and "--pricing: expected a preset's or a model's name" in err.getvalue(), command


def test_nan_or_infinity_in_usage_is_said() -> None:
    t = tc.load(text=_cc(_usage(float("nan"))), format="claude-code")
    assert any("writes NaN where a number belongs" in n for n in t.notes)
    plain = tc.load(CC)
    assert not any("where a number belongs" in n for n in plain.notes)


def _two_look_alike_tools() -> str:
    msgs = [{"role": "user", "content": "go"}]
    for k, name in enumerate(["read_file", "read_file\u200b"]):
        msgs.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": name, "arguments": "{}"}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{k}", "name": name, "content": f"r{k}"})
    return json.dumps(msgs)


def test_invisible_characters_are_shown_not_hidden(tmp_path) -> None:
    """read_file and read_file<ZWSP> are two tools and look like two; a U+202E in a file
    name does not turn the caption around."""
    path = tmp_path / "a\u202egnp.json"
    path.write_text(_two_look_alike_tools(), encoding="utf-8")
    out, err = io.BytesIO(), io.StringIO()
    assert main(["inspect", str(path)], stdout=out, stderr=err) == 0, err.getvalue()
    text = out.getvalue().decode()
    assert "read_file\\u200b" in text and "\u200b" not in text and "\u202e" not in text and "\\u202e" in text

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["sample"] = "none"
    at.run()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/json")).run()
    assert not at.exception, at.exception
    shown = " ".join(c.value for c in at.caption)
    assert "\u202e" not in shown and "u202e" in shown
    names = at.multiselect(key="p_eino_opt_exclude").options
    assert len(names) == 2 and len({n.split(" (")[0] for n in names}) == 2 and not any("\u200b" in n for n in names)


def test_a_file_of_many_conversations_is_searched_for_nan_once(monkeypatch) -> None:
    """The NaN / Infinity note is found once per file, not once per conversation (it was,
    and 3,000 conversations took 5.5 s instead of 0.3 s)."""
    from toolclear.formats import _doc

    run = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "", "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": "a b"}, {"role": "assistant", "content": "done"}]
    data = json.dumps([{"id": k, "messages": run} for k in range(200)]).replace('"id": 7,', '"id": 7, "x": NaN,')
    assert "NaN" in data
    searched = {"n": 0}
    real = _doc.non_finite_in

    def counted(data: bytes) -> str:
        searched["n"] += 1
        return real(data)

    monkeypatch.setattr(_doc, "non_finite_in", counted)
    runs = tc.load_all(data.encode(), "openai")
    assert len(runs) == 200 and searched["n"] == 1
    assert all(any("writes NaN" in n for n in t.notes) for t in runs)
