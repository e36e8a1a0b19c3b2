"""One answer everywhere: the same run, setting and pricing give the same dollars in the
library's verdict, the CLI (inspect, compare), the HTML report, the corpus sweep, advise
and the inspector's first screen and Compare view, on real logs, compacted or not, with
and without a model the log names."""

from __future__ import annotations

import html
import io
import json
import shutil

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.runs.report import usd

from ..conftest import CORPUS
from ..inspector.test_app import metrics, show, start

RUNS = {
    "claude-code compacted": CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl",
    "claude-code": CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl",
    "codex": CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl",
    "mini-swe-agent, no model": CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json",
}
SETTINGS = {"Anthropic context editing": "anthropic", "Observation masking (SWE-agent)": "swe-agent"}


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue().decode(), err.getvalue()


@pytest.mark.parametrize("name", RUNS)
@pytest.mark.parametrize("spec", ["anthropic", "swe-agent", "eino:threshold=10000,keep=20000"])
def test_the_library_the_cli_the_report_and_the_corpus_agree(name, spec, tmp_path) -> None:
    path = RUNS[name]
    t = tc.load(path)
    v = tc.verdict(t, spec)
    assert v.row["spec"] == tc.runs.lab.policy_spec(tc.parse_policy(spec)) and v.rows[0] is v.row
    code, out, err = cli("compare", str(path), "--policy", spec, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["policies"][0]["dollars"] == pytest.approx(v.dollars, abs=1e-6)
    assert doc["verdict"]["row"]["cache_breaks"] == v.row["cache_breaks"]
    code, out, err = cli("inspect", str(path), "--policy", spec)
    assert code == 0 and v.headline in out, (out, err)
    code, _, err = cli("report", str(path), "--policy", spec, "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert html.escape(v.headline, quote=True) in (tmp_path / "r.html").read_text()
    shutil.copy(path, tmp_path / path.name)
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path / path.name), [tc.parse_policy(spec)], pricing="auto",
                            engine="serial")
    row = sweep.table.iloc[0]
    assert row["error"] == "" and row["dollars"] == pytest.approx(v.dollars, abs=1e-6)
    assert row["needed_results"] == v.row["needed_results"] and row["cache_breaks"] == v.row["cache_breaks"]
    assert (row["note"] != "") == bool(v.notes)  # a stated default price is said in both


def test_advise_prices_each_session_as_the_verdict_does(tmp_path, monkeypatch) -> None:
    path = RUNS["claude-code compacted"]
    home = tmp_path / "home"
    (home / ".claude" / "projects" / "p").mkdir(parents=True)
    shutil.copy(path, home / ".claude" / "projects" / "p" / "s.jsonl")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    from toolclear.corpus.advice import advise

    (found,) = advise()
    t = tc.load(path)
    for spec in ("anthropic", "swe-agent"):
        label = tc.runs.lab.policy_spec(tc.parse_policy(spec))
        row = found.table[found.table["config"] == label].iloc[0]
        assert row["dollars"] == pytest.approx(tc.verdict(t, spec).dollars, abs=1e-6)


@pytest.mark.parametrize("label", SETTINGS)
def test_the_inspector_shows_the_verdicts_dollars(label) -> None:
    path = RUNS["claude-code compacted"]
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.selectbox(key="policy").set_value(label).run()
    assert not at.exception, at.exception
    v = tc.verdict(tc.load(path), SETTINGS[label])
    m = metrics(at)
    assert at.metric[0].label.startswith("Verdict: ")  # the first thing on the screen
    assert m["With the policy"] == usd(v.dollars) and m["Without it"] == usd(v.dollars_without_policy)
    assert at.metric[0].label == ("Verdict: saves" if v.dollars_saved >= 0 else "Verdict: costs more by")
    assert at.metric[0].value == usd(abs(v.dollars_saved))
    assert m["Cache breaks"] == f"{v.row['cache_breaks']:,}"
    assert any(v.headline.replace("*", "") in a.value.replace("\\", "") for a in [*at.success, *at.warning])
    show(at, "Compare")
    table = next(df.value for df in at.dataframe if "policy" in df.value.columns)
    mine = table[table["policy"] == v.comparison.labels[0]]
    assert mine["dollars"].iloc[0] == pytest.approx(v.dollars, abs=1e-6)


def test_the_counts_mean_the_same_for_every_policy() -> None:
    """Masking turns results into user messages: the run still has its tool results, and
    what changed is counted as it is for a policy that clears."""
    path = RUNS["claude-code compacted"]
    t = tc.load(path)
    tools = sum(1 for m in t.messages if m.role == "tool")
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    for label, spec in SETTINGS.items():
        at.selectbox(key="policy").set_value(label).run()
        at.radio(key="mode").set_value("replay").run()
        r = tc.replay(t.messages, tc.parse_policy(spec), calibration=tc.runs.lab.sent_as(t.messages))
        m = metrics(at)
        assert m["Tool results"] == f"{tools:,}"
        assert m["Changed at some call"] == f"{len(r.cleared_indices):,}"
        assert int(m["Changed at some call"].replace(",", "")) <= len(t.messages)


def test_a_cassette_opens_on_its_conversation_with_the_most_tool_results() -> None:
    path = CORPUS / "anthropic_messages" / "pydantic-ai_vcr_test_tool_search_eval_anthropic.yaml"
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/yaml")).run()
    assert not at.exception, at.exception
    ts = tc.load_all(path)
    richest = max(ts, key=lambda t: sum(1 for m in t.messages if m.role == "tool"))
    assert at.selectbox(key="conversation").value == richest.id != ts[0].id
    code, out, _ = cli("report", str(path), "-o", "/dev/null")
    assert code == 0


def test_every_run_of_the_corpus_gets_a_verdict() -> None:
    """Priced at a stated default when its log names no model, whatever its format: no
    run of the corpus is an internal error (a run with no call to price was one)."""
    paths = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".json", ".jsonl", ".yaml", ".traj"))
    assert len(paths) >= 20
    for path in paths:
        for t in tc.load_all(path)[:3]:
            v = tc.verdict(t, "eino")
            assert v.pricing and v.row["dollars"] >= 0, path
