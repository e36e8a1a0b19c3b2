"""AppTest: every control changes the numbers to what the core computes for those settings."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import toolclear as tc
from toolclear.runs import report

from ..conftest import CORPUS, ROOT, SAMPLES

APP = str(ROOT / "app.py")
FIRST_SAMPLE = SAMPLES / "coding-agent.eino.jsonl"
TH, KEEP = "p_eino_tool_result_token_threshold", "p_eino_keep_recent_tokens"  # eino's two sliders


def start(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


PAGES = {"One run": "toolclear/inspector/routes/one_run.py", "Corpus": "toolclear/inspector/routes/corpus.py"}
"""The inspector's pages as ``st.navigation`` registers them (relative to app.py)."""


def go(at: AppTest, page: str) -> AppTest:
    """Open one of the app's pages, as its link in the sidebar's navigation does."""
    at.switch_page(PAGES[page]).run()
    assert not at.exception, at.exception
    return at


def page_of(at: AppTest) -> str:
    """The page on screen: the Corpus page is the one with the multi-file uploader."""
    try:
        at.file_uploader(key="corpus_files")
    except KeyError:
        return "One run"
    return "Corpus"


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def show(at: AppTest, view: str) -> AppTest:
    """Open one of the app's tabs (only the open tab's content runs)."""
    at.session_state["view"] = view
    at.run()
    assert not at.exception, at.exception
    return at


def table(at: AppTest):
    if not any("preview" in df.value.columns for df in at.dataframe):
        show(at, "Messages")
    return next(df.value for df in at.dataframe if "preview" in df.value.columns)


def expect_numbers(at: AppTest, result, transcript: tc.Transcript) -> None:
    """The headline metrics and the table equal the core's result."""
    s = report.summary_dict(result)
    m = metrics(at)
    assert m["Messages"] == f"{s['messages']:,}"
    assert m["Tool results"] == f"{s['tool_results']:,}"
    assert m["History before"] == f"{s['tokens_before']:,}"
    assert m["History after"] == f"{s['tokens_after']:,}"
    assert m["Saved in history"] == f"{s['tokens_saved']:,}"
    assert m["Changed at some call"] == f"{s['changed']:,}"
    if s["mode"] == "replay":
        assert m["Cache breaks"] == f"{s['cache_breaks']:,}"
        assert m["Saved, all calls"] == f"{s['tokens_sent_unreduced'] - s['tokens_sent']:,}"
    df = table(at)
    rows = report.message_rows(result, transcript)
    assert df["status"].tolist() == [r["status"] for r in rows]
    assert df["tokens_after"].tolist() == [r["tokens_after"] for r in rows]
    assert df["in_window"].tolist() == [r["in_window"] for r in rows]


@pytest.fixture(scope="module")
def sample() -> tc.Transcript:
    return tc.load(FIRST_SAMPLE)


def _length(xs: object) -> int:
    """The points of a plotly array as it is sent: a list, or typed (base64 of its bytes)."""
    if isinstance(xs, dict):
        return len(base64.b64decode(xs["bdata"])) // np.dtype(xs["dtype"]).itemsize
    return len(xs)  # type: ignore[arg-type]


def test_opens_on_the_sample_with_the_policy_at_work(sample) -> None:
    at = start()
    result = tc.reduce_by_tokens(sample.messages)
    assert result.cleared_indices  # the first screen already shows clearing
    # the token-usage chart is one SVG (no plotly.js to wait for); other tabs run when opened
    assert not at.get("plotly_chart") and len(at.get("image")) == 1
    at.toggle(key="usage_zoom").set_value(True).run()  # zoomable on request: the plotly figure, its bars per status
    [fig] = at.get("plotly_chart")
    shown = {d["name"]: _length(d["x"]) for d in json.loads(fig.proto.spec)["data"] if d.get("type") == "bar"}
    assert shown.get("cleared") == len(result.cleared_indices) and sum(shown.values()) == len(sample.messages)
    at.toggle(key="usage_zoom").set_value(False).run()
    expect_numbers(at, result, sample)
    assert not at.error
    # the verdict first: the sample names no model, so it is priced at the stated default
    assert at.metric[0].label.startswith("Verdict: ") and at.selectbox(key="pricing").value == "claude-sonnet-4-5"
    show(at, "Replay")  # the context per call, and the dollars per call
    assert len(at.get("plotly_chart")) == 2 and any(m.label == "Prompt-cache breaks" for m in at.metric)
    show(at, "Parameter sweep")
    assert len(at.get("plotly_chart")) == 2


