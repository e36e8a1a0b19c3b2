"""The CLI's --policy and 'toolclear compare': the same numbers as the library."""

from __future__ import annotations

import json

import pytest

import toolclear as tc
from toolclear.runs.lab import parse_policy

from ..conftest import CORPUS
from ..policies.test_all_policies import as_written
from .test_cli import run

RUN = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
MULTI = CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"


@pytest.mark.parametrize("spec", ["eino:threshold=10000,keep=20000", "anthropic:trigger=20000,keep=5",
                                  "langchain:trigger=20000,keep=2,exclude=Bash", "swe-agent:n=3,polling=2",
                                  "openhands:attention_window=8", "eino-reduction:threshold=20000,skip_truncation=true"])
@pytest.mark.parametrize("replay", [False, True])
def test_reduce_with_each_policy_writes_what_the_library_gives(tmp_path, spec, replay) -> None:
    out = tmp_path / "out.jsonl"
    code, _, err = run("reduce", str(RUN), "--policy", spec, "-o", str(out), *(["--replay"] if replay else []))
    assert code == 0, err
    t = tc.load(RUN)
    config = parse_policy(spec)
    want = (tc.replay if replay else tc.apply)(t.messages, config)
    assert [m.content for m in tc.load(out).messages] == [as_written(o, m) for o, m in zip(t.messages, want.messages)]
    assert f"{len(want.cleared_indices)} " in err


def test_threshold_and_keep_map_onto_each_policy() -> None:
    assert parse_policy("anthropic", threshold=5, keep=2) == tc.AnthropicClearToolUsesConfig(5, keep_tool_uses=2)
    assert parse_policy("langchain", threshold=5, keep=2) == tc.LangChainClearToolUsesConfig(trigger=5, keep=2)
    assert parse_policy("eino-reduction", threshold=5, keep=2).clear_retention_suffix_limit == 2
    assert parse_policy("swe-agent:n=7") == tc.ObservationMaskingConfig.swe_agent(7)
    assert parse_policy("anthropic:clear_tool_inputs=grep|bash").clear_tool_inputs == ("grep", "bash")
    assert parse_policy('eino-reduction:tool_config={"a": {"skip_clear": true}},skip_truncation=yes').tool_config == {
        "a": {"skip_clear": True}}


def test_compare_prints_the_librarys_table() -> None:
    code, out, err = run("compare", str(RUN), "--policy", "eino:threshold=10000,keep=20000",
                         "--policy", "anthropic:trigger=20000", "--policy", "swe-agent")
    assert code == 0, err
    text = out.decode()
    t = tc.load(RUN)
    table = tc.compare(t.messages, [parse_policy("eino:threshold=10000,keep=20000"),
                                    parse_policy("anthropic:trigger=20000"), parse_policy("swe-agent")]).table
    for row in table.itertuples(index=False):
        line = next(x for x in text.splitlines() if x.startswith(row.policy))
        assert f"{row.tokens_sent:,}" in line and f"{row.peak_context:,}" in line
        assert line.split()[-1] == f"{row.cache_breaks:,}"


def test_compare_json_every_policy_by_default_on_every_conversation() -> None:
    code, out, err = run("compare", str(MULTI), "--json", "--single-pass")
    assert code == 0, err
    docs = json.loads(out)
    runs = tc.load_all(MULTI)
    assert [d["conversation"] for d in docs] == [t.id for t in runs]
    assert [p["kind"] for p in docs[0]["policies"]] == ["eino", "eino-reduction", "anthropic", "langchain",
                                                         "masking", "masking"]
    assert all(d["mode"] == "single pass" for d in docs)


@pytest.mark.parametrize("args,message", [
    (["--policy", "bogus"], "unknown policy 'bogus'"),
    (["--policy", "anthropic:kep=3"], "unknown option 'kep'"),
    (["--policy", "langchain:keep=many"], "keep: expected a whole number"),
    (["--policy", "eino-reduction"], "give --offload-dir DIR"),
    (["--policy", "masking", "--offload-dir", "x"], "saves no files"),
])
def test_bad_policy_is_one_line_and_exit_2(tmp_path, args, message) -> None:
    code, _, err = run("reduce", str(RUN), *args, "-o", str(tmp_path / "o.jsonl"))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "o.jsonl").exists()


def test_eino_reduction_saves_its_files_and_says_when_it_overwrites_them(tmp_path) -> None:
    out, saved = tmp_path / "o.jsonl", tmp_path / "saved"
    code, _, err = run("reduce", str(RUN), "--policy", "eino-reduction:threshold=10000,max_length_for_trunc=4000",
                       "--offload-dir", str(saved), "--replay", "-o", str(out))
    assert code == 0, err
    names = [p.relative_to(saved).as_posix() for p in saved.rglob("*") if p.is_file()]
    assert any(n.startswith("tmp/trunc+") for n in names) and any(n.startswith("tmp/clear+") for n in names)
    assert "note: eino overwrote" in err


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ..conftest import hypothesis_examples  # noqa: E402

_names = st.lists(st.text(min_size=0, max_size=12), max_size=3).map(tuple)
_configs = st.one_of(
    st.builds(tc.ClearToolResultConfig, st.integers(0, 10**6), st.integers(0, 10**6), st.text(max_size=20), _names),
    st.builds(tc.AnthropicClearToolUsesConfig, st.integers(0, 10**6), st.one_of(st.none(), st.integers(0, 99)),
              st.integers(0, 50), st.one_of(st.none(), st.integers(0, 10**5)), _names,
              st.one_of(st.booleans(), st.lists(st.text(min_size=1, max_size=8).filter(
                  lambda s: s.lower() not in ("true", "false", "yes", "no", "1", "0", "on", "off", "none")),
                  min_size=1, max_size=2).map(tuple)), st.text(max_size=10)),
    st.builds(tc.LangChainClearToolUsesConfig, st.integers(-5, 10**6), st.integers(0, 10**5), st.integers(0, 50),
              st.booleans(), _names, st.text(max_size=20)),
    st.builds(tc.ObservationMaskingConfig, st.integers(0, 100), st.text(max_size=20), st.integers(1, 9),
              st.booleans(), st.sampled_from(["results", "messages"])),
    st.builds(tc.EinoReductionConfig, st.integers(-10, 10**6), st.integers(-3, 9), st.integers(0, 10**5), _names),
)


@settings(max_examples=hypothesis_examples(300), deadline=None)
@given(_configs)
def test_hyp_policy_spec_reads_back_to_the_same_config(config) -> None:
    """What the app's Compare view, exports and CLI snippets write, parse_policy reads back."""
    assert parse_policy(tc.runs.lab.policy_spec(config)) == config


def test_prices_lists_every_preset_with_its_page() -> None:
    code, out, _ = run("prices")
    text = out.decode()
    assert code == 0
    for name, p in tc.PRICING.items():
        line = next(x for x in text.splitlines() if x.startswith(name + " "))
        assert p.source in line and p.as_of in line
