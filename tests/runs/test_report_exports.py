"""Reports, sweeps, charts, exports and snippets: what the app and CLI show and hand out."""

from __future__ import annotations

import csv
import io
import json
import shlex
import zipfile
from collections import Counter

import pytest

import toolclear as tc
from toolclear.cli import main as cli_main
from toolclear.inspector import charts, exports
from toolclear.policies import snippets
from toolclear.runs import numbers, report, sweep

from ..conftest import CORPUS, SAMPLES

SAMPLE = SAMPLES / "coding-agent.openai.json"


@pytest.fixture(scope="module")
def t() -> tc.Transcript:
    return tc.load(SAMPLE)


def test_sweep_single_pass_equals_the_policy_cell_by_cell(t) -> None:
    base = tc.ClearToolResultConfig(exclude_tools=("grep",))
    thresholds, keeps = [0, 10_000, 40_000, 60_000], [0, 5_000, 40_000, 100_000]
    sw = sweep.sweep(t.messages, base, thresholds, keeps)
    for a, th in enumerate(thresholds):
        for b, k in enumerate(keeps):
            r = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(th, k, exclude_tools=("grep",)))
            assert sw.tokens_saved[a][b] == r.tokens_saved
            assert sw.cleared[a][b] == len(r.cleared_indices)
    assert sw.cache_breaks is None


def test_sweep_replay_equals_replay_cell_by_cell(t) -> None:
    thresholds, keeps = [5_000, 30_000], [2_000, 40_000]
    sw = sweep.sweep(t.messages, tc.ClearToolResultConfig(), thresholds, keeps, mode="replay")
    for a, th in enumerate(thresholds):
        for b, k in enumerate(keeps):
            rp = tc.replay(t.messages, tc.ClearToolResultConfig(th, k))
            assert sw.cache_breaks[a][b] == rp.cache_breaks
            assert sw.tokens_saved[a][b] == rp.tokens_sent_unreduced - rp.tokens_sent


def test_unit_sizes_and_grid(t) -> None:
    counts = tc.count_tokens(t.messages)
    sizes = sweep.unit_sizes(t.messages)  # what the app's sliders and sweep grids range over
    assert sizes["tokens"] == sum(counts)
    assert sizes["tool_tokens"] == sum(c for m, c in zip(t.messages, counts) if m.role == "tool")
    assert sizes["uses"] == sum(1 for m in t.messages if m.role == "tool") and sizes["messages"] == len(t.messages)
    assert numbers.grid_values(100_000) == sorted(set(numbers.grid_values(100_000)))
    assert numbers.grid_values(100_000) == [10_000 * i for i in range(1, 10)]  # round, all below the limit
    assert numbers.grid_values(1_237, zero=True) == [0, 200, 400, 600, 800, 1_000, 1_200]
    thresholds = numbers.grid_values(sizes["tool_tokens"], zero=True)
    keeps = numbers.grid_values(sizes["tokens"])
    assert thresholds[0] == 0 and thresholds[-1] < sizes["tool_tokens"] and keeps[-1] < sizes["tokens"]
    assert 5 <= len(keeps) <= 10
    assert numbers.nice_ceil(12_500) == 20_000 and numbers.nice_ceil(0) == 0


def test_report_rows_and_summary(t) -> None:
    r = tc.reduce_by_tokens(t.messages)
    rows = report.message_rows(r, t)
    assert [row["index"] for row in rows] == list(range(len(t.messages)))
    assert Counter(row["status"] for row in rows) == Counter(str(s) for s in r.statuses)
    assert all(row["cleared_at_call"] is None for row in rows)  # single pass has no calls
    start = r.recent_start_index
    for row, m in zip(rows, t.messages):
        if row["status"] == "cleared":
            assert row["why"] == (f"before window start #{start}; tool results "
                                  f"{r.total_tool_result_tokens:,} > {r.config.tool_result_token_threshold:,}")
        elif row["status"] == "protected":
            assert row["why"] == f"inside the window (from #{start})"
        if m.role == "assistant" and not m.content and m.tool_calls:
            assert row["preview"].startswith("calls " + m.tool_calls[0].name)
    rp = tc.replay(t.messages)
    replay_rows = report.message_rows(rp, t)
    for row, at in zip(replay_rows, rp.cleared_at):
        assert row["cleared_at_call"] == at
        if at is not None:
            assert f"at call #{at}" in row["why"]
    quiet = report.message_rows(tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(10**9, 0)), t)
    assert all(row["why"].startswith("not triggered: tool results") for row in quiet if row["role"] == "tool")
    assert all(row["in_window"] == (i >= r.recent_start_index) for i, row in enumerate(rows))
    s = report.summary_dict(r)
    assert s["tokens_saved"] == r.tokens_saved and s["cleared"] == len(r.cleared_indices)
    assert s["saved_percent"] == round(100 * r.tokens_saved / r.tokens_before, 2)
    rep = report.report_dict(tc.replay(t.messages), t)
    assert len(rep["steps"]) == sum(1 for m in t.messages if m.role == "assistant") + 1
    assert rep["steps"][-1]["final"] and rep["summary"]["mode"] == "replay"
    summary = report.tool_summary(t.messages, tc.count_tokens(t.messages))
    assert summary[0].tokens == max(x.tokens for x in summary)
    assert sum(x.results for x in summary) == sum(1 for m in t.messages if m.role == "tool")