def test_threshold_slider_and_input(sample) -> None:
    at = start()
    at.slider(key=TH + "_slider").set_value(60000).run()
    assert at.number_input(key=TH + "_input").value == 60000
    expect_numbers(at, tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(60000)), sample)
    assert metrics(at)["Changed at some call"] == "0"
    at.number_input(key=TH + "_input").set_value(123).run()
    assert at.slider(key=TH + "_slider").value == 123
    expect_numbers(at, tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(123)), sample)


def test_keep_slider_and_input(sample) -> None:
    at = start()
    at.slider(key=KEEP + "_slider").set_value(10000).run()
    result = tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(keep_recent_tokens=10000))
    expect_numbers(at, result, sample)
    assert at.number_input(key=KEEP + "_input").value == 10000
    at.number_input(key=KEEP + "_input").set_value(0).run()
    expect_numbers(at, tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(keep_recent_tokens=0)), sample)


def test_eino_defaults_button(sample) -> None:
    at = start()
    at.slider(key=KEEP + "_slider").set_value(5000).run()
    at.slider(key=TH + "_slider").set_value(1000).run()
    at.button(key="p_eino_defaults").click().run()
    assert (at.number_input(key=TH + "_input").value, at.number_input(key=KEEP + "_input").value) == (20000, 40000)
    assert (at.slider(key=TH + "_slider").value, at.slider(key=KEEP + "_slider").value) == (20000, 40000)
    expect_numbers(at, tc.reduce_by_tokens(sample.messages), sample)


def test_counter_select_uses_tiktoken(sample) -> None:
    at = start()
    options = at.selectbox(key="counter").options
    assert any("cl100k_base" in o for o in options) and any("eino" in o for o in options)
    at.selectbox(key="counter").set_value("cl100k_base").run()
    result = tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(token_counter="cl100k_base"))
    expect_numbers(at, result, sample)
    assert metrics(at)["History before"] != f"{sum(tc.count_tokens(sample.messages)):,}"


def test_unavailable_counter_says_why(sample) -> None:
    infos = [c for c in tc.list_counters() if not c.available]
    if not infos:
        pytest.skip("every tiktoken encoding is available on this machine")
    at = start()
    at.selectbox(key="counter").set_value(infos[0].name).run()
    assert any("not available here" in w.value for w in at.sidebar.warning)
    expect_numbers(at, tc.reduce_by_tokens(sample.messages), sample)


def test_exclusions_multiselect(sample) -> None:
    at = start()
    ms = at.multiselect(key="p_eino_opt_exclude")
    names = {m.tool_name for m in sample.messages if m.role == "tool"}
    assert {o.split(" (")[0] for o in ms.options} == names
    assert f"read_file ({sum(1 for m in sample.messages if m.tool_name == 'read_file')} results)" in ms.options
    ms.set_value(["read_file", "run_tests"]).run()
    config = tc.ClearToolResultConfig(exclude_tools=("read_file", "run_tests"))
    result = tc.reduce_by_tokens(sample.messages, config)
    expect_numbers(at, result, sample)
    assert "excluded" in table(at)["status"].tolist()


def test_placeholder(sample) -> None:
    at = start()
    at.text_input(key="p_eino_opt_ph").set_value("[gone]").run()
    result = tc.reduce_by_tokens(sample.messages, tc.ClearToolResultConfig(placeholder="[gone]"))
    expect_numbers(at, result, sample)


def test_mode_replay(sample) -> None:
    at = start()
    at.radio(key="mode").set_value("replay").run()
    rp = tc.replay(sample.messages)
    expect_numbers(at, rp, sample)
    assert int(metrics(at)["Cache breaks"]) == rp.cache_breaks >= 1


