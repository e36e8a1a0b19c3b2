"""AppTest: the policy picker, each policy's controls and views, and the Compare view."""

from __future__ import annotations

import json

import pytest

import toolclear as tc
from toolclear.inspector.controls import policy_choices
from toolclear.runs import lab, report

from ..conftest import CORPUS
from .test_app import FIRST_SAMPLE, metrics, show, start

KINDS = {
    "eino reduction middleware": "eino-reduction",
    "Anthropic context editing": "anthropic",
    "LangChain ClearToolUsesEdit": "langchain",
    "Observation masking (OpenHands)": "openhands",
    "Observation masking (SWE-agent)": "swe-agent",
}
KNOBS = {"eino-reduction": ("max_tokens_for_clear", 20_000), "anthropic": ("trigger_input_tokens", 20_000),
         "langchain": ("trigger", 20_000), "openhands": ("keep_last", 6), "swe-agent": ("keep_last", 3)}


def pick(at, label: str):
    at.selectbox(key="policy").set_value(label).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("label", list(KINDS))
@pytest.mark.parametrize("mode", ["single pass", "replay"])
def test_each_policy_shows_the_librarys_numbers(label: str, mode: str) -> None:
    at = pick(start(), label)
    kind = KINDS[label]
    field, value = KNOBS[kind]
    key = f"p_{kind.replace('-', '_')}_{field}_input"
    at.number_input(key=key).set_value(value).run()
    at.radio(key="mode").set_value(mode).run()
    assert not at.exception, at.exception
    t = tc.load(FIRST_SAMPLE)
    config = lab.parse_policy(f"{kind}:{field}={value}")
    if kind == "eino-reduction":
        backend = tc.MemoryBackend()
    else:
        backend = None
    result = (tc.replay if mode == "replay" else tc.apply)(t.messages, config, backend=backend)
    s = report.summary_dict(result)
    m = metrics(at)
    assert m["Changed at some call"] == f"{s['changed']:,}"
    assert m["History after"] == f"{s['tokens_after']:,}"
    if mode == "replay":
        assert m["Cache breaks"] == f"{s['cache_breaks']:,}"
    assert s["cleared"] > 0  # the settings above do something on the sample


EVERY = list(policy_choices())  # the picker's, from the registry: a new policy is tested here too


@pytest.mark.parametrize("label", EVERY)
def test_every_view_opens_for_every_policy(label: str) -> None:
    at = pick(start(), label)
    for view in ("Replay", "Messages", "Parameter sweep", "Compare", "Export", "Token usage"):
        show(at, view)
        assert not at.error, [e.value for e in at.error]


def test_defaults_button_restores_the_references_numbers() -> None:
    at = pick(start(), "Anthropic context editing")
    at.number_input(key="p_anthropic_keep_tool_uses_input").set_value(9).run()
    at.button(key="p_anthropic_defaults").click().run()
    assert at.number_input(key="p_anthropic_keep_tool_uses_input").value == 3
    assert at.number_input(key="p_anthropic_trigger_input_tokens_input").value == 100_000


def test_compare_view_tabulates_the_policies_it_is_given() -> None:
    at = show(start(), "Compare")
    specs = ["eino:threshold=10000,keep=20000", "anthropic:trigger=20000", "swe-agent:n=3"]
    at.text_area(key="compare_specs").set_value("\n".join(specs)).run()
    assert not at.exception and not at.error
    table = next(df.value for df in at.dataframe if "policy" in df.value.columns)
    t = tc.load(FIRST_SAMPLE)
    want = tc.compare(t.messages, [lab.parse_policy(s) for s in specs]).table
    assert list(table["policy"]) == list(want["policy"])
    assert list(table["tokens_sent"]) == list(want["tokens_sent"])
    assert list(table["cache_breaks"]) == list(want["cache_breaks"])


@pytest.mark.parametrize("text,message", [
    ("eino\nbogus:x=1", "line 2: unknown policy 'bogus'"),
    ("anthropic:keep=lots", "line 1: keep_tool_uses: expected a whole number"),
    ("\n".join(["eino"] * 6), "at most five"),
])
def test_compare_view_bad_specs_are_one_line_errors(text: str, message: str) -> None:
    at = show(start(), "Compare")
    at.text_area(key="compare_specs").set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1 and message in at.error[0].value.replace("\\", "")


