"""Hostile input: byte-exact edits, bounded reads, safe outputs, safe exports (issue 15)."""

from __future__ import annotations

import io
import json
import os
import shlex
import stat
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear import cli
from toolclear.formats._source import read_stream
from toolclear.inspector import exports
from toolclear.policies import snippets

from .conftest import DATA, ROOT

BAD = DATA / "bad"
CLEAR_ALL = tc.ClearToolResultConfig(0, 0, "[gone]")


def _clear_all(t: tc.Transcript) -> bytes:
    return tc.dump(t, tc.reduce_by_tokens(t.messages, CLEAR_ALL).messages)


# ---------------------------------------------------------------- byte-exact edits

_NUMBERS = ["1e400", "1E5", "0.1000000000000000055511151231257827", "-0", "-0.0", "12345678901234567890123",
            "1.5e-300", "7"]
_STRINGS = ['"caf\\u00e9"', '"\\/path\\/x"', '"tab\\there"', '"\\ud83d\\ude00"', '"plain"', '"\\u0041"']
_SPACES = ["", " ", "  ", "\n", "\n    ", "\t"]


@st.composite
def _noise(draw, depth: int = 0, newlines: bool = True) -> str:
    """A JSON value written the way a person or another tool might: odd number spellings,
    escapes, duplicate keys, any layout. Its text must survive an edit elsewhere untouched."""
    kind = draw(st.sampled_from(["num", "str", "lit", "obj", "list"] if depth < 2 else ["num", "str", "lit"]))
    sp = draw(st.sampled_from([s for s in _SPACES if newlines or "\n" not in s]))
    if kind == "num":
        return draw(st.sampled_from(_NUMBERS))
    if kind == "str":
        return draw(st.sampled_from(_STRINGS))
    if kind == "lit":
        return draw(st.sampled_from(["true", "false", "null"]))
    if kind == "obj":
        keys = draw(st.lists(st.sampled_from(["a", "b", "a"]), max_size=3))
        items = [f'{sp}"{k}"{sp}:{sp}{draw(_noise(depth + 1, newlines))}' for k in keys]
        return "{" + ",".join(items) + sp + "}"
    return "[" + ",".join(sp + draw(_noise(depth + 1, newlines)) for _ in range(draw(st.integers(0, 3)))) + sp + "]"


@st.composite
def _document(draw) -> tuple[str, list[tuple[int, int]], bool]:
    """An OpenAI message list with noise around the tool results; returns the text, the
    span of each tool result's content literal, and whether it is JSON Lines."""
    jsonl = draw(st.booleans())
    sp = draw(st.sampled_from(_SPACES)) if not jsonl else draw(st.sampled_from(["", " ", "  "]))
    records: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0 if jsonl else 1
    n = draw(st.integers(1, 3))
    noise = _noise(newlines=not jsonl)
    for i in range(n):
        call = (f'{{"role":{sp}"assistant",{sp}"content":{sp}null,{sp}"extra":{sp}{draw(noise)},{sp}'
                f'"tool_calls":[{{"id":"c{i}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}}')
        records.append(call)
        pos += len(call) + (1 if jsonl else len("," + sp))
        result_head = f'{{"role":{sp}"tool",{sp}"x":{sp}{draw(noise)},{sp}"tool_call_id":"c{i}",{sp}"content":{sp}'
        literal = draw(st.sampled_from(['"big \\u00e9 result"', '"line\\nline"', '"\\/\\/ slashes"', '"r"']))
        tail = f'{sp}{"," + sp + chr(34) + "y" + chr(34) + ":" + draw(noise) if draw(st.booleans()) else ""}}}'
        spans.append((pos + len(result_head), pos + len(result_head) + len(literal)))
        record = result_head + literal + tail
        records.append(record)
        pos += len(record) + (1 if jsonl else len("," + sp))
    records.append('{"role": "user", "content": "next"}')  # the last message is always in the window
    text = "\n".join(records) + "\n" if jsonl else "[" + ("," + sp).join(records) + "]"
    return text, spans, jsonl


