"""The inspector reads at a glance: each trigger line on its own axis, round dollar
ticks, every tool call's input in the Messages table beside why and needed later,
compactions drawn apart from excluded results, and the HTML report one click away."""

from __future__ import annotations

import html
import json

import toolclear as tc
from toolclear.inspector import charts
from toolclear.runs.report import call_input, call_inputs

from ..conftest import CORPUS
from .test_app import show, start

CC = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"


def test_a_calls_input_is_what_it_was_asked() -> None:
    assert call_input(json.dumps({"file_path": "/src/a.go", "limit": 20})) == "/src/a.go"
    assert call_input(json.dumps({"command": "go test ./...\n  -run X", "timeout": 5})) == "go test ./... -run X"
    assert call_input(json.dumps({"a": 1, "b": "x"})) == "a=1, b=x"
    assert call_input("not json") == "not json" and call_input("") == ""
    assert call_input(json.dumps({"command": "y" * 500})).endswith("…")
    assert "\x1b" not in call_input(json.dumps({"command": "\x1b[31mred"}))
    t = tc.load(CC)
    inputs = call_inputs(t.messages)
    tools = [i for i, m in enumerate(t.messages) if m.role == "tool"]
    assert sum(1 for i in tools if inputs[i]) >= 0.9 * len(tools)
    assert all(inputs[i] == "" for i, m in enumerate(t.messages) if m.role != "tool")
    reads = [inputs[i] for i in tools if t.messages[i].tool_name == "Read"]
    assert reads and all(r.startswith("/") for r in reads)


def test_the_charts_keep_their_marks_apart_and_their_lines_on_their_axes() -> None:
    assert charts.COMPACTION_COLOR not in charts.STATUS_COLORS.values()
    t = tc.load(CC)
    rp = tc.replay(t.messages, tc.ClearToolResultConfig(10_000, 20_000))
    fig = charts.replay_figure(rp, marks=t.marks)
    by_name = {tr.name: tr for tr in fig.data}
    threshold = next(tr for name, tr in by_name.items() if name.startswith("threshold"))
    trigger = next(tr for name, tr in by_name.items() if name.startswith("tool-result tokens"))
    assert threshold.yaxis == trigger.yaxis == "y2" and fig.layout.yaxis2.title.text.startswith("tool-result")
    assert all(tr.yaxis in (None, "y") for name, tr in by_name.items() if name.startswith("sent"))
    assert {s.line.color for s in fig.layout.shapes} == {charts.COMPACTION_COLOR}
    c = tc.cost(rp, "claude-opus-4-6")
    cf = charts.cost_figure(c)
    assert cf.layout.yaxis.tickformat == cf.layout.yaxis2.tickformat == ",.2~r"


def test_the_messages_table_leads_with_the_input_why_and_needed_later() -> None:
    at = start()
    at.file_uploader(key="upload").set_value((CC.name, CC.read_bytes(), "application/jsonl")).run()
    at.radio(key="mode").set_value("replay").run()
    at.number_input(key="p_eino_tool_result_token_threshold_input").set_value(10_000).run()
    at.number_input(key="p_eino_keep_recent_tokens_input").set_value(20_000).run()
    show(at, "Messages")
    assert not at.exception, at.exception
    table = next(df for df in at.dataframe if "why" in df.value.columns)
    order = list(table.proto.column_order)
    assert order[:6] == ["index", "tool_name", "input", "status", "why", "needed_later"], order
    inputs = table.value["input"]
    assert inputs[table.value["tool_name"] == "Bash"].str.len().gt(0).all()


def test_the_export_view_has_the_html_report_of_the_verdict_on_screen() -> None:
    at = start()
    at.file_uploader(key="upload").set_value((CC.name, CC.read_bytes(), "application/jsonl")).run()
    show(at, "Export")
    assert not at.exception, at.exception
    buttons = [b for b in at.get("download_button") if b.proto.label.startswith("Report (HTML")]
    assert len(buttons) == 1
    v = tc.verdict(tc.load(CC), "eino")
    from toolclear.inspector.html_report import html_report

    assert html.escape(v.headline) in html_report(tc.load(CC), v).decode()
