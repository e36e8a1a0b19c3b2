"""The inspector in a real browser: upload a real transcript, move a slider, see the chart
and table change, download the reduced export and check it."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

import toolclear as tc
from toolclear.cost.logfacts import compactions_of
from toolclear.model import main_conversation

from .conftest import ROOT, wait_for_app_idle

pytestmark = pytest.mark.e2e
CORPUS = ROOT / "tests" / "data" / "corpus"
REAL = CORPUS / "claude_code" / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl"


def _metric(page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))
    return box.get_by_test_id("stMetricValue").inner_text()


def _usage_traces(page) -> dict[str, int]:
    return page.evaluate(
        """() => {
            const plot = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
            const out = {};
            for (const t of plot._fullData) { if (t.type === 'bar') out[t.name] = t._length; }
            return out;
        }"""
    )


def _tab(page, name: str) -> None:
    """Open a tab; only the open tab's content runs, so wait for the rerun."""
    page.get_by_role("tab", name=name).click()
    expect(page.get_by_role("tab", name=name)).to_have_attribute("aria-selected", "true")
    page.wait_for_timeout(150)
    wait_for_app_idle(page)


def test_upload_tune_and_export(app_page, tmp_path) -> None:
    page = app_page
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(REAL)
    caption = page.get_by_test_id("stCaptionContainer").filter(has_text="format claude-code")
    expect(caption).to_contain_text("entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl")
    wait_for_app_idle(page)

    t = tc.load(REAL)
    at_defaults = tc.reduce_by_tokens(t.messages)
    expect(page.get_by_test_id("stMetric").filter(has_text="Changed at some call").get_by_test_id("stMetricValue")
           ).to_have_text(f"{len(at_defaults.cleared_indices):,}")
    assert _metric(page, "History after") == f"{at_defaults.tokens_after:,}"
    # the chart is an SVG first; zoomable on request, drawn by plotly with a bar per message
    page.get_by_test_id("stImage").first.wait_for()
    page.get_by_test_id("stCheckbox").filter(has_text="Zoomable chart").locator("label").click()
    page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first.wait_for()
    wait_for_app_idle(page)
    before = _usage_traces(page)
    assert before.get("cleared") == len(at_defaults.cleared_indices)

    # move the keep-recent slider all the way down with the keyboard
    thumb = page.get_by_test_id("stSlider").filter(has_text="Keep-recent token budget").get_by_role("slider")
    thumb.focus()
    thumb.press("Home")
    expect(thumb).to_have_value("0")
    keep0 = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(keep_recent_tokens=0))
    expect(page.get_by_test_id("stMetric").filter(has_text="Changed at some call").get_by_test_id("stMetricValue")
           ).to_have_text(f"{len(keep0.cleared_indices):,}")
    wait_for_app_idle(page)
    after = _usage_traces(page)
    assert after.get("cleared") == len(keep0.cleared_indices) != before.get("cleared")

    # the table: filter on status "cleared" and count the rows
    _tab(page, "Messages")
    wait_for_app_idle(page)
    status = page.get_by_test_id("stMultiSelect").filter(has_text="Status")
    status.click()
    page.get_by_role("option", name="cleared", exact=True).click()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text=f"of {len(t.messages):,} messages")).to_contain_text(
        f"{len(keep0.cleared_indices)} of {len(t.messages):,} messages")
    wait_for_app_idle(page)

    # download the reduced transcript in its own format and check it
    _tab(page, "Export")
    button = page.get_by_test_id("stDownloadButton").filter(has_text="Reduced (claude-code)")
    with page.expect_download() as dl:
        button.get_by_role("button").click()
    assert dl.value.suggested_filename == f"reduced-{REAL.name}"
    data = Path(dl.value.path()).read_bytes()
    reduced = tc.load(data)
    assert reduced.format == "claude-code"
    assert [m.content for m in reduced.messages] == [m.content for m in keep0.messages]
    cleared = [m for m in reduced.messages if m.role == "tool" and m.content == tc.DEFAULT_PLACEHOLDER]
    assert len(cleared) == len(keep0.cleared_indices) > 0


def test_bad_upload_shows_an_error_and_the_app_keeps_working(app_page, tmp_path) -> None:
    page = app_page
    bad = tmp_path / "broken<b>.json"
    bad.write_bytes(b'[{"role": "user", "content": "hi"}, {"role": ')
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(bad)
    alert = page.get_by_test_id("stAlertContentError")
    expect(alert).to_contain_text("not valid JSON")
    expect(alert).to_contain_text("line 1, column")
    assert page.locator("b", has_text=".json").count() == 0  # the file name was not rendered as HTML
    assert page.get_by_test_id("stException").count() == 0
    # a good file afterwards works again
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json")
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text="format mini-swe-agent")).to_be_visible()