def test_offloading_toggle_limit_and_read_tool(sample) -> None:
    at = start()
    at.toggle(key="offload_on").set_value(True).run()
    at.number_input(key="offload_limit").set_value(800).run()
    at.text_input(key="read_tool").set_value("cat").run()
    off = tc.ToolResultOffloadingConfig(offloading_token_limit=800, read_file_tool_name="cat")
    result = tc.reduce_by_tokens(sample.messages, offloading=off)
    assert any(r is not None and r.offloaded for r in result.offloads)
    expect_numbers(at, result, sample)
    df = table(at)
    assert df["offloaded_path"].notna().sum() == sum(1 for r in result.offloads if r is not None and r.offloaded)
    assert any("16 × limit" in c.value or "UTF-8 bytes" in c.value for c in at.sidebar.caption)
    show(at, "Export")
    labels = [b.label for b in at.get("download_button")]
    assert "Offloaded files (zip)" in labels


def test_table_filters_and_detail(sample) -> None:
    at = show(start(), "Messages")
    result = tc.reduce_by_tokens(sample.messages)
    at.multiselect(key="filter_status").set_value(["cleared"]).run()
    assert any(c.value.startswith(f"{len(result.cleared_indices)} of {len(sample.messages)} messages") for c in at.caption)
    at.multiselect(key="filter_status").set_value([]).run()
    at.multiselect(key="filter_tools").set_value(["grep"]).run()
    grep_count = sum(1 for m in sample.messages if m.tool_name == "grep")
    assert any(c.value.startswith(f"{grep_count} of ") for c in at.caption)
    i = result.cleared_indices[0]
    at.number_input(key="detail_index").set_value(i).run()
    codes = [c.value for c in at.code]
    assert sample.messages[i].content[:200] in codes[0] and codes[1] == tc.DEFAULT_PLACEHOLDER


def test_sample_picker_format_override_and_conversations() -> None:
    at = start()
    at.selectbox(key="sample").set_value("Four short runs (a file of several conversations)").run()
    runs = tc.load_all(SAMPLES / "several-runs.openai.json")
    conv = at.selectbox(key="conversation")
    assert conv.options == [f"{r.id} · {len(r.messages)} msgs" for r in runs]  # short: the sidebar is narrow
    conv.set_value(runs[2].id).run()
    assert metrics(at)["Messages"] == f"{len(runs[2].messages):,}"
    assert any(c.value.endswith(f"{len(runs[2].messages)} messages, ~{sum(tc.count_tokens(runs[2].messages)):,} tokens")
               for c in at.sidebar.caption)
    at.selectbox(key="format").set_value("anthropic").run()
    assert at.error and "anthropic" in at.error[0].value and "only" in at.error[0].value
    at.selectbox(key="format").set_value("auto").run()
    assert not at.error


def test_upload_a_real_corpus_file() -> None:
    path = CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    assert not at.exception
    t = tc.load(path)
    expect_numbers(at, tc.reduce_by_tokens(t.messages), t)
    assert any("format codex" in c.value for c in at.caption)


def test_starting_empty_and_bad_upload_keeps_working() -> None:
    at = start(sample="none")
    assert any("Upload a transcript" in i.value for i in at.info)
    at.file_uploader(key="upload").set_value(("x.jsonl", b'{"role":"user","content":"a"}\n{"role":', "text/plain")).run()
    assert not at.exception
    assert len(at.error) == 1 and "line 2" in at.error[0].value
    assert "\n" not in at.error[0].value


def test_untrusted_names_are_escaped_in_markdown() -> None:
    doc = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "[x](javascript:alert(1))", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "**bold** <script>x</script>"}]
    at = start(sample="none")
    at.file_uploader(key="upload").set_value(("<img src=x>.json", json.dumps(doc).encode(), "application/json")).run()
    assert not at.exception
    caption = next(c.value for c in at.caption if "format openai" in c.value)
    assert "\\<img src\\=x\\>" in caption
    assert all("<img" not in c.value.replace("\\<img", "") for c in at.caption)
    ms = at.multiselect(key="p_eino_opt_exclude")
    assert ms.options == ["[x](javascript:alert(1)) (1 result)"]  # options are plain text


