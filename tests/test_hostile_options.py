"""Option parsing under attack: every odd value is one line and exit 2, never an
internal error; an option the user gave is never silently overridden."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolclear as tc

from .cli.test_cli import run
from .conftest import CORPUS

RUN = next((CORPUS / "eino").glob("*.jsonl"))
DEEP = "[" * 5000


@pytest.mark.parametrize("args,message", [
    (["--policy", "anthropic:trigger=none"], "trigger_input_tokens: expected a whole number >= 0"),
    (["--policy", "anthropic:keep=none"], "keep_tool_uses: expected a whole number >= 0"),
    (["--policy", "langchain:keep=-1"], "keep: expected a whole number >= 0"),
    (["--policy", "langchain:trigger=many"], "trigger: expected a whole number"),
    (["--policy", "eino-reduction:threshold=1.5,skip_truncation=true"], "max_tokens_for_clear: expected a whole"),
    (["--policy", "eino:counter=bogus"], "unknown token counter 'bogus'"),
    (["--policy", f"eino:placeholder={DEEP}"], "placeholder: JSON nested too deeply"),
    (["--policy", f"anthropic:exclude={DEEP}"], "exclude_tools: JSON nested too deeply"),
    (["--pricing", "claude-sonnet-4-5", "--overhead", "9" * 30], "expected a number up to"),
    (["--pricing", "claude-sonnet-4-5", "--price-input", "1e308"], "from 0 to 100,000"),
    (["--pricing", "claude-sonnet-4-5", "--price-output", "nan"], "from 0 to 100,000"),
])
def test_odd_options_are_one_line_and_exit_2(tmp_path, args, message) -> None:
    code, _, err = run("reduce", str(RUN), *args, "-o", str(tmp_path / "o.jsonl"))
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "o.jsonl").exists()


def test_negative_limits_are_taken_as_the_references_take_them() -> None:
    """eino's reduction reads a negative limit in its own ways (its recorded vectors hold
    them) and LangChain takes a negative trigger as always firing: both are kept."""
    assert tc.EinoReductionConfig(max_tokens_for_clear=-1).max_tokens_for_clear == -1
    assert tc.LangChainClearToolUsesConfig(trigger=-5).trigger == -5


def test_the_policys_own_counter_is_not_overridden_by_the_default(tmp_path) -> None:
    out = tmp_path / "r.json"
    code, _, err = run("reduce", str(RUN), "--policy", "eino:counter=cl100k_base,threshold=1,keep=1", "--report",
                       str(out), "-o", str(tmp_path / "o.jsonl"))
    assert code == 0, err
    assert '"token_counter": "cl100k_base"' in out.read_text()


def test_pricing_refuses_numbers_that_would_overflow() -> None:
    with pytest.raises(tc.ConfigError, match="from 0 to 100,000"):
        tc.Pricing(input=1e308, output=1.0)
    with pytest.raises(tc.ConfigError, match="overhead_tokens"):
        tc.Pricing(input=1.0, output=1.0, overhead_tokens=10**30)


# ---- round 5: messages that say what is wrong and where


def _cli(*args: str) -> tuple[int, str]:
    import io

    from toolclear.cli import main

    err = io.StringIO()
    code = main(list(args), stdout=io.BytesIO(), stderr=err)
    return code, err.getvalue()


SAMPLE_5 = Path(__file__).resolve().parents[1] / "sample_data" / "coding-agent.openai.json"


@pytest.mark.parametrize("text, said", [
    ('interactions:\n- request:\n    body: "\\uD800"\n', "YAML that cannot be read (line 3"),
    ('{"messages": null}', "$.messages is null; expected a list of messages there"),
    ('{"messages": 5}', "$.messages is a number; expected a list of messages there"),
    ('[{"role":"user","content":"a\x00b"}]', "a raw control character (U+0000) inside a string"),
], ids=["yaml lone surrogate", "messages null", "messages number", "NUL byte"])
def test_a_bad_file_is_named_for_what_it_is(tmp_path, text, said) -> None:
    path = tmp_path / ("f.yaml" if text.startswith("interactions") else "f.json")
    path.write_text(text)
    code, err = _cli("inspect", str(path))
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_output_and_offload_options_say_what_is_wrong(tmp_path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for args, said in (
        (["-o", ""], "-o '': give a file name"),
        (["--report", "", "-o", str(tmp_path / "o.json")], "--report '': give a file name"),
        (["--offload-dir", str(a_file)], "not a folder"),
        (["--offload-dir", "/dev/null"], "not a folder"),
        (["--offload-dir", ""], "--offload-dir '': give the folder"),
    ):
        code, err = _cli("reduce", str(SAMPLE_5), *args)
        assert code == 2 and said in err, (args, err)
    blocked = tmp_path / "off"
    blocked.mkdir()
    (blocked / "large_tool_result").write_text("a file where the folder of offloads goes")
    code, err = _cli("reduce", str(SAMPLE_5), "--offload-dir", str(blocked), "--offload-limit", "10", "-o",
                     str(tmp_path / "o.json"))
    assert code == 0 and "offload write(s) failed" in err and "(the first: " in err, err


def test_a_grid_from_a_to_b_and_a_bad_scheduler_address() -> None:
    code, err = _cli("corpus", str(SAMPLE_5), "--threshold", "5:4:3")
    assert code == 2 and "A <= B" in err
    code, err = _cli("corpus", str(SAMPLE_5), "--engine", "dask", "--scheduler", "tcp://[::1")
    assert code == 2 and "cannot connect: ValueError" in err and "within" not in err


def test_an_output_through_a_link_writes_the_file_it_points_to(tmp_path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, err = _cli("reduce", str(SAMPLE_5), "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real  # the link stays a link
    assert tc.load(real).format == "openai" and "wrote" in err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".toolclear-")]


def test_an_output_never_carries_a_setuid_bit(tmp_path) -> None:
    import os
    import stat

    out = tmp_path / "tool"
    out.write_text("old")
    os.chmod(out, 0o4755 | stat.S_ISGID)
    code, err = _cli("reduce", str(SAMPLE_5), "-o", str(out))
    assert code == 0, err
    mode = stat.S_IMODE(out.stat().st_mode)
    assert mode == 0o755 and not mode & (stat.S_ISUID | stat.S_ISGID)


BEDROCK_CONVERSE = """interactions:
- request:
    body: '{"messages": [{"role": "user", "content": [{"text": "list files"}]}, {"role": "assistant", "content":
      [{"toolUse": {"toolUseId": "t1", "name": "ls", "input": {}}}]}, {"role": "user", "content": [{"toolResult":
      {"toolUseId": "t1", "content": [{"text": "a b c"}], "status": "success"}}]}], "system": [{"text": "Be
      brief."}], "toolConfig": {"tools": [{"toolSpec": {"name": "ls", "inputSchema": {"json": {}}}}]}}'
    headers: {}
    method: POST
    uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse
  response:
    body: {string: '{}'}
    status: {code: 200, message: OK}
version: 1
"""


@pytest.mark.parametrize("fmt", ["auto", "anthropic", "openai"])
def test_a_bedrock_converse_cassette_is_refused_never_read_empty(tmp_path, fmt) -> None:
    path = tmp_path / "bedrock.yaml"
    path.write_text(BEDROCK_CONVERSE)
    code, err = _cli("inspect", str(path), "--format", fmt)
    assert code == 2 and "a Bedrock Converse request (toolUse / toolResult content blocks)" in err, err
    assert err.count("\n") == 1