def test_exports(t, tmp_path) -> None:
    r = tc.reduce_by_tokens(t.messages)
    eino = tc.load(exports.eino_json(r.messages))
    assert [m.content for m in eino.messages] == [m.content for m in r.messages]
    rows = list(csv.DictReader(io.StringIO(exports.report_csv(report.message_rows(r, t)).decode())))
    assert len(rows) == len(t.messages) and list(rows[0]) == list(report.ROW_FIELDS)
    assert json.loads(exports.report_json(report.report_dict(r, t)))["summary"]["cleared"] == len(r.cleared_indices)
    # a lone surrogate survives the JSON export as its escape
    odd = tc.Message("tool", "x\ud800y", tool_name="t")
    assert json.loads(exports.eino_json([odd]))[0]["content"] == "x\ud800y"


@pytest.mark.parametrize("backend_kind", ["memory", "dir"])
def test_offloaded_zip(t, tmp_path, backend_kind) -> None:
    backend = tc.MemoryBackend() if backend_kind == "memory" else tc.LocalDirBackend(tmp_path)
    off = tc.ToolResultOffloadingConfig(offloading_token_limit=500)
    r = tc.reduce_by_tokens(t.messages, offloading=off, backend=backend)
    done = [x for x in r.offloads if x is not None and x.offloaded]
    assert done
    data = exports.offloaded_zip(r.offloads, backend, ("reduced.json", tc.dump(t, r.messages)))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        assert "reduced.json" in names and len(names) == len(done) + 1
        contents = {zf.read(n).decode() for n in names if n != "reduced.json"}
    assert contents == {t.messages[x.index].content for x in done}
    assert all(not n.startswith("/") and ".." not in n.split("/") for n in names)


def test_go_snippet_values_and_zero_notes() -> None:
    go = snippets.go_snippet(tc.ClearToolResultConfig(123, 0, "[x]", ("read_file", 'say "hi"')))
    assert "ToolResultTokenThreshold:   123," in go and "KeepRecentTokens:           0," in go
    assert "eino reads 0 as its default (40000)" in go
    assert '[]string{"read_file", "say \\"hi\\""}' in go
    both = snippets.go_snippet(tc.ClearToolResultConfig(), tc.ToolResultOffloadingConfig(5000, "cat"))
    assert "reduction.ToolResultConfig{" in both and "OffloadingTokenLimit:       5000" in both
    assert '"cat"' in both and "20,000 tokens" in both


def test_python_snippet_reproduces_the_result(t, tmp_path, monkeypatch) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(SAMPLE.read_bytes())
    config = tc.ClearToolResultConfig(9000, 15000, "[gone]", ("grep",))
    code = snippets.python_snippet(config, path=str(path), mode="replay")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "snippet", "exec"), {})
    out = tc.load(tmp_path / "reduced-run.json")
    expected = tc.replay(t.messages, config)
    assert [m.content for m in out.messages] == [m.content for m in expected.messages]


def test_cli_snippet_runs_and_gives_the_same_file(t, tmp_path, monkeypatch) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(SAMPLE.read_bytes())
    config = tc.ClearToolResultConfig(9000, 15000, "[gone]", ("grep", "list_dir"))
    line = snippets.cli_command(config, path=str(path), mode="replay")
    argv = shlex.split(line)
    assert argv[:2] == ["toolclear", "reduce"]
    monkeypatch.chdir(tmp_path)
    assert cli_main(argv[1:], stdout=io.BytesIO(), stderr=io.StringIO()) == 0
    out = tc.load(tmp_path / "reduced-run.json")
    assert [m.content for m in out.messages] == [m.content for m in tc.replay(t.messages, config).messages]


