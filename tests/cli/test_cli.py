"""The toolclear command: reduce, inspect, formats, counters; one-line errors with status 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

import toolclear as tc
from toolclear.cli import main

from ..conftest import CORPUS, ROOT, SAMPLES

SAMPLE = SAMPLES / "coding-agent.openai.json"


def run(*args: str, stdin: bytes | None = None) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    if stdin is not None:
        real = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
        try:
            code = main(list(args), stdout=out, stderr=err)
        finally:
            sys.stdin = real
    else:
        code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_reduce_writes_the_input_format_to_stdout() -> None:
    code, out, err = run("reduce", str(SAMPLE))
    assert code == 0 and err == ""
    t = tc.load(SAMPLE)
    expected = tc.reduce_by_tokens(t.messages)
    again = tc.load(out)
    assert again.format == "openai"
    assert [m.content for m in again.messages] == [m.content for m in expected.messages]
    assert expected.cleared_indices


def test_reduce_with_every_option_and_a_report(tmp_path) -> None:
    out_file, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    src = SAMPLES / "coding-agent.eino.jsonl"
    code, out, err = run("reduce", str(src), "-o", str(out_file), "--threshold", "5000", "--keep", "8000",
                         "--placeholder", "[gone]", "--exclude", "grep", "--exclude", "list_dir",
                         "--counter", "cl100k_base", "--report", str(report))
    assert code == 0 and out == b""
    assert "cleared" in err and str(out_file) in err
    config = tc.ClearToolResultConfig(5000, 8000, "[gone]", ("grep", "list_dir"), "cl100k_base")
    t = tc.load(src)
    expected = tc.reduce_by_tokens(t.messages, config)
    assert out_file.read_bytes() == tc.dump(t, expected.messages)
    rep = json.loads(report.read_text())
    assert rep["settings"]["exclude_tools"] == ["grep", "list_dir"]
    assert rep["settings"]["token_counter"] == "cl100k_base"
    assert rep["summary"]["cleared_indices"] == list(expected.cleared_indices)
    assert rep["summary"]["tokens_after"] == expected.tokens_after
    assert [r["status"] for r in rep["messages"]] == [str(s) for s in expected.statuses]
    assert all(r["status"] != "cleared" for r in rep["messages"] if r["tool_name"] in ("grep", "list_dir"))


def test_reduce_replay_from_stdin() -> None:
    data = SAMPLE.read_bytes()
    code, out, err = run("reduce", "-", "--replay", stdin=data)
    assert code == 0
    expected = tc.replay(tc.load(data).messages)
    assert [m.content for m in tc.load(out).messages] == [m.content for m in expected.messages]


def test_reduce_every_conversation_of_a_container(tmp_path) -> None:
    path = CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"
    out = tmp_path / "tau.json"
    code, _, _ = run("reduce", str(path), "--threshold", "200", "--keep", "300", "-o", str(out))
    assert code == 0
    before, after = tc.load_all(path), tc.load_all(out)
    assert len(after) == 200
    changed = sum(a.messages != b.messages for a, b in zip(before, after))
    assert changed > 100
    code, _, _ = run("reduce", str(path), "--conversation", "task_id=3, trial=0", "--threshold", "200",
                     "--keep", "300", "-o", str(out))
    assert code == 0
    after = tc.load_all(out)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a.messages != b.messages] == [3]


def test_reduce_with_offloading_writes_files(tmp_path) -> None:
    out, folder, report = tmp_path / "o.json", tmp_path / "offloaded", tmp_path / "r.json"
    code, _, err = run("reduce", str(SAMPLE), "--offload-dir", str(folder), "--offload-limit", "1000",
                       "--read-tool", "cat_file", "-o", str(out), "--report", str(report))
    assert code == 0, err
    rep = json.loads(report.read_text())
    paths = [r["offloaded_path"] for r in rep["messages"] if r["offloaded_path"]]
    assert paths and rep["summary"]["offloaded"] == len(paths)
    t = tc.load(SAMPLE)
    # the notice and the report name the virtual path, as eino and the app do, never this machine's folder
    assert all(p.startswith("/large_tool_result/") for p in paths)
    files = [folder / p.lstrip("/") for p in paths]
    assert all(f.is_file() for f in files)
    contents = {m.content for m in t.messages if m.role == "tool"}
    assert {f.read_text(encoding="utf-8") for f in files} <= contents
    text = out.read_text()
    assert str(folder) not in text and str(tmp_path) not in text
    assert "'cat_file' tool" in text or "[Old tool result content cleared]" in text


def test_inspect_summarises() -> None:
    code, out, err = run("inspect", str(SAMPLE))
    text = out.decode()
    # the sample names no model: priced at the stated default, said once on stderr
    assert code == 0 and err == "toolclear: note: the log names no model: priced at claude-sonnet-4-5 " \
        "(toolclear's default)\n"
    assert text.index("verdict (claude-sonnet-4-5, prompt cache counted): eino") < text.index("tool results:")
    assert "openai, 1 conversation(s)" in text and "read_file" in text
    summary = tc.reduce_by_tokens(tc.load(SAMPLE).messages)
    assert f"clears {len(summary.cleared_indices)} result(s)" in text
    assert "prompt-cache break" in text


def test_inspect_says_when_clearing_grows_the_context(tmp_path) -> None:
    """Results shorter than the placeholder: clearing them makes the context larger, said
    as a rise, not as "--195.56%"."""
    lines = []
    for i in range(300):
        lines += [{"role": "assistant", "tool_calls": [{"id": f"c{i}", "function": {"name": "ls"}}]},
                  {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    code, out, _ = run("inspect", str(path), "--threshold", "100", "--keep", "50")
    text = out.decode()
    assert code == 0 and "--" not in text.split("single pass:")[1].split("\n")[0]
    assert "%, the placeholders are longer)" in text and "(+" in text


def test_inspect_with_tiktoken_counter_on_a_container() -> None:
    path = CORPUS / "openhands" / "openhands_multi-swe-bench_example_output.jsonl"
    code, out, _ = run("inspect", str(path), "--counter", "cl100k_base")
    assert code == 0 and b"3 conversation(s)" in out and b"tokens (cl100k_base)" in out


def test_formats_and_counters_commands() -> None:
    code, out, _ = run("formats")
    assert code == 0 and all(f.name.encode() in out for f in tc.list_formats())
    code, out, _ = run("counters")
    assert code == 0 and b"eino" in out and b"cl100k_base" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["reduce", "missing.json"], "missing.json: no such file"),
        (["reduce", str(SAMPLE), "--threshold", "-1"], "--threshold"),
        (["reduce", str(SAMPLE), "--threshold", "lots"], "expected a whole number"),
        (["reduce", str(SAMPLE), "--counter", "nope"], "unknown token counter 'nope'"),
        (["reduce", str(SAMPLE), "--format", "nope"], "unknown format 'nope'"),
        (["reduce", str(SAMPLE), "--conversation", "x"], "no conversation with id 'x'"),
        (["reduce"], "the following arguments are required: INPUT"),
        (["frobnicate"], "invalid choice"),
        (["reduce", str(CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"),
          "-o", "/nonexistent-dir/x.json"], "cannot write /nonexistent-dir/x.json"),
    ],
)
def test_errors_are_one_line_with_status_2(args, message) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("toolclear: error: ")
    assert message in err
    assert "Traceback" not in err


def test_help_has_an_example_for_every_command() -> None:
    for command in ("reduce", "inspect", "formats", "counters"):
        done = subprocess.run([sys.executable, "-m", "toolclear", command, "--help"], capture_output=True,
                              text=True, cwd=ROOT)
        assert done.returncode == 0
        assert "example" in done.stdout and f"toolclear {command}" in done.stdout.split("example")[1]


def test_console_script_runs() -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "toolclear")
    done = subprocess.run([exe, "inspect", str(SAMPLE)], capture_output=True, text=True)
    assert done.returncode == 0 and "read_file" in done.stdout
    done = subprocess.run([exe, "reduce", str(SAMPLES / "make_samples.py")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_offloading_pipeline_through_the_cli_on_a_real_corpus_file(tmp_path) -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
    out, folder = tmp_path / "reduced.jsonl", tmp_path / "off"
    code, _, err = run("reduce", str(path), "--replay", "--offload-dir", str(folder), "--offload-limit", "400",
                       "--threshold", "5000", "--keep", "20000", "-o", str(out))
    assert code == 0, err
    t = tc.load(path)
    expected = tc.replay(t.messages, tc.ClearToolResultConfig(5000, 20000),
                         offloading=tc.ToolResultOffloadingConfig(offloading_token_limit=400),
                         backend=tc.MemoryBackend())
    reduced = tc.load(out)
    notices = [m for m in reduced.messages if m.content.startswith("Tool result too large")]
    kept_offloaded = [i for i, s in enumerate(expected.statuses) if s is tc.MessageStatus.OFFLOADED]
    assert len(notices) == len(kept_offloaded) > 0
    cleared = [m for m in reduced.messages if m.role == "tool" and m.content == tc.DEFAULT_PLACEHOLDER]
    assert len(cleared) == len(expected.cleared_indices) > 0  # offloaded first, then cleared
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert len(files) == sum(1 for r in expected.offloads if r is not None and r.offloaded)
    for m in notices:
        where = m.content.split("at this path: ", 1)[1].split("\n", 1)[0]
        assert where.startswith("/large_tool_result/")  # the virtual path, as in the app
        assert (folder / where.lstrip("/")).read_text(encoding="utf-8") == t.messages[reduced.messages.index(m)].content


def test_inspect_takes_threshold_and_keep() -> None:
    out = io.BytesIO()
    assert main(["inspect", str(SAMPLE), "--threshold", "100", "--keep", "200"], stdout=out,
                stderr=io.StringIO()) == 0
    text = out.getvalue().decode()
    r = tc.reduce_by_tokens(tc.load(SAMPLE).messages, tc.ClearToolResultConfig(100, 200))
    assert "eino 100/200:" in text
    assert f"single pass: clears {len(r.cleared_indices)} result(s)" in text


@pytest.mark.parametrize("command", [["inspect"], ["compare"], ["reduce", "--policy", "anthropic:trigger=1000"],
                                     ["report"]])
def test_a_command_freezes_what_it_loads_and_gives_it_back(command: list[str], monkeypatch) -> None:
    """A command freezes the loaded objects out of the collector while it runs (each
    replay's allocations would otherwise make it walk them again) and unfreezes them
    when it ends, even on an error, so a caller's process is left as it was."""
    import gc

    seen: list[int] = []
    real = gc.freeze

    def freeze() -> None:
        real()
        seen.append(gc.get_freeze_count())
    monkeypatch.setattr(gc, "freeze", freeze)
    out, err = io.BytesIO(), io.StringIO()
    assert main([command[0], str(SAMPLES / "coding-agent.openai.json"), *command[1:]], stdout=out, stderr=err) == 0, \
        err.getvalue()
    assert seen and seen[0] > 1000 and gc.get_freeze_count() == 0
    assert main(["inspect", str(SAMPLES / "coding-agent.openai.json"), "--policy", "nope"], stdout=out,
                stderr=err) == 2 and gc.get_freeze_count() == 0


def test_toolclear_app_runs_streamlit_with_the_repository_settings() -> None:
    """An installed toolclear has no .streamlit/config.toml: `toolclear app` passes each of
    its settings on the command line (postScriptGC off: a full collection after every
    rerun was ~100 ms of a slider move on a long run)."""
    import tomllib

    from toolclear.cli.info import app_command

    from ..conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    wanted = {f"--{section}.{key}={str(value).lower() if isinstance(value, bool) else value}"
              for section, options in config.items() for key, value in options.items()
              if (section, key) not in {("server", "headless")}}  # `toolclear app --headless` decides that one
    assert "--runner.postScriptGC=false" in wanted
    assert wanted <= set(app_command(None))