def test_urls_and_addresses_in_names_and_errors_are_not_links(app_page, tmp_path) -> None:
    page = app_page
    bad = tmp_path / "see www.evil.example and https:__x.example mail me@evil.example.json"
    bad.write_bytes(b'{"note": "http://evil.example/x www.evil.example a@evil.example"}')
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(bad)
    alert = page.get_by_test_id("stAlertContentError")
    expect(alert).to_contain_text("evil")
    expect(alert).to_contain_text("example")
    assert alert.locator("a").count() == 0
    assert page.locator("a[href*='evil']").count() == 0


def test_hostile_content_is_shown_as_text(app_page, tmp_path) -> None:
    page = app_page
    evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>[link](javascript:alert(1))'
    doc = ('[{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":'
           '{"name":"<b>bold</b>","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":'
           + __import__("json").dumps(evil) + "}]")
    path = tmp_path / "evil.json"
    path.write_text(doc)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text="evil.json")).to_be_visible()
    wait_for_app_idle(page)
    _tab(page, "Messages")
    page.get_by_test_id("stNumberInput").filter(has_text="Message #").locator("input").fill("1")
    page.keyboard.press("Enter")
    wait_for_app_idle(page)
    expect(page.get_by_test_id("stCode").first).to_contain_text("onerror")
    assert page.evaluate("() => window.__pwned === undefined")
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0


def test_screenshot_of_the_sample(page, streamlit_url) -> None:
    page.goto(streamlit_url)
    wait_for_app_idle(page)
    page.get_by_test_id("stImage").first.wait_for()  # the token-usage chart, an SVG
    expect(page.get_by_test_id("stMetric").first).to_be_visible()
    page.wait_for_timeout(300)
    h = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": min(max(1000, h), 1400)})
    wait_for_app_idle(page)
    out = ROOT / "artifacts"
    out.mkdir(exist_ok=True)
    page.screenshot(path=str(out / "app.png"))
    assert (out / "app.png").stat().st_size > 50_000
    if os.environ.get("TOOLCLEAR_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(out / "app.png", ROOT / "docs" / "screenshot.png")
    assert re.search(r"\d", _metric(page, "Changed at some call"))


@pytest.mark.parametrize("width", [1100, 1280])
def test_headline_numbers_are_not_cut_on_a_laptop(page, streamlit_url, width) -> None:
    """Seven-digit numbers (the 10,000-message generated run has 3,391,943 tokens) fit at
    laptop widths: no metric value is cut off with an ellipsis."""
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(streamlit_url + "/?sample=none")
    wait_for_app_idle(page)
    big = ROOT / "artifacts" / "ten-k.json"
    big.parent.mkdir(exist_ok=True)
    if not big.exists():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import run as bench

        big.write_bytes(bench.ten_k_transcript())
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(big)
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text="ten-k.json")).to_be_visible(timeout=60_000)
    wait_for_app_idle(page)
    values = page.get_by_test_id("stMetricValue")
    expect(values.first).to_be_visible()
    cut_js = """() => [...document.querySelectorAll('[data-testid=stMetricValue], [data-testid=stMetricLabel]')]
        .filter(v => v.scrollWidth > v.clientWidth + 1 || [...v.querySelectorAll('*')].some(
            e => e.scrollWidth > e.clientWidth + 1)).map(v => v.innerText)"""
    assert page.evaluate(cut_js) == [], f"cut off at {width} px: {page.evaluate(cut_js)}"
    page.get_by_test_id("stSidebar").get_by_text("replay", exact=True).click()
    expect(page.get_by_test_id("stMetric").filter(has_text="Saved, all calls")).to_be_visible(timeout=60_000)
    wait_for_app_idle(page)
    assert page.evaluate(cut_js) == [], f"cut off at {width} px in replay mode: {page.evaluate(cut_js)}"
    assert "3,391,943" in page.get_by_test_id("stMetric").filter(has_text="History before").inner_text()