@pytest.mark.parametrize("kind", ["cli", "python"])
def test_offloading_snippets_give_the_apps_download(t, tmp_path, monkeypatch, kind) -> None:
    """The app offloads into memory (notice: /large_tool_result/<id>); the snippets write
    to a folder and must still give the same file, not this machine's path."""
    path = tmp_path / "run.json"
    path.write_bytes(SAMPLE.read_bytes())
    config, off = tc.ClearToolResultConfig(9000, 15000), tc.ToolResultOffloadingConfig(300, "cat_file")
    expected = tc.replay(t.messages, config, offloading=off)  # what the app shows and downloads
    assert any(r is not None and r.offloaded for r in expected.offloads)
    monkeypatch.chdir(tmp_path)
    if kind == "cli":
        argv = shlex.split(snippets.cli_command(config, off, path=str(path), mode="replay"))
        assert cli_main(argv[1:], stdout=io.BytesIO(), stderr=io.StringIO()) == 0
    else:
        exec(compile(snippets.python_snippet(config, off, path=str(path), mode="replay"), "snippet", "exec"), {})
    out = tc.load(tmp_path / "reduced-run.json")
    assert [m.content for m in out.messages] == [m.content for m in expected.messages]
    assert any((tmp_path / "offloaded" / "large_tool_result").iterdir())


def test_usage_figure_bars_match_statuses(t) -> None:
    r = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(exclude_tools=("grep",)))
    fig = charts.usage_figure(r, t.messages)
    bars = {tr.name: len(tr.x) for tr in fig.data if tr.type == "bar"}
    expected = Counter("other message" if (s is tc.MessageStatus.KEPT and m.role != "tool") else str(s)
                       for m, s in zip(t.messages, r.statuses))
    assert bars == dict(expected)
    assert any(a.text == f"window starts at #{r.recent_start_index}" for a in fig.layout.annotations)
    threshold = next(tr for tr in fig.data if tr.name.startswith("threshold"))
    assert list(threshold.y) == [20000, 20000]


