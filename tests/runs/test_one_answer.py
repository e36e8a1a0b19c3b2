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


@pytest.mark.parametrize("spec", ["eino:threshold=10000,keep=20000", "anthropic", "swe-agent", "langchain"])
def test_the_app_shows_the_verdicts_own_replay_where_it_is_the_same(spec) -> None:
    """A slider move replays the run once: the verdict's replay stands in for the shown one
    only where run_policy would make the same replay (tokens as sent, no files)."""
    from toolclear.inspector.one_run import _same_replay
    from toolclear.inspector.shown import run_policy
    from toolclear.runs.verdict import verdict

    t = tc.load(RUNS["claude-code compacted"])
    config = tc.parse_policy(spec)
    v = verdict(t, config, pricing="claude-sonnet-4-5", calibrate=True, counter="cl100k_base")
    same = _same_replay(v, "replay", True, False, None)
    assert same is not None and same[0] is v.comparison.results[0] and same[1] is None
    shown, _ = run_policy(t, config, "replay", "cl100k_base", None, False)
    assert same[0].statuses == shown.statuses and same[0].cleared_at == shown.cleared_at
    assert [s.context_tokens for s in same[0].steps] == [s.context_tokens for s in shown.steps]
    assert tc.losses(same[0]).needed == tc.losses(shown).needed
    # not the same replay: without calibration, in a single pass, with files or offloading
    assert _same_replay(v, "replay", False, False, None) is None
    assert _same_replay(v, "single pass", True, False, None) is None
    assert _same_replay(v, "replay", True, True, None) is None
    assert _same_replay(v, "replay", True, False, tc.ToolResultOffloadingConfig()) is None
    assert _same_replay(None, "replay", True, False, None) is None


def test_the_settings_tried_beside_the_verdict_leave_no_copies_behind() -> None:
    """The verdict prices each tried setting and keeps its row only: no cleared copy of any
    of them stays alive (eino's outputs per cleared set were kept, tens of MB on a long run)."""
    import gc
    import uuid

    from toolclear.model import Message
    from toolclear.runs.verdict import verdict

    tag = uuid.uuid4().hex  # ids no other test's run has: its copies are this verdict's only
    msgs: list[tc.Message] = [tc.Message("user", "fix the bug")]
    for i in range(60):
        call = tc.ToolCall(id=f"{tag}-{i}", name="read_file", arguments='{"path": "a.py"}')
        msgs += [tc.Message("assistant", f"step {i}", tool_calls=(call,)),
                 tc.Message("tool", f"line {i} " * 300, tool_call_id=call.id, tool_name="read_file")]
    msgs.append(tc.Message("assistant", "done"))
    tried = ["eino:threshold=2000,keep=4000", "eino:threshold=3000,keep=1000", "eino-reduction:skip_truncation=true,max_tokens_for_clear=5000"]
    v = verdict(msgs, "eino:threshold=100000000,keep=1000000000", pricing="claude-sonnet-4-5", tried=tried)
    assert all(r["results_cleared"] for r in v.rows[1:])  # the tried settings did clear
    del v
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is Message and o.content != "" and
                o.tool_call_id.startswith(tag) and not o.content.startswith("line")]