@settings(max_examples=int(os.environ.get("TOOLCLEAR_HYPOTHESIS_EXAMPLES", "200")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_document())
def test_hyp_an_edit_replaces_exactly_the_bytes_of_the_cleared_text(doc) -> None:
    text, spans, jsonl = doc
    for start, end in spans:
        assert json.loads(text[start:end])  # the oracle: the spans really are the contents
    t = tc.load(text.encode())
    out = _clear_all(t).decode()
    expected = text
    for start, end in reversed(spans):
        expected = expected[:start] + '"[gone]"' + expected[end:]
    assert out == expected


def test_the_issue_examples_survive_an_edit_in_json_and_jsonl() -> None:
    for name in ("odd-numbers-and-escapes.json", "odd-numbers-and-escapes.jsonl"):
        data = (BAD / name).read_bytes()
        out = _clear_all(tc.load(BAD / name))
        for kept in (b"1e400", b"1E5", b"0.1000000000000000055511151231257827", b'"n4": -0,', b"\\u00e9",
                     b"\\/", b'"d": 1, "d": 2', b'"role": "user",   "content"'):
            assert out.count(kept) == data.count(kept), kept
        assert b'"content": "[gone]"' in out and b"a.py\\nb.py" not in out
        assert len(out) == len(data) - len(b'"a.py\\nb.py"') + len(b'"[gone]"')


def test_yaml_cassette_is_written_back_without_expanding_aliases() -> None:
    data = (BAD / "yaml-alias-in-cassette.yaml").read_bytes()
    t = tc.load(BAD / "yaml-alias-in-cassette.yaml")
    out = _clear_all(t)
    assert b"&id001" in out and b"headers: *id001" in out
    assert out.replace(b'content: "[gone]"\n', b"") == data.replace(
        b"content:\n          - type: text\n            text: 'a.py b.py'\n", b"")
    assert [m.content for m in tc.load(out).messages] == ["", "[gone]", "thanks"]


def test_real_cassette_edit_changes_only_the_cleared_blocks() -> None:
    path = DATA / "corpus" / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml"
    data = path.read_bytes()
    for t in tc.load_all(path):
        reduced = tc.reduce_by_tokens(t.messages, CLEAR_ALL).messages
        out = tc.dump(t, reduced)
        assert len(out) < len(data) * 2
        import yaml

        before, after = yaml.safe_load(data), yaml.safe_load(out)
        assert before.keys() == after.keys() and len(before["interactions"]) == len(after["interactions"])
        again = tc.load_all(out)
        assert [m.content for m in again[[x.id for x in again].index(t.id)].messages] == [
            m.content for m in reduced]


def test_yaml_bomb_is_refused_fast_and_small() -> None:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking (pytest) process
    code = ("import re, time, toolclear as tc\n"
            "t0 = time.time()\n"
            "try:\n    tc.load(open(__import__('sys').argv[1], 'rb').read())\n"
            "except tc.TranscriptError as e:\n    print('refused', str(e)[:40])\n"
            "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "print(round(time.time() - t0, 2), hwm)\n")
    for name in ("yaml-alias-bomb.yaml", "yaml-alias-wide.yaml", "yaml-alias-cycle.yaml"):
        done = subprocess.run([sys.executable, "-c", code, str(BAD / name)], capture_output=True, text=True,
                              timeout=60)
        lines = done.stdout.splitlines()
        assert lines[0].startswith("refused"), done.stdout + done.stderr
        seconds, rss_kb = lines[1].split()
        assert float(seconds) < 5 and int(rss_kb) < 512 * 1024


# ---------------------------------------------------------------- sources

def test_a_str_is_always_a_path() -> None:
    with pytest.raises(tc.TranscriptError, match="no such file"):
        tc.load("[draft] run.json")
    with pytest.raises(tc.TranscriptError, match="NUL"):
        tc.load("a\x00b")
    with pytest.raises(tc.TranscriptError, match="format must be a format name"):
        tc.load(BAD / "empty-list.json", format=5)  # type: ignore[arg-type]


def test_a_file_named_like_json_text_is_read(tmp_path) -> None:
    path = tmp_path / "[draft] run.json"
    path.write_bytes((BAD / "odd-numbers-and-escapes.json").read_bytes())
    assert len(tc.load(str(path)).messages) == 4


def test_fifo_and_devices_are_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(tc.TranscriptError, match="named pipe"):
        tc.load(fifo)
    with pytest.raises(tc.TranscriptError, match="device"):
        tc.load("/dev/zero")
    assert time.monotonic() - t0 < 5
    err = io.StringIO()
    assert cli.main(["inspect", str(fifo)], stdout=io.BytesIO(), stderr=err) == 2
    assert "named pipe" in err.getvalue() and err.getvalue().count("\n") == 1


def test_a_stream_is_read_only_up_to_the_limit() -> None:
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            return b"x" * (n if n > 0 else 1 << 16)

    with pytest.raises(tc.TranscriptError, match="larger than 1,000 bytes"):
        read_stream(Endless(), "<stdin>", limit=1000)


def test_a_fifo_planted_at_an_offload_path_is_refused(tmp_path) -> None:
    backend = tc.LocalDirBackend(tmp_path)
    target = backend.locate("/large_tool_result/c1")
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(tc.offload("x" * 1000, "c1", "t",
                              tc.ToolResultOffloadingConfig(10), backend)), daemon=True)
    worker.start()
    worker.join(10)
    assert done, "the write blocked on the FIFO"
    result = done[0]
    assert not result.offloaded and "not a regular file" in result.error  # type: ignore[attr-defined]


# ---------------------------------------------------------------- CLI outputs

def _run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    code = cli.main(args, stdout=io.BytesIO(), stderr=err)
    return code, err.getvalue()


@pytest.fixture
def src(tmp_path) -> Path:
    path = tmp_path / "in.json"
    path.write_bytes((BAD / "odd-numbers-and-escapes.json").read_bytes())
    return path


def test_outputs_never_overwrite_the_input_or_each_other(src, tmp_path) -> None:
    data = src.read_bytes()
    for args in (["-o", str(src)], ["--report", str(src)], ["-o", str(tmp_path / "r.json"), "--report",
                                                            str(tmp_path / "r.json")]):
        code, err = _run(["reduce", str(src), *args])
        assert code == 2 and err.count("\n") == 1, err
    os.link(src, tmp_path / "hard.json")
    code, err = _run(["reduce", str(src), "-o", str(tmp_path / "hard.json")])
    assert code == 2 and "input file" in err
    assert src.read_bytes() == data and not (tmp_path / "r.json").exists()


def test_output_mode_keeps_the_existing_one_else_honours_the_umask(src, tmp_path) -> None:
    out = tmp_path / "out.json"
    old = os.umask(0o022)
    try:
        assert _run(["reduce", str(src), "-o", str(out), "--threshold", "0", "--keep", "0"])[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        out.chmod(0o640)
        assert _run(["reduce", str(src), "-o", str(out)])[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_output_onto_a_device_writes_into_it_and_keeps_the_node(src) -> None:
    before = os.stat("/dev/null")
    assert _run(["reduce", str(src), "-o", "/dev/null"])[0] == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_interrupt_leaves_no_temp_file_and_says_what_happened(src, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out.json"

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    code, err = _run(["reduce", str(src), "-o", str(out)])
    assert code == 130 and "nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json"]


def test_interrupt_after_the_output_is_in_place_says_so(src, tmp_path, monkeypatch) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    real = os.replace
    calls: list[str] = []

    def second_interrupted(a, b):
        calls.append(str(b))
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(a, b)

    monkeypatch.setattr(os, "replace", second_interrupted)
    code, err = _run(["reduce", str(src), "-o", str(out), "--report", str(report)])
    assert code == 130 and f"wrote {out}" in err and out.exists() and not report.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json", "out.json"]


def test_terminal_escapes_from_the_input_are_shown_escaped() -> None:
    code, err = _run(["inspect", str(BAD / "escape-sequences-in-keys.json")])
    assert code == 2 and "\x1b" not in err and "\x07" not in err and "\\x1b[2K" in err
    done = subprocess.run([sys.executable, "-m", "toolclear", "inspect", str(BAD / "escape-sequences-in-keys.json")],
                          capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and b"\x1b" not in done.stderr and b"\x1b" not in done.stdout


# ---------------------------------------------------------------- exports

def test_csv_cells_that_look_like_formulas_are_neutralised() -> None:
    rows = [{"tool_name": "=HYPERLINK(\"http://x\",\"y\")", "preview": "@SUM(A1)", "role": "+1", "index": -3}]
    text = exports.report_csv(rows).decode()
    assert "'=HYPERLINK" in text and "'@SUM" in text and "'+1" in text and "\n-3," in text


def _go_unquote(literal: str) -> str:
    """Go's interpreted string literal rules (the subset the snippet emits)."""
    assert literal.isascii() and literal[0] == literal[-1] == '"'
    out, i, body = [], 0, literal[1:-1]
    simple = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            assert ch != '"'
            out.append(ch)
            i += 1
            continue
        kind = body[i + 1]
        if kind in simple:
            out.append(simple[kind])
            i += 2
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            code = int(body[i + 2 : i + 2 + width], 16)
            assert not 0xD800 <= code <= 0xDFFF, "Go refuses a surrogate escape"
            out.append(chr(code))
            i += 2 + width
    return "".join(out)


def test_go_snippet_literals_are_valid_go_for_any_text() -> None:
    for text in ("plain", "emoji 😀 and é", 'quote " back \\ slash', "tab\tnew\nline\x01", "\u2028"):
        go = snippets.go_snippet(tc.ClearToolResultConfig(placeholder=text, exclude_tools=(text,)))
        literal = next(line.split(": ", 1)[1].rstrip(",").strip() for line in go.splitlines()
                       if "ClearToolResultPlaceholder" in line)
        assert _go_unquote(literal) == text


def test_cli_snippet_runs_with_values_that_start_with_a_dash(src, tmp_path, monkeypatch) -> None:
    config = tc.ClearToolResultConfig(0, 0, "-- gone --", ("-x",))
    line = snippets.cli_command(config, path=str(src))
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(line)
    code, err = _run(argv[1:])
    assert code == 0, err
    out = tc.load(tmp_path / "reduced-in.json")
    assert [m.content for m in out.messages if m.role == "tool"] == ["-- gone --"]


def test_zip_entries_are_one_to_one_and_encodable() -> None:
    backend = tc.MemoryBackend()
    ids = ["a", "a\x00zzz", "bad\ud800id", "../../etc/passwd"]
    messages: list[tc.Message] = []
    for i, cid in enumerate(ids):
        messages.append(tc.Message("assistant", tool_calls=(tc.ToolCall(cid, "t"),)))
        messages.append(tc.Message("tool", f"result {i} " + "x" * 2000, tool_call_id=cid, tool_name="t"))
    r = tc.reduce_by_tokens(messages, tc.ClearToolResultConfig(10**9, 0), offloading=tc.ToolResultOffloadingConfig(10),
                            backend=backend)
    data = exports.offloaded_zip(r.offloads, backend)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        assert len(names) == len(set(names)) == len(ids)
        assert sorted(zf.read(n).decode()[:9] for n in names) == [f"result {i} " for i in range(4)]
        assert all(not n.startswith("/") and ".." not in n.split("/") and n.isprintable() for n in names)


# ---------------------------------------------------------------- library edges

def test_dump_refuses_content_that_is_not_text() -> None:
    t = tc.load(BAD / "odd-numbers-and-escapes.json")
    with pytest.raises(tc.TranscriptError, match="only text"):
        tc.dump(t, [m.with_content(5) if m.role == "tool" else m for m in t.messages])  # type: ignore[arg-type]


def test_to_dict_does_not_share_the_loaded_document() -> None:
    t = tc.load(BAD / "odd-numbers-and-escapes.json")
    d = t.messages[1].to_dict()
    d["tool_calls"][0]["function"]["name"] = "changed"
    d["role"] = "changed"
    assert t.messages[1].to_dict()["tool_calls"][0]["function"]["name"] == "ls"
    assert tc.dump(t) == (BAD / "odd-numbers-and-escapes.json").read_bytes()


def _signalled_reduces(tmp_path: Path, signum: int, delays: tuple[float, ...]) -> Iterator[tuple[int, str, Path]]:
    """(exit status, stderr, output) of `reduce` on an 80 MB file sent ``signum`` after
    each delay, once toolclear runs; each time, no temporary file may be left."""
    big = tmp_path / "big.jsonl"
    line = json.dumps({"role": "tool", "tool_call_id": "c", "tool_name": "t", "content": "x" * 4000}) + "\n"
    big.write_text(line * 20_000)  # 80 MB
    runner = "from toolclear.cli import main_entry\nprint('ready', flush=True)\nmain_entry()\n"
    for delay in delays:
        out = tmp_path / "out.jsonl"
        out.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", runner, "reduce", str(big), "-o", str(out)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(delay)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".toolclear-")) == []
        yield proc.returncode, err, out


def test_real_ctrl_c_never_leaves_a_temp_file_and_reports_truly(tmp_path) -> None:
    """SIGINT at several moments of a real run on a large file, once toolclear is running
    (an interrupt while the interpreter itself starts is Python's to report): afterwards
    there is no temporary file, and the output exists exactly when the message says so."""
    import signal

    outcomes = set()
    for code, err, out in _signalled_reduces(tmp_path, signal.SIGINT, (0.05, 0.1, 0.3, 0.6, 1.0, 1.5)):
        if code == 130:
            assert ("wrote" in err) == out.exists(), err
            assert ("nothing was written" in err) == (not out.exists()), err
        elif code == -signal.SIGINT:
            # the signal came as the interpreter was exiting, after toolclear had finished and said so
            assert "wrote" in err and out.exists(), err
        else:
            assert code == 0 and out.exists(), (code, err)
        outcomes.add(code)
    assert 130 in outcomes  # at least one interrupt landed mid-run


def test_modules_are_not_shadowed_by_functions() -> None:
    import importlib

    import toolclear.formats

    assert toolclear.formats is importlib.import_module("toolclear.formats")  # the module, not a function
    assert callable(tc.list_formats) and callable(tc.replay) and callable(tc.offload)
    for name in ("toolclear.replay", "toolclear.offload"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_a_cassette_without_pyyaml_says_to_install_it(tmp_path) -> None:
    code = ("import sys; sys.modules['yaml'] = None\n"
            "import toolclear as tc\n"
            "try:\n    tc.load(sys.argv[1])\nexcept tc.TranscriptError as e:\n    print(e)\n")
    path = DATA / "corpus" / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert "needs PyYAML" in done.stdout and "pip install" in done.stdout, done.stdout + done.stderr


def test_json_spans_find_the_last_duplicate_and_refuse_what_is_not_there() -> None:
    from toolclear.formats._splice import json_spans

    text = '{"a": {}, "b": [1, {"c": "x"}], "b": [2, {"c": "yy"}]}'
    assert [text[s:e] for s, e, _ in json_spans(text, {("b", 1, "c"): "new"})] == ['"yy"']
    assert json_spans(text, {("a", "missing"): "new"}) is None  # an empty object has no such key
    assert json_spans(text, {("b", 5): "new"}) is None
    assert json_spans(text, {("b", "x"): "new"}) is None


def test_import_toolclear_stays_light() -> None:
    """The core imports none of the heavy optional libraries: the app's, the counters',
    the frameworks' and numpy come in only when a feature needs them."""
    code = ("import sys, toolclear\n"
            "heavy = ('numpy', 'pandas', 'streamlit', 'plotly', 'tiktoken', 'langchain', 'langchain_core', "
            "'pydantic_ai', 'agents', 'dask', 'distributed', 'pyarrow', 'yaml')\n"
            "print(','.join(m for m in heavy if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", out.stdout


def test_sigterm_while_reduce_writes_leaves_no_temp_file(tmp_path) -> None:
    """What `timeout`, systemd and `kill` send: the same clean-up as Ctrl-C, said as such."""
    import signal

    outcomes = set()
    for code, err, out in _signalled_reduces(tmp_path, signal.SIGTERM, (0.1, 0.4, 0.8, 1.2)):
        if code == 143:
            said = err[err.index("toolclear: terminated; "):]  # it may come after the summary line
            assert ("wrote" in said) == out.exists(), err
        else:
            assert code in (0, -signal.SIGTERM) and out.exists(), (code, err)
        outcomes.add(code)
    assert 143 in outcomes  # at least one landed mid-run


@pytest.mark.parametrize("backend", ["memory", "dir"])
def test_an_id_ending_in_a_repeat_suffix_never_shares_a_location(backend, tmp_path) -> None:
    """Call ids x~2, x, x: three results, three locations, each read back as written."""
    store = tc.MemoryBackend() if backend == "memory" else tc.LocalDirBackend(tmp_path / "off")
    cfg = tc.ToolResultOffloadingConfig(offloading_token_limit=10)
    written = []
    for i, cid in enumerate(["x~2", "x", "x", "x~2", "x~3"]):
        text = f"result {i} " * 100
        o = tc.offload(text, cid, "t", cfg, store)
        assert o.offloaded and o.path in o.message
        written.append((o.path, text))
    assert len({p for p, _ in written}) == len(written)
    for path, text in written:
        assert store.read(path) == text