def test_usage_figure_for_many_messages_draws_columns() -> None:
    msgs = [tc.Message("tool" if i % 2 else "user", "x" * (i % 50), tool_name="t") for i in range(3000)]
    r = tc.reduce_by_tokens(msgs, tc.ClearToolResultConfig(100, 500))
    fig = charts.usage_figure(r, msgs)
    k = -(-3000 // charts.MAX_COLUMNS)
    columns = [tr for tr in fig.data if getattr(tr, "stackgroup", None)]
    assert columns and all(len(tr.x) == 3000 // k + 1 for tr in columns)  # one point per column, not per message
    assert sum(sum(tr.y[:-1]) for tr in columns) == sum(r.token_counts_original or r.token_counts)
    hover = next(tr for tr in fig.data if tr.name == "messages")
    assert len(hover.x) == 3000 // k and "cleared" in hover.hovertext[0]


def test_usage_svg_columns_tooltips_and_totals() -> None:
    import re

    msgs = [tc.Message("tool" if i % 2 else "user", "x" * (i % 50), tool_name="<b>SECRET</b>") for i in range(3000)]
    r = tc.reduce_by_tokens(msgs, tc.ClearToolResultConfig(100, 500))
    svg = charts.usage_svg(r, msgs)
    titles = re.findall(r"<title>#(\d+)–#(\d+): ([^;]*); tokens ([\d,]+) → ([\d,]+)</title>", svg)
    assert len(titles) == charts.SVG_COLUMNS and titles[0][:2] == ("0", "9") and titles[-1][1] == "2999"
    before = r.token_counts_original or r.token_counts
    assert sum(int(t[3].replace(",", "")) for t in titles) == sum(before)
    assert sum(int(t[4].replace(",", "")) for t in titles) == sum(r.token_counts_after)
    cleared = sum(int(m) for t in titles for m in re.findall(r"(\d+) cleared", t[2]))
    assert cleared == len(r.cleared_indices)
    assert f"window starts at #{r.recent_start_index}" in svg and "threshold 100" in svg
    assert "SECRET" not in svg  # nothing from the transcript, only numbers and status names


def test_usage_svg_draws_every_policy_on_a_long_run() -> None:
    """Past MAX_COLUMNS only the SVG is drawn: it must hold for policies with no tool-result
    threshold or window (it once read eino's fields from every config)."""
    from toolclear.policies import BUILT_IN

    msgs = [tc.Message("tool" if i % 2 else ("user" if i % 4 == 0 else "assistant"), "word " * (i % 40),
                       tool_name="t", tool_call_id=f"c{i}") for i in range(1500)]
    for spec in BUILT_IN:
        r = tc.apply(msgs, spec.config(), backend=tc.MemoryBackend())
        svg = charts.usage_svg(r, msgs)
        assert svg.startswith("<svg") and svg.endswith("</svg>"), spec.name
        assert ("tool-result tokens so far" in svg) == spec.window, spec.name


def test_replay_figure_and_heatmap(t) -> None:
    rp = tc.replay(t.messages)
    fig = charts.replay_figure(rp)
    sent = next(tr for tr in fig.data if tr.name == "sent with clearing")
    assert list(sent.x) == [s.call_index for s in rp.steps] and list(sent.y) == [s.context_tokens for s in rp.steps]
    marks = next(tr for tr in fig.data if tr.name.startswith("clearing here"))
    assert len(marks.x) == sum(1 for s in rp.steps if s.cleared_indices)
    sw = sweep.sweep(t.messages, tc.ClearToolResultConfig(), [10_000, 20_000], [20_000, 40_000], mode="replay")
    heat = charts.heatmap_figure(sw, "cache_breaks", (20_000, 40_000))
    star = heat.data[1]
    assert list(star.x) == [40_000] and list(star.y) == [20_000] and star.name == "your setting"
    between = charts.heatmap_figure(sw, "cache_breaks", (15_000, 38_000)).data[1]
    assert list(between.x) == [38_000] and list(between.y) == [15_000]  # the setting, not the nearest cell
    off = charts.heatmap_figure(sw, "cache_breaks", (30_000, 38_000)).data[1]
    assert list(off.y) == [25_000] and "off the grid" in off.name  # held to the grid's edge


def test_charts_escape_untrusted_names() -> None:
    msgs = [tc.Message("tool", "x" * 100, tool_name="<img src=x onerror=alert(1)>")]
    fig = charts.usage_figure(tc.reduce_by_tokens(msgs), msgs)
    assert "<img" not in json.dumps(fig.to_plotly_json()["data"], default=str)


def test_report_lists_offloaded_results_with_sizes(t) -> None:
    off = tc.ToolResultOffloadingConfig(offloading_token_limit=500)
    r = tc.reduce_by_tokens(t.messages, offloading=off)
    rep = report.report_dict(r, t, off)
    assert rep["settings"]["offloading"]["trigger_tokens"] == 2000
    listed = rep["offloaded"]
    assert listed and all(x["tokens"] > 2000 for x in listed)
    for x in listed:
        assert x["bytes"] == len(t.messages[x["index"]].content.encode())
        assert rep["messages"][x["index"]]["offloaded_path"] == x["path"]


def test_transcript_size_hint() -> None:
    runs = tc.load_all(SAMPLES / "several-runs.openai.json")
    for run in runs:
        assert run.size == 4 * sum(tc.count_tokens(run.messages)) - sum(
            (-(len(m.content.encode()) + sum(len(c.arguments.encode()) for c in m.tool_calls))) % 4 for m in run.messages)
    assert runs[0].size < runs[-1].size


def test_report_json_follows_its_schema(t) -> None:
    """The report is a public artifact: its keys and types are those of schema.ReportDict."""
    from typing import get_type_hints

    from toolclear import schema

    for result in (tc.reduce_by_tokens(t.messages), tc.replay(t.messages)):
        doc = json.loads(exports.report_json(report.report_dict(result, t)))
        assert doc["schema_version"] == schema.SCHEMA_VERSION
        hints = get_type_hints(schema.ReportDict)
        assert set(doc) <= set(hints) and schema.ReportDict.__required_keys__ <= set(doc)
        assert set(doc["summary"]) <= set(get_type_hints(schema.SummaryDict))
        assert schema.SummaryDict.__required_keys__ <= set(doc["summary"])
        assert doc["summary"]["mode"] in schema.MODES
        assert all(list(row) == list(report.ROW_FIELDS) for row in doc["messages"])
        for step in doc.get("steps", []):
            assert set(step) == set(get_type_hints(schema.StepDict))


def test_format_names_are_defined_once() -> None:
    from toolclear import schema

    assert tuple(f.name for f in tc.list_formats()) == schema.FORMAT_NAMES


def test_python_snippet_runs_as_shown_on_a_file_of_several_conversations(tmp_path, monkeypatch) -> None:
    """load() refuses a file of several runs; the snippet picks the conversation shown."""
    path = tmp_path / "runs.json"
    path.write_bytes((SAMPLES / "several-runs.openai.json").read_bytes())
    runs = tc.load_all(path)
    chosen = runs[2]
    config = tc.ClearToolResultConfig(10, 20, "[gone]")
    code = snippets.python_snippet(config, path=str(path), mode="replay", conversation=chosen.id)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "snippet", "exec"), {})
    out = tc.load_all(tmp_path / "reduced-runs.json")
    expected = tc.replay(chosen.messages, config)
    assert [m.content for m in out[2].messages] == [m.content for m in expected.messages]
    assert [t.messages for t in out[:2]] == [t.messages for t in runs[:2]]


