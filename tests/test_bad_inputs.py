"""The bad-input corpus through all three entry points: library, CLI and app."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import toolclear as tc
from toolclear.cli import main as cli_main

from .conftest import DATA, ROOT

BAD = DATA / "bad"
EXPECTED = {k: v for k, v in json.loads((BAD / "expected.json").read_text()).items() if not k.startswith("_")}
NAMES = sorted(EXPECTED)


@pytest.fixture(scope="session")
def bad_dir(tmp_path_factory) -> Path:
    """The committed files plus the generated big ones, in one folder."""
    sys.path.insert(0, str(BAD))
    try:
        import make_bad
    finally:
        sys.path.remove(str(BAD))
    out = tmp_path_factory.mktemp("bad")
    for name in NAMES:
        if not EXPECTED[name].get("generated"):
            (out / name).write_bytes((BAD / name).read_bytes())
    for name, data in make_bad.big().items():
        (out / name).write_bytes(data)
    return out


def test_corpus_has_at_least_30_kinds_and_files_match_the_generator() -> None:
    assert len(EXPECTED) >= 30
    sys.path.insert(0, str(BAD))
    try:
        import make_bad
    finally:
        sys.path.remove(str(BAD))
    assert set(make_bad.small()) | set(make_bad.big()) == set(EXPECTED)
    for name, data in make_bad.small().items():
        assert (BAD / name).read_bytes() == data, f"{name} differs from make_bad.py"


@pytest.mark.parametrize("name", NAMES)
def test_library(bad_dir, name) -> None:
    e = EXPECTED[name]
    path = bad_dir / name
    data = path.read_bytes()
    if e["outcome"] == "error":
        with pytest.raises(tc.TranscriptError) as info:
            tc.load_all(path)
        message = str(info.value)
        assert "\n" not in message
        assert name in message  # where: the source
        for m in e["match"]:
            assert m in message
        assert isinstance(info.value, ValueError)
    else:
        transcripts = tc.load_all(path)
        t = transcripts[0]
        assert t.format == e["format"] and len(t.messages) == e["messages"]
        for w in e.get("warning", []):
            assert any(w in x for x in t.warnings), t.warnings
        assert tc.dump(t) == data  # nothing altered
        if t.messages:
            result = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 0))
            again = tc.load_all(tc.dump(t, result.messages), name=name)[0]
            assert [m.content for m in again.messages] == [m.content for m in result.messages]
    assert path.read_bytes() == data


@pytest.mark.parametrize("name", NAMES)
def test_cli(bad_dir, name, capsys) -> None:
    import io

    out, err = io.BytesIO(), io.StringIO()
    code = cli_main(["inspect", str(bad_dir / name)], stdout=out, stderr=err)
    if EXPECTED[name]["outcome"] == "error":
        assert code == 2
        text = err.getvalue()
        assert text.count("\n") == 1 and text.startswith("toolclear: error: ")
        assert all(m in text for m in EXPECTED[name]["match"])
    else:
        assert code == 0, err.getvalue()
        # nothing but what the pricing assumed (a log that names no model), one line each
        assert all(line.startswith("toolclear: note: ") for line in err.getvalue().splitlines()), err.getvalue()


@pytest.mark.parametrize("name", ["truncated.json", "binary-junk.bin", "deep-nesting.json", "latin1.json",
                                  "integer-too-long.json", "almost-claude-code.jsonl"])
def test_cli_process_never_shows_a_traceback(bad_dir, name) -> None:
    done = subprocess.run([sys.executable, "-m", "toolclear", "reduce", str(bad_dir / name)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


@pytest.mark.parametrize("name", NAMES)
def test_app(bad_dir, name) -> None:
    e = EXPECTED[name]
    data = (bad_dir / name).read_bytes()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["sample"] = "none"
    at.run()
    at.file_uploader(key="upload").set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    if e["outcome"] == "error":
        assert len(at.error) == 1
        shown = _unescape(at.error[0].value)
        assert all(m in shown for m in e["match"]), shown
        # the app keeps working: a sample loads right after
        at.file_uploader(key="upload").clear().run()
        at.selectbox(key="sample").set_value("Coding agent (OpenAI Chat Completions)").run()
        assert not at.exception and not at.error
        assert {m.label for m in at.metric} >= {"Messages", "Changed at some call"}
    else:
        assert not at.error
        assert {m.label: m.value for m in at.metric}["Messages"] == f"{e['messages']:,}"