@pytest.mark.parametrize("path", [
    CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl",
    CORPUS / "openhands" / "openhands_multi-swe-bench_example_output.jsonl",
], ids=["claude-code", "openhands"])
def test_compare_view_on_real_transcripts(app_page, path) -> None:
    """The Compare view: five policies' table, one line each per call, and the strip."""
    page = app_page
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text=path.name)).to_be_visible(timeout=60_000)
    wait_for_app_idle(page)
    _tab(page, "Compare")
    expect(page.get_by_test_id("stDataFrame")).to_be_visible(timeout=60_000)
    charts = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot')
    expect(charts).to_have_count(2, timeout=60_000)
    lines = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
        .map(p => p._fullData.map(t => t.name + ':' + t.type))""")
    t = main_conversation(tc.load_all(path))  # the conversation the app opens first
    from toolclear.runs.verdict import suggested

    specs = suggested(t.messages, "eino", tc.runs.lab.policy_spec(tc.ClearToolResultConfig()))
    cmp = tc.compare(t.messages, [tc.runs.lab.parse_policy(s) for s in specs], pricing="auto")
    # priced, a session that compacted opens on the run as recorded
    assert ("as recorded" in cmp.labels) == bool(compactions_of(t.messages))
    assert [n.split(":")[0] for n in lines[0]] == ["no policy", *cmp.labels]
    assert lines[1] and lines[1][0].endswith(":heatmap")
    grid = page.get_by_test_id("stDataFrame").locator("[aria-rowcount]").first
    assert int(grid.get_attribute("aria-rowcount")) == len(cmp.labels) + 1  # a header and a row per policy


def test_policy_picker_in_the_browser(app_page) -> None:
    page = app_page
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Policy").first.click()
    page.get_by_role("option", name="Observation masking (SWE-agent)").click()
    wait_for_app_idle(page)
    t = tc.load(ROOT / "sample_data" / "coding-agent.eino.jsonl")
    r = tc.apply(t.messages, tc.ObservationMaskingConfig.swe_agent())
    expect(page.get_by_test_id("stMetric").filter(has_text="Changed at some call").get_by_test_id("stMetricValue")
           ).to_have_text(f"{len(r.cleared_indices):,}")
    assert _metric(page, "History after") == f"{r.tokens_after:,}"


def test_corpus_page_on_the_whole_real_corpus(app_page) -> None:
    """Every file of the project's corpus at once, swept in the browser on every core."""
    page = app_page
    page.get_by_test_id("stSidebar").get_by_text("Corpus", exact=True).click()
    wait_for_app_idle(page)
    files = [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix in (".json", ".jsonl", ".yaml")]
    # the Corpus page's uploader takes many files: waited for, so a slow rerun after the
    # click (a loaded CI machine) cannot hand the files to the One run page's uploader
    many = page.locator('[data-testid="stFileUploaderDropzoneInput"][multiple]')
    expect(many).to_be_attached(timeout=60_000)
    many.set_input_files(files)
    run = page.get_by_role("button", name=re.compile(r"Run \d+ setting"))
    expect(run).to_be_visible(timeout=60_000)  # shown once the uploads are in
    wait_for_app_idle(page)
    budget = page.get_by_role("spinbutton", name="Loss budget (needed results per 100 calls)")
    budget.fill("1000")  # any loss allowed: a setting is recommended whatever it clears
    budget.press("Enter")
    wait_for_app_idle(page)
    run.click()
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("costs the least", timeout=240_000)
    wait_for_app_idle(page, timeout=240_000)
    runs = page.get_by_test_id("stMetric").filter(has_text="Runs").get_by_test_id("stMetricValue").inner_text()
    assert int(runs.replace(",", "")) > 200  # tau-bench alone holds 200 runs
    charts = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot')
    expect(charts).to_have_count(2, timeout=60_000)


VIEWS = ("Token usage", "Replay", "Messages", "Parameter sweep", "Compare", "Export")


@pytest.mark.parametrize("width", [1100, 1280])
def test_every_view_on_a_real_claude_code_run(page, streamlit_url, width) -> None:
    """Every view, in replay with the log's own pricing, at two laptop widths: each renders
    with no error, and its screenshot is kept (docs/views/ with TOOLCLEAR_UPDATE_SCREENSHOT=1)."""
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(streamlit_url + "/?sample=none")
    wait_for_app_idle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(REAL)
    wait_for_app_idle(page)
    page.get_by_test_id("stSidebar").get_by_text("replay", exact=True).click()
    wait_for_app_idle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="With the policy")).to_be_visible()
    out = ROOT / "artifacts" / "views"
    out.mkdir(parents=True, exist_ok=True)
    for view in VIEWS:
        _tab(page, view)
        page.wait_for_timeout(600)  # plotly's first draw
        assert page.get_by_test_id("stException").count() == 0, view
        assert page.get_by_text("Something went wrong").count() == 0, view
        name = f"{view.lower().replace(' ', '-')}-{width}.png"
        h = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
        page.set_viewport_size({"width": width, "height": min(max(1000, h), 5000)})
        wait_for_app_idle(page)
        page.wait_for_timeout(400)
        page.screenshot(path=str(out / name))
        page.set_viewport_size({"width": width, "height": 1000})
        assert (out / name).stat().st_size > 30_000
        if os.environ.get("TOOLCLEAR_UPDATE_SCREENSHOT") == "1":
            (ROOT / "docs" / "views").mkdir(exist_ok=True)
            shutil.copyfile(out / name, ROOT / "docs" / "views" / name)


def test_quick_key_presses_on_a_slider_are_all_kept(app_page) -> None:
    """Six arrow presses in a row, faster than a rerun: the slider ends six steps on, and
    the number box with it (no press lost, no value jumping back)."""
    page = app_page
    thumb = page.get_by_test_id("stSlider").filter(has_text="Tool-result token threshold").get_by_role("slider")
    start = int(thumb.input_value())
    for _ in range(6):
        thumb.press("ArrowRight")  # focuses the thumb and presses, six times in a row
    wait_for_app_idle(page)
    page.wait_for_timeout(1500)
    wait_for_app_idle(page)
    end = int(thumb.input_value())
    box = page.get_by_test_id("stMain").get_by_test_id("stNumberInputField").first
    assert end > start and int(box.input_value()) == end
    step = (end - start) // 6
    assert end == start + 6 * step and step >= 1 and str(step).rstrip("0") in ("1", "2", "25", "5")