def test_eino_reduction_overwrite_is_said_in_the_app() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    pick(at, "eino reduction middleware")
    at.number_input(key="p_eino_reduction_max_tokens_for_clear_input").set_value(10_000).run()
    at.radio(key="mode").set_value("replay").run()
    assert any("overwrote" in w.value for w in at.warning)


def test_policy_export_gives_the_frameworks_own_settings() -> None:
    at = pick(start(), "Anthropic context editing")
    at.number_input(key="p_anthropic_trigger_input_tokens_input").set_value(30_000).run()
    show(at, "Export")
    code = next(c.value for c in at.code if "context_management" in c.value)
    edit = json.loads(code)["context_management"]["edits"][0]
    assert edit["trigger"] == {"type": "input_tokens", "value": 30_000} and edit["keep"]["value"] == 3


def test_money_in_the_headline_replay_view_and_compare() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    assert at.selectbox(key="pricing").value == "claude-opus-4-5"  # the log's model picks the preset
    at.radio(key="mode").set_value("replay").run()
    at.number_input(key="p_eino_tool_result_token_threshold_input").set_value(10_000).run()
    at.number_input(key="p_eino_keep_recent_tokens_input").set_value(20_000).run()
    assert not at.exception, at.exception
    t = tc.load(path)
    rp = tc.replay(t.messages, tc.ClearToolResultConfig(10_000, 20_000), calibration=tc.runs.lab.sent_as(t.messages))
    c = tc.cost(rp, "claude-opus-4-5", calibrate=True, compactions=[k for k, _ in t.marks])
    m = metrics(at)
    assert m["With the policy"] == f"${c.dollars:,.2f}"
    assert m["Without it"] == f"${c.dollars_without_policy:,.2f}"
    assert at.metric[0].label == ("Verdict: costs more by" if c.dollars_saved < 0 else "Verdict: saves")
    show(at, "Replay")
    recorded = next(df.value for df in at.dataframe if "recorded" in df.value.columns)
    assert list(recorded[""]) == ["cache reads (tokens)", "cache writes (tokens)", "uncached input (tokens)",
                                  "input dollars"]
    assert abs(float(recorded["error"].iloc[-1].replace(" %", ""))) < 15
    show(at, "Compare")
    table = next(df.value for df in at.dataframe if "policy" in df.value.columns)
    assert "dollars" in table.columns and "dollars_saved" in table.columns


def test_no_pricing_hides_the_money() -> None:
    at = start()
    at.selectbox(key="pricing").set_value("(no pricing)").run()
    at.radio(key="mode").set_value("replay").run()
    assert "With the policy" not in metrics(at) and not any(k.startswith("Verdict") for k in metrics(at))


def test_sweep_colours_by_dollars_with_the_break_even_line() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.radio(key="mode").set_value("replay").run()
    show(at, "Parameter sweep")
    assert not at.exception and not at.error
    assert any("red cells cost more than doing nothing" in c.value for c in at.caption)


def test_a_model_no_preset_names_is_priced_from_the_price_library() -> None:
    """A Claude Code session of Claude 3.5 Haiku (no preset): the picker offers the log's
    model's own prices, from genai-prices, and the headline's dollars are the library's."""
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl"
    data = path.read_bytes().replace(b"claude-opus-4-5-20251101", b"claude-3-5-haiku-20241022")
    at = start()
    at.file_uploader(key="upload").set_value(("haiku.jsonl", data, "application/jsonl")).run()
    picked = at.selectbox(key="pricing").value
    assert picked.startswith("claude-3-5-haiku") and picked.endswith("(the log's model)"), picked
    assert any("genai" in c.value and "prices" in c.value for c in at.sidebar.caption)
    at.radio(key="mode").set_value("replay").run()
    assert not at.exception, at.exception
    t = tc.load(text=data.decode(), format="claude-code")
    rp = tc.replay(t.messages, tc.ClearToolResultConfig(), calibration=tc.runs.lab.sent_as(t.messages))
    c = tc.cost(rp, tc.pricing_for("claude-3-5-haiku-20241022"), calibrate=True, compactions=[k for k, _ in t.marks])
    assert c.pricing.input == 0.8  # Claude 3.5 Haiku's list price, not a similar-looking preset's
    assert metrics(at)["Without it"] == f"${c.dollars_without_policy:,.2f}"