def test_role_and_text_filters(sample) -> None:
    at = show(start(), "Messages")
    at.multiselect(key="filter_roles").set_value(["tool"]).run()
    tools = sum(1 for m in sample.messages if m.role == "tool")
    assert any(c.value.startswith(f"{tools} of {len(sample.messages)} messages") for c in at.caption)
    at.text_input(key="filter_text").set_value("PASSED").run()
    hits = sum(1 for r in report.message_rows(tc.reduce_by_tokens(sample.messages), sample)
               if r["role"] == "tool" and "passed" in r["preview"].lower())
    assert any(c.value.startswith(f"{hits} of ") for c in at.caption)
    assert table(at)["role"].eq("tool").all()


def test_offloading_pipeline_on_a_real_corpus_file() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl"
    at = start(sample="none")
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.toggle(key="offload_on").set_value(True).run()
    at.number_input(key="offload_limit").set_value(500).run()
    at.radio(key="mode").set_value("replay").run()
    t = tc.load(path)
    rp = tc.replay(t.messages, offloading=tc.ToolResultOffloadingConfig(offloading_token_limit=500))
    offloaded = [r for r in rp.offloads if r is not None and r.offloaded]
    assert offloaded
    expect_numbers(at, rp, t)
    df = table(at)
    assert df["offloaded_path"].notna().sum() == len(offloaded)
    i = offloaded[-1].index
    at.number_input(key="detail_index").set_value(i).run()
    after = at.code[1].value
    assert after.startswith("Tool result too large") or after == tc.DEFAULT_PLACEHOLDER


def test_big_replay_sweep_waits_for_a_click() -> None:
    msgs = []
    for i in range(1600):
        msgs.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "hit " * (50 + i % 200)})
    at = start(sample="none")
    at.file_uploader(key="upload").set_value(("long.json", json.dumps(msgs).encode(), "application/json")).run()
    at.radio(key="mode").set_value("replay").run()
    show(at, "Parameter sweep")
    assert not at.get("plotly_chart") and any("replays of 3,200 messages" in i.value for i in at.info)
    at.button(key="sweep_go_button").click().run()
    # saved, cache breaks, the loss grid, and dollars (the log names no model: the stated default prices)
    assert len(at.get("plotly_chart")) == 4


def test_an_internal_error_is_one_line_and_the_app_keeps_working(monkeypatch) -> None:
    at = start()

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(tc, "apply", broken)
    at.slider(key=KEEP + "_slider").set_value(1000).run()
    assert not at.exception
    assert len(at.error) == 1 and "simulated bug" in at.error[0].value.replace("\\", "")
    monkeypatch.undo()
    at.slider(key=KEEP + "_slider").set_value(2000).run()
    assert not at.error and metrics(at)["Messages"] == "45"


def test_about_box_shows_recorded_usage_and_new_formats_load() -> None:
    path = CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"
    at = start(sample="none")
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    line = report.recorded_usage(tc.load(path).messages)
    assert line and any(line[:40].replace("(", "").lower() in c.value.replace("\\", "").replace("(", "").lower()
                        for c in at.caption)
    gemini = ROOT / "tests" / "data" / "formats" / "gemini-cli_session.jsonl"
    at.file_uploader(key="upload").set_value((gemini.name, gemini.read_bytes(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    assert metrics(at)["Tool results"] == "2"


def test_claude_code_compactions_and_context_window_in_the_replay_view() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    assert not at.exception
    assert any("compacted the session (1)" in c.value for c in at.caption)  # said beside the usage chart
    show(at, "Replay")
    window = next(n for n in at.number_input if n.label.startswith("Model context window"))
    assert window.value == 200_000  # the log names a Claude model
    window.set_value(50_000).run()
    assert not at.exception
    assert any("over the 50,000-token window" in c.value for c in at.caption)


def test_the_first_screen_waits_for_neither_pandas_nor_plotly_js() -> None:
    """The first screen has no table and draws its chart as an SVG: pandas (about 0.45 s
    to import) and plotly.js (about a second in Chromium) wait until a tab needs them."""
    code = (
        "import sys\nfrom streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(APP)!r}, default_timeout=60)\nat.run()\n"
        "assert not at.exception and at.metric[0].label.startswith('Verdict: ')\n"
        "print(','.join(m for m in ('pandas', 'pyarrow') if m in sys.modules), len(at.get('plotly_chart')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0"]  # nothing heavy imported, no plotly chart