def test_usage_chart_says_when_the_whole_run_fits_and_uses_round_right_ticks(t) -> None:
    total = sum(tc.count_tokens(t.messages))
    fits = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, total + 1))
    fig = charts.usage_figure(fits, t.messages)
    assert [a.text for a in fig.layout.annotations] == [f"the whole run ({total:,} tokens) fits in the window"]
    overflow = tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(0, 10))
    assert "window starts at" in charts.usage_figure(overflow, t.messages).layout.annotations[0].text
    ticks = list(fig.layout.yaxis2.tickvals)
    steps = {b - a for a, b in zip(ticks, ticks[1:])}
    assert len(steps) == 1 and str(steps.pop()).rstrip("0") in ("1", "2", "5")  # 1, 2 or 5 times a power of ten
    assert any("right axis" in tr.name for tr in fig.data if tr.name and tr.name.startswith("threshold"))


def test_replay_hover_says_yes_or_no_for_a_cache_break(t) -> None:
    fig = charts.replay_figure(tc.replay(t.messages, tc.ClearToolResultConfig(100, 200)))
    marks = next(tr for tr in fig.data if tr.name.startswith("clearing here"))
    assert set(marks.hovertext) <= {"yes: the cached prompt prefix is lost", "no"} and "yes" in marks.hovertext[0]
    assert "%{hovertext}" in marks.hovertemplate


def test_compactions_and_context_window_are_drawn() -> None:
    path = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
    t = tc.load_all(path)[0]
    assert len(t.marks) == 1
    k, label = t.marks[0]
    assert label == "compaction 1" and t.messages[k].content.startswith("This session is being continued")
    r = tc.reduce_by_tokens(t.messages)
    fig = charts.usage_figure(r, t.messages, marks=t.marks)
    assert any(s.x0 == k - 0.5 and s.line.dash == "dot" for s in fig.layout.shapes)
    assert "compaction 1" in [a.text for a in fig.layout.annotations]
    assert "compaction 1</text>" in charts.usage_svg(r, t.messages, marks=t.marks)
    model = tc.run_model(t.messages)
    assert model.startswith("claude-") and tc.context_window(model) == 200_000
    rp = charts.replay_figure(tc.replay(t.messages), marks=t.marks, window=200_000)
    line = next(tr for tr in rp.data if tr.name == "context window 200,000")
    assert list(line.y) == [200_000, 200_000]
    assert rp.layout.legend.y < 0  # below the plot, clear of the toolbar
    assert tc.context_window("openai/gpt-4o-mini") == 128_000 and tc.context_window("my-model") is None


def test_dollar_heatmap_diverges_at_zero_and_draws_the_break_even() -> None:
    sw = sweep.Sweep((0, 10), (5, 15), ((0, 0), (0, 0)), ((0, 0), (0, 0)), None, 0, "replay",
                     dollars_saved=((1.5, -0.5), (0.25, -2.0)))
    fig = charts.heatmap_figure(sw, "dollars_saved", (0, 5))
    heat = fig.data[0]
    assert heat.zmid == 0 and heat.colorscale[0][1] != heat.colorscale[-1][1]
    contour = next(tr for tr in fig.data if tr.type == "contour")
    assert contour.contours.start == 0 == contour.contours.end


def test_a_priced_replay_sweep_prices_each_cell_once_as_it_runs(t) -> None:
    pricing = tc.PRICING["claude-sonnet-4-5"]
    sw = sweep.sweep(t.messages, tc.ClearToolResultConfig(), [5_000, 20_000], [10_000, 40_000], mode="replay",
                     pricing=pricing)
    for i, th in enumerate(sw.thresholds):
        for j, k in enumerate(sw.keeps):
            c = tc.cost(tc.replay(t.messages, tc.ClearToolResultConfig(th, k)), pricing)
            assert sw.dollars_saved[i][j] == round(c.dollars_saved, 4)
    assert sweep.sweep(t.messages, tc.ClearToolResultConfig(), [5_000], [10_000], mode="replay").dollars_saved is None