def test_the_run_as_recorded_lists_its_compactions_and_what_each_dropped() -> None:
    """A compacted Claude Code session under "As recorded": the Replay view lists the
    compaction as the log records it and, picked, the results it dropped with the ones
    later calls needed, the same as the library's."""
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.radio(key="mode").set_value("replay").run()
    pick(at, "As recorded (the agent's own compactions)")
    show(at, "Replay")
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    t = tc.load(path)
    rp = tc.recorded(t, calibration=lab.sent_as(t.messages))
    (c,) = rp.compactions
    lost = tc.losses(rp)
    table = next(df.value for df in at.dataframe if "tokens before" in df.value.columns)
    row = table.iloc[0]
    assert (row["at call"], row["trigger"], row["tokens before"]) == (c.at, "auto", c.tokens_before)
    assert row["needed later"] == len(set(c.dropped) & set(lost.needed))
    dropped = next(df.value for df in at.dataframe if "needed by calls" in df.value.columns)
    assert len(dropped) == sum(1 for i in c.dropped if t.messages[i].role == "tool")
    results = {i for i in c.dropped if t.messages[i].role == "tool"}
    assert set(dropped[dropped["needed later"] == "yes"]["message"]) == results & set(lost.needed)


@pytest.mark.parametrize("label", ["LangChain SummarizationMiddleware", "Claude Code auto-compact"])
def test_a_compaction_policy_is_tuned_with_its_sliders_and_shows_its_compactions(label: str) -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.radio(key="mode").set_value("replay").run()
    pick(at, label)
    kind = "langchain-summarization" if "LangChain" in label else "claude-code-compact"
    if kind == "claude-code-compact":
        at.number_input(key="p_claude_code_compact_trigger_tokens_input").set_value(100_000).run()
    show(at, "Replay")
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert any("tokens before" in df.value.columns for df in at.dataframe)


def test_langchains_summarization_takes_its_trigger_in_langchains_own_form() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.radio(key="mode").set_value("replay").run()
    pick(at, "LangChain SummarizationMiddleware")
    box = at.text_input(key="p_langchain_summarization_opt_trigger")
    assert json.loads(box.value) == ["tokens", 100000]
    box.set_value('{"tokens": 30000, "messages": 40}').run()
    show(at, "Replay")
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    t = tc.load(path)
    want = tc.replay(t.messages, tc.parse_policy('langchain-summarization:trigger={"tokens":30000,"messages":40}'),
                     calibration=lab.sent_as(t.messages))
    table = next(df.value for df in at.dataframe if "tokens before" in df.value.columns)
    assert list(table["at call"]) == [c.at for c in want.compactions]
    at.text_input(key="p_langchain_summarization_opt_trigger").set_value("{tokens: 3").run()
    assert any("not JSON" in e.value for e in at.error) and not at.exception


def test_a_plugin_policy_takes_the_same_road_as_a_built_in_one() -> None:
    """A policy registered by one line gets the picker entry, its sliders, every view and
    a sweep whose cells are the library's ``sweep`` (which is ``compare``'s rows)."""
    from toolclear.policies import register, unregister
    from toolclear.runs.sweep import sweep

    from ..policies import toy_policy

    spec = register(toy_policy.SPEC)
    try:
        at = pick(start(), spec.presets[0].label)
        at.number_input(key="p_drop_long_limit_input").set_value(150).run()
        t = tc.load(FIRST_SAMPLE)
        config = toy_policy.DropLongConfig(limit=150)
        expect = tc.apply(t.messages, config)
        assert metrics(at)["Changed at some call"] == f"{len(expect.cleared_indices):,}"
        for view in ("Replay", "Messages", "Compare", "Export", "Token usage"):
            show(at, view)
            assert not at.error, (view, [e.value for e in at.error])
        show(at, "Parameter sweep")
        assert not at.error and len(at.get("plotly_chart")) == 2
        heat = at.get("plotly_chart")[0].proto.spec
        grid = json.loads(heat)["data"][0]
        sw = sweep(t.messages, config, grid["y"], grid["x"])
        assert grid["z"] == [list(row) for row in sw.tokens_saved]
    finally:
        unregister(spec.name)
