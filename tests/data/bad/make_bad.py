"""Write the bad-input corpus: python tests/data/bad/make_bad.py [DIR]

Small files are committed next to this script; the big ones (deep nesting, a 50 MB
line, 100,000 tiny messages) are generated into DIR by the tests, so the repository
stays small. ``expected.json`` says what each must do.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

OK_MESSAGES = [
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                          "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "tool_name": "ls", "content": "a.py\nb.py"},
]


def small() -> dict[str, bytes]:
    msgs = json.dumps(OK_MESSAGES).encode()
    jsonl = b"".join(json.dumps(m).encode() + b"\n" for m in OK_MESSAGES)
    return {
        "empty.json": b"",
        "whitespace-only.json": b"  \n\t \r\n",
        "truncated.json": msgs[: len(msgs) // 2],
        "trailing-garbage.json": msgs + b"\nthis is not json",
        "jsonl-one-broken-line.jsonl": jsonl.replace(b'{"role": "tool"', b'{"role": "tool" oops', 1),
        "jsonl-mostly-garbage.jsonl": b'{"role": "user", "content": "a"}\nnope\nnope again\n{broken\n',
        "utf16-with-bom.json": json.dumps(OK_MESSAGES, ensure_ascii=False).encode("utf-16"),
        "utf16-without-bom.json": json.dumps(OK_MESSAGES).encode("utf-16-le"),
        "utf8-with-bom.jsonl": b"\xef\xbb\xbf" + jsonl,
        "latin1.json": '[{"role": "user", "content": "caf\u00e9 cr\u00e8me"}]'.encode("latin-1"),
        "binary-junk.bin": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        "json-number.json": b"42",
        "json-string.json": b'"hello"',
        "json-null.json": b"null",
        "content-number.json": b'[{"role": "user", "content": 3}]',
        "content-null.json": b'[{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}]',
        "content-object.json": b'[{"role": "user", "content": {"text": "hi"}}]',
        "unknown-role.json": b'[{"role": "robot", "content": "beep"}, {"role": "user", "content": "hi"}]',
        "role-not-a-string.json": b'[{"role": 5, "content": "x"}]',
        "message-not-an-object.json": b'[{"role": "user", "content": "a"}, "oops"]',
        "tool-without-id-or-name.json": b'[{"role": "user", "content": "a"}, {"role": "tool", "content": "result"}]',
        "tool-result-without-call.json": b'[{"role": "user", "content": "a"}, '
                                         b'{"role": "tool", "tool_call_id": "nope", "content": "r"}]',
        "duplicate-call-ids.json": json.dumps(OK_MESSAGES + [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                                 "function": {"name": "cat", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "again"}]).encode(),
        "arguments-not-json.json": json.dumps([
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function",
                                                                 "function": {"name": "f", "arguments": "{not json"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "r"}]).encode(),
        "tool-calls-not-a-list.json": b'[{"role": "assistant", "content": "", "tool_calls": {"id": "x"}}]',
        "nan-infinity.json": b'[{"role": "user", "content": "a", "score": NaN, "hi": Infinity, "lo": -Infinity}]',
        "huge-integers.json": b'[{"role": "user", "content": "a", "n": 123456789012345678901234567890123456789}]',
        "integer-too-long.json": b'[{"role": "user", "content": "a", "n": ' + b"7" * 5000 + b"}]",
        "lone-surrogate.json": b'[{"role": "tool", "tool_name": "t", "content": "bad \\ud800 half"}]',
        "crlf-lines.jsonl": jsonl.replace(b"\n", b"\r\n"),
        "almost-messages-no-role.json": b'[{"content": "hi"}, {"content": "there"}]',
        "almost-claude-code.jsonl": b'{"type": "user", "sessionId": "s1", "uuid": "u1", "content": "hi"}\n'
                                    b'{"type": "assistant", "sessionId": "s1", "uuid": "u2", "text": "ok"}\n',
        "almost-request-body.json": b'{"model": "gpt-4o", "prompt": "hi", "max_tokens": 5}',
        "anthropic-result-without-id.json": b'{"messages": [{"role": "user", "content": [{"type": "tool_result", '
                                            b'"content": "x"}]}]}',
        "empty-list.json": b"[]",
        "yaml-without-requests.yaml": b"interactions:\n- request:\n    uri: https://example.com\n    body: null\n",
        "random-yaml.yaml": b"name: thing\nitems:\n  - 1\n  - 2\n",
        # hostile input (issue 15): YAML aliases that expand, a cycle, a legitimate alias
        "yaml-alias-bomb.yaml": _laughs(9, 9),
        "yaml-alias-wide.yaml": _laughs(40, 6),
        "yaml-alias-cycle.yaml": b"interactions: &a\n- request: *a\n",
        "yaml-alias-in-cassette.yaml": _cassette_with_alias(),
        # write-back must keep what the parser drops; terminal escapes must not reach the terminal
        "odd-numbers-and-escapes.json": _odd_numbers(),
        "odd-numbers-and-escapes.jsonl": b"\n".join(_odd_numbers_lines()) + b"\n",
        "escape-sequences-in-keys.json": b'{"\\u001b[2K\\u001b[1Gok, 0 problems\\u001b]52;c;ZXZpbA==\\u0007": 1}',
    }


def _laughs(width: int, depth: int) -> bytes:
    """A 'billion laughs' cassette: each level repeats the previous one ``width`` times."""
    lines = [b"a0: &a0 [" + b",".join([b"lol"] * width) + b"]"]
    for d in range(1, depth):
        lines.append(b"a%d: &a%d [" % (d, d) + b",".join([b"*a%d" % (d - 1)] * width) + b"]")
    lines.append(b"interactions:\n- request:\n    parsed_body:\n      messages: *a%d" % (depth - 1))
    return b"\n".join(lines) + b"\n"


def _cassette_with_alias() -> bytes:
    """A VCR cassette as PyYAML writes a shared value: an anchor and an alias (small, legitimate)."""
    return (
        b"interactions:\n"
        b"- request:\n"
        b"    headers: &id001\n"
        b"      content-type:\n"
        b"      - application/json\n"
        b"    parsed_body:\n"
        b"      messages:\n"
        b"      - role: assistant\n"
        b"        content:\n"
        b"        - type: tool_use\n"
        b"          id: t1\n"
        b"          name: ls\n"
        b"          input: {}\n"
        b"      - role: user\n"
        b"        content:\n"
        b"        - type: tool_result\n"
        b"          tool_use_id: t1\n"
        b"          content:\n"
        b"          - type: text\n"
        b"            text: 'a.py b.py'\n"
        b"      - role: user\n"
        b"        content: thanks\n"
        b"  response:\n"
        b"    headers: *id001\n"
    )


_ODD = (b'"n1": 1e400, "n2": 1E5, "n3": 0.1000000000000000055511151231257827, "n4": -0, '
        b'"n5": 123456789012345678901234567890.123456789, "s": "caf\\u00e9 \\/ ok", "d": 1, "d": 2')


def _odd_numbers() -> bytes:
    return (b'[\n  {"role": "user",   "content": "list", ' + _ODD + b'},\n'
            b'  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
            b'"function": {"name": "ls", "arguments": "{}"}}]},\n'
            b'  {"role": "tool", "tool_call_id": "c1", ' + _ODD + b', "content": "a.py\\nb.py"},\n'
            b'  {"role": "user", "content": "thanks"}\n]\n')


def _odd_numbers_lines() -> list[bytes]:
    return [b'{"role": "user",   "content": "list", ' + _ODD + b'}',
            b'{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", '
            b'"function": {"name": "ls", "arguments": "{}"}}]}',
            b'{"role": "tool", "tool_call_id": "c1", "tool_name": "ls", ' + _ODD + b', "content": "a.py\\nb.py"}',
            b'{"role": "user", "content": "thanks"}']


def _claude_code_sidechains(n: int, dangling: bool) -> bytes:
    """A Claude Code session whose subagent lines form one long chain (or, with
    ``dangling``, point at parents never written): loading must stay linear."""
    lines = [json.dumps({"type": "user", "uuid": "m0", "parentUuid": None, "sessionId": "s", "isSidechain": False,
                         "message": {"role": "user", "content": "go"}})]
    for i in range(n):
        parent = f"gone{i}" if dangling else (f"s{i - 1}" if i else None)
        role = "assistant" if i % 2 else "user"
        lines.append(json.dumps({"type": role, "uuid": f"s{i}", "parentUuid": parent, "sessionId": "s",
                                 "isSidechain": True, "message": {"role": role, "content": f"step {i}"}}))
    lines.append(json.dumps({"type": "assistant", "uuid": "m1", "parentUuid": "m0", "sessionId": "s",
                             "isSidechain": False, "message": {"role": "assistant", "content": "done"}}))
    return ("\n".join(lines) + "\n").encode()


def big() -> dict[str, bytes]:
    line = json.dumps({"role": "tool", "tool_name": "dump", "content": "x" * (50 * 1024 * 1024)}).encode()
    tiny = b"".join(b'{"role":"%s","content":"m%d"}\n' % (b"user" if i % 2 else b"tool", i) for i in range(100_000))
    return {
        "deep-nesting.json": b"[" * 100_000 + b"]" * 100_000,
        "single-50mb-line.jsonl": line + b"\n",
        "100k-tiny-messages.jsonl": tiny,
        "claude-code-20k-sidechain-lines.jsonl": _claude_code_sidechains(20_000, dangling=False),
        "claude-code-20k-dangling-parents.jsonl": _claude_code_sidechains(20_000, dangling=True),
    }


def main(out: Path | None = None) -> None:
    for name, data in small().items():
        (HERE / name).write_bytes(data)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in big().items():
            (out / name).write_bytes(data)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
