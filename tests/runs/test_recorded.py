"""The run as recorded: the agent's own compactions as a Result, what they cost and what
they lost, on the corpus's real compacted Claude Code sessions (whole, and cut so the
compaction comes early in the file, as a session continued from an earlier one is), a
manual compaction, and Codex's ``compacted`` records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import toolclear as tc
from toolclear.cost.logfacts import compactions_of
from toolclear.model import OMITTED, MessageStatus

from ..conftest import CORPUS

CC = CORPUS / "claude_code"
COMPACTED = [CC / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl",
             CC / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"]
CODEX = CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl"


def boundary_lines(path: Path) -> list[tuple[int, dict]]:
    out = []
    for n, line in enumerate(path.read_text().splitlines()):
        rec = json.loads(line)
        if rec.get("subtype") == "compact_boundary":
            out.append((n, rec))
    return out


def cut_before_compaction(path: Path, lines_before: int, tmp_path: Path) -> Path:
    """The session from ``lines_before`` lines before its compaction on: what a file that
    starts mid-session (a continued session) holds."""
    lines = path.read_text().splitlines(keepends=True)
    n = boundary_lines(path)[0][0]
    out = tmp_path / f"{path.stem}-from-{lines_before}.jsonl"
    out.write_text("".join(lines[max(0, n - lines_before):]))
    return out


@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: p.name[:30])
def test_recorded_lists_each_compaction_as_the_log_records_it(path: Path) -> None:
    t = tc.load(path)
    r = tc.recorded(t)
    (n, line), = boundary_lines(path)
    (c,) = r.compactions
    assert c.trigger == line["compactMetadata"]["trigger"] == "auto"
    assert c.tokens_before == line["compactMetadata"]["preTokens"]
    summary = compactions_of(t.messages)[0]
    assert c.summary == summary and t.messages[summary].content.startswith("This session is being continued")
    assert c.dropped == tuple(range(summary))  # everything before the summary
    assert c.at == next(i for i in range(summary, len(t)) if t.messages[i].role == "assistant")
    assert c.summary_tokens == tc.count_tokens([t.messages[summary]])[0]
    # the dropped messages are left out of every later call and marked as compacted
    assert all(r.messages[i].role == OMITTED for i in c.dropped)
    assert all(r.statuses[i] is MessageStatus.COMPACTED for i in c.dropped)
    step = next(s for s in r.model_call_steps if s.call_index == c.at)
    assert step.cache_break and step.context_tokens < step.context_tokens_unreduced / 2
    assert c.tokens_after == t.messages[c.at].usage.prompt_tokens  # the log's own figure: what it sent
    assert c.tokens_after < c.tokens_before / 2
    # before the compaction the run is sent whole
    assert all(s.context_tokens == s.context_tokens_unreduced for s in r.model_call_steps if s.call_index < c.at)


@pytest.mark.parametrize("lines_before", [None, 2, 10, 40, 100])
@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: p.name[:30])
def test_the_cost_of_the_run_as_recorded_is_within_15_percent_of_its_bill(path: Path, lines_before, tmp_path) -> None:
    """Whole sessions and sessions that compact early in the file (cut 2-100 lines before
    the compaction): the file lacks the history the first calls sent, and after the
    compaction Claude Code sends the files it attaches again."""
    file = path if lines_before is None else cut_before_compaction(path, lines_before, tmp_path)
    t = tc.load(file)
    bill = tc.recorded_cost(t.messages)
    c = tc.cost(tc.recorded(t), calibrate=True)
    # the calls' input as the log bills them (Claude Code does not log its summarization call)
    assert c.input_dollars - sum(x.input_dollars for x in c.compaction_calls) == pytest.approx(
        bill.input_dollars, rel=0.15)
    # the summarization call is priced, once per compaction, and is in the dollars
    (call,) = c.compaction_calls
    assert call.prompt_tokens == tc.recorded(t).compactions[0].tokens_before and call.output_tokens > 0
    assert c.dollars == pytest.approx(c._sum("dollars") + call.dollars)


def test_a_manual_compaction_is_read_as_manual(tmp_path) -> None:
    src = COMPACTED[1]
    lines = src.read_text().splitlines(keepends=True)
    n, rec = boundary_lines(src)[0]
    rec["compactMetadata"] = {"trigger": "manual", "preTokens": 91_234}
    lines[n] = json.dumps(rec) + "\n"
    file = tmp_path / "manual.jsonl"
    file.write_text("".join(lines))
    (c,) = tc.recorded(tc.load(file)).compactions
    assert (c.trigger, c.tokens_before) == ("manual", 91_234)


def test_without_a_compaction_the_run_as_recorded_is_the_run() -> None:
    t = tc.load(CC / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl")
    r = tc.recorded(t)
    assert r.compactions == () and not r.cleared_indices
    assert all(s.context_tokens == s.context_tokens_unreduced for s in r.steps)
    c = tc.cost(r, calibrate=True)
    assert c.dollars == pytest.approx(c.dollars_without_policy) and c.compaction_calls == ()


def test_what_a_compaction_lost_counts_a_refetch_even_when_its_name_survived_in_the_summary() -> None:
    """After the real compaction the agent read files again: each is a needed result of
    the compaction, also the ones whose names the summary kept (the terms alone would
    not charge them: the summary still holds the name)."""
    t = tc.load(COMPACTED[1])
    r = tc.recorded(t)
    (c,) = r.compactions
    lost = tc.losses(r)
    refetched = [ref for ref in lost.references if ref.terms == ("(fetched again)",)]
    assert refetched
    summary = t.messages[c.summary].content
    named = []
    for ref in refetched:
        assert ref.message_index in c.dropped and ref.message_index in lost.needed
        call = t.messages[ref.call_index]
        paths = [json.loads(x.arguments).get("file_path", "") for x in call.tool_calls if x.name == "Read"]
        named += [p for p in paths if p and p.rsplit("/", 1)[-1] in summary]
    assert named, "some file read again was named in the summary"
    # and the same reads without the re-fetch rule: the named ones are not charged by terms
    by_terms = {ref.message_index for ref in lost.references if ref.terms != ("(fetched again)",)}
    assert {ref.message_index for ref in refetched} - by_terms


def test_a_refetch_charges_only_the_latest_earlier_result_of_that_call() -> None:
    m = tc.Message
    msgs = [m("user", "go")]
    for k, (tool, args) in enumerate([("Read", '{"file_path": "/a.py"}'), ("Grep", '{"pattern": "x"}'),
                                      ("Read", '{"file_path": "/a.py", "offset": 10}'), ("Grep", '{"pattern": "y"}'),
                                      ("Read", '{"file_path": "/a.py"}')]):
        msgs += [m("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", tool, args),)),
                 m("tool", f"contents {k} " * 50, tool_call_id=f"c{k}")]
    msgs += [m("assistant", "done")]
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert r.cleared_at[2] == 5 and r.cleared_at[6] == 9  # each read cleared by the time the file is read again
    lost = tc.losses(r)
    refetch = [(x.call_index, x.message_index) for x in lost.references if x.terms == ("(fetched again)",)]
    # each re-read (another offset is the same file) charged to the read just before it, not to every earlier one
    assert refetch == [(5, 2), (9, 6)]
    assert {2, 6} <= set(lost.needed)


def test_compare_puts_the_run_as_recorded_first_when_the_log_compacted() -> None:
    t = tc.load(COMPACTED[0])
    eino = tc.parse_policy("eino")
    cmp = tc.compare(t.messages, [eino], pricing="auto")
    assert [r["kind"] for r in cmp.rows] == ["as-recorded", "eino"]
    assert cmp.rows[1]["dollars_without_policy"] == pytest.approx(cmp.rows[0]["dollars"], abs=1e-6)
    assert [r["kind"] for r in tc.compare(t.messages, [eino], pricing="auto", recorded=False).rows] == ["eino"]
    assert [r["kind"] for r in tc.compare(t.messages, [eino]).rows] == ["eino"]  # unpriced: as asked
    plain = tc.load(CC / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl")
    assert [r["kind"] for r in tc.compare(plain.messages, [eino], pricing="auto").rows] == ["eino"]
    assert [r["kind"] for r in tc.compare(plain.messages, [eino], pricing="auto", recorded=True).rows] == [
        "as-recorded", "eino"]


def test_compare_and_cost_take_the_run_as_recorded() -> None:
    t = tc.load(COMPACTED[0])
    cmp = tc.compare(t.messages, [tc.parse_policy("as-recorded"), tc.parse_policy("eino")], pricing="auto")
    row = cmp.rows[0]
    assert row["policy"] == "as recorded" and row["kind"] == "as-recorded"
    assert row["dollars"] == pytest.approx(tc.cost(tc.recorded(t, calibration=tc.calibrate(t.messages)),
                                                   calibrate=True).dollars, abs=1e-6)


def codex_with_compaction(tmp_path: Path, history: bool) -> Path:
    """The corpus's real Codex rollout with a ``compacted`` record two thirds in, as
    Codex writes it (``message``: its summary prefix and the summary; newer versions add
    the ``replacement_history`` it continued from)."""
    lines = CODEX.read_text().splitlines(keepends=True)
    at = 2 * len(lines) // 3
    user = json.loads(lines[2])["payload"]
    payload: dict = {"message": "Another language model started to solve this problem and produced a summary of its "
                                "thinking process.\nThe user wants the chat wired up; the server part is done."}
    if history:
        payload["replacement_history"] = [user, {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": payload["message"]}]}]
    rec = {"timestamp": json.loads(lines[at])["timestamp"], "type": "compacted", "payload": payload}
    out = tmp_path / f"codex-{history}.jsonl"
    out.write_text("".join(lines[:at]) + json.dumps(rec) + "\n" + "".join(lines[at:]))
    return out


@pytest.mark.parametrize("history", [False, True])
def test_codex_compacted_records_are_compactions_that_keep_the_users_messages(history, tmp_path) -> None:
    t = tc.load(codex_with_compaction(tmp_path, history))
    (k,) = compactions_of(t.messages)
    assert t.messages[k].content.startswith("Another language model")
    r = tc.recorded(t)
    (c,) = r.compactions
    task = next(i for i, m in enumerate(t.messages) if m.role == "user" and m.content.startswith("finish up"))
    env = next(i for i, m in enumerate(t.messages) if m.content.startswith("<environment_context>"))
    assert task not in c.dropped and env in c.dropped  # the user's task stays; the session context is resent anyway
    assert r.messages[task].role == "user" and all(r.messages[i].role == OMITTED for i in c.dropped)
    assert c.source == "codex compacted" and c.trigger == ""
    # the file writes back byte for byte, and an edit of the summary lands in the record's message
    assert tc.dump(t) == codex_with_compaction(tmp_path, history).read_bytes()
    edited = tc.dump(t, [m.with_content("short") if i == k else m for i, m in enumerate(t.messages)])
    rec = next(json.loads(x) for x in edited.decode().splitlines() if json.loads(x)["type"] == "compacted")
    assert rec["payload"]["message"] == "short"


def test_the_cli_lists_the_compactions_and_compares_against_the_run_as_recorded() -> None:
    import io

    from toolclear.cli import main

    path = COMPACTED[1]
    out = io.BytesIO()
    assert main(["inspect", str(path)], stdout=out, stderr=io.StringIO()) == 0
    text = out.getvalue().decode()
    (c,) = tc.recorded(tc.load(path)).compactions
    assert f"compaction 1 before call {c.at:,} (auto): {c.tokens_before:,} -> {c.tokens_after:,} tokens" in text
    out = io.BytesIO()
    assert main(["compare", str(path), "--policy", "claude-code-compact", "--policy", "eino"], stdout=out,
                stderr=io.StringIO()) == 0
    lines = out.getvalue().decode().splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("policy "))
    assert lines[head + 1].startswith("as recorded") and lines[head + 2].startswith("claude-code-compact")
    out = io.BytesIO()
    assert main(["compare", str(path), "--json"], stdout=out, stderr=io.StringIO()) == 0
    doc = json.loads(out.getvalue())
    assert doc["verdict"]["recorded"]["kind"] == "as-recorded" and doc["verdict"]["compactions"] == 1
    assert doc["policies"][0]["kind"] == "eino"  # the judged setting stays first in the rows


@pytest.mark.parametrize("path", [*COMPACTED, CC / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl"],
                         ids=lambda p: p.name[:30])
def test_the_fast_replay_of_the_run_as_recorded_is_the_engines(path: Path, tmp_path) -> None:
    from toolclear.policies.as_recorded import AsRecordedConfig
    from toolclear.runs import lab

    runs = [tc.load(path).messages, tc.load(codex_with_compaction(tmp_path, True)).messages]
    for msgs in runs:
        for counter in (None, "cl100k_base"):
            fast = tc.recorded(msgs, counter=counter)
            slow = lab._run(msgs, AsRecordedConfig(), counter, None, (), "replay")
            assert fast.steps == slow.steps and fast.cleared_at == slow.cleared_at
            assert fast.messages == slow.messages and fast.statuses == slow.statuses
            assert fast.compactions == slow.compactions and fast.token_counts_after == slow.token_counts_after
            assert tuple(fast._trace.at) == tuple(slow._trace.at) and tuple(fast._trace.saved) == tuple(slow._trace.saved)
            assert tc.cost(fast, "claude-sonnet-4-5", calibrate=True).dollars == pytest.approx(
                tc.cost(slow, "claude-sonnet-4-5", calibrate=True).dollars)


OPENHANDS = CORPUS / "openhands" / "openhands_multi-swe-bench_example_output.jsonl"


def openhands_with_condensations(tmp_path: Path) -> Path:
    """The corpus's real OpenHands evaluation record with two ``CondensationAction``
    events in its history, as OpenHands writes them: the first forgets a range of event
    ids and gives a summary, the second forgets an id list and a new summary."""
    rec = json.loads(OPENHANDS.read_text().splitlines()[0])
    history = rec["history"]
    ids = [e["id"] for e in history]
    first = {"id": 90_001, "action": "condensation", "source": "agent", "message": "Summary: ...",
             "args": {"forgotten_events_start_id": ids[4], "forgotten_events_end_id": ids[15],
                      "summary": "USER_CONTEXT: fix the failing test\nCOMPLETED: read the module", "summary_offset": 1}}
    second = {"id": 90_002, "action": "condensation", "source": "agent", "message": "Summary: ...",
              "args": {"forgotten_event_ids": ids[16:30], "summary": "USER_CONTEXT: fix it\nCOMPLETED: the fix",
                       "summary_offset": 1}}
    rec["history"] = history[:20] + [first] + history[20:36] + [second] + history[36:]
    out = tmp_path / "openhands-condensed.jsonl"
    out.write_text(json.dumps(rec) + "\n")
    return out


def test_openhands_condensations_drop_exactly_the_events_they_forget(tmp_path) -> None:
    path = openhands_with_condensations(tmp_path)
    t = tc.load(path)
    rec = json.loads(path.read_text())
    ids = [e["id"] for e in rec["history"] if e.get("action") != "condensation"]
    r = tc.recorded(t)
    first, second = r.compactions
    assert first.source == second.source == "openhands condensation"
    summaries = compactions_of(t.messages)
    assert [t.messages[k].content.split("\n")[0] for k in summaries] == ["USER_CONTEXT: fix the failing test",
                                                                          "USER_CONTEXT: fix it"]
    history = rec["history"]

    def event_id(i: int) -> int:  # the id of the event a message was read from (its origin in the file)
        return history[int(t.origins[i].split("history[")[1].split("]")[0])]["id"]
    first_ids = set(range(ids[4], ids[15] + 1))
    assert set(first.dropped) == {i for i in range(summaries[0]) if event_id(i) in first_ids}
    assert set(second.dropped) == {i for i in range(summaries[1]) if i != summaries[0] and event_id(i) in set(ids[16:30])
                                   } | {summaries[0]}  # its summary takes the first one's place
    kept_before_first = [i for i in range(summaries[0]) if i not in first.dropped]
    assert kept_before_first and all(r.messages[i].role != OMITTED for i in kept_before_first
                                     if i not in second.dropped)
    assert all(r.messages[i].role == OMITTED for c in r.compactions for i in c.dropped)
    assert all(m.meta and "openhands_event" in m.meta for m in t.messages)  # the view positions masking reads
    assert tc.dump(t) == path.read_bytes()


def test_an_anthropic_compaction_block_is_a_compaction_of_the_run_as_recorded(tmp_path) -> None:
    """A request body of the Messages API after a server-side compaction (compact_20260112):
    the assistant message whose content starts with the ``compaction`` block holds the
    summary, and later calls do not send what came before it."""
    msgs: list[dict] = [{"role": "user", "content": "Fix the bug in app.py"}]
    for k in range(3):
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "read",
                                                    "input": {"path": f"f{k}.py"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x = 1\n" * 300}]}]
    msgs += [{"role": "assistant", "content": [{"type": "compaction", "content": "Summary: read f0-f2; the bug is in f1."},
                                                {"type": "text", "text": "Continuing."}]},
             {"role": "user", "content": "go on"}, {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": msgs,
                                "context_management": {"edits": [{"type": "compact_20260112"}]}}))
    t = tc.load(path)
    (c,) = tc.recorded(t).compactions
    assert t.messages[c.summary].content.startswith("Summary: read f0-f2")
    assert c.dropped == tuple(range(c.summary)) and c.source == "anthropic compaction block"
    assert tc.dump(t) == path.read_bytes()


def test_anthropic_bills_a_server_compaction_in_usage_iterations_and_toolclear_reads_it() -> None:
    """A cassette of Messages API calls with compact_20260112: the response that compacted
    reports the summarization apart, in ``usage.iterations`` (its top-level counts are the
    answer's alone). The recorded bill and the run as recorded price that call as billed,
    and the compaction's ``tokens_before`` is what it read."""
    model = "claude-sonnet-4-5"
    history: list[dict] = [{"role": "user", "content": "Fix the bug in app.py"}]
    interactions = []

    def call(reply: list[dict], usage: dict) -> None:
        interactions.append({"request": {"parsed_body": {"model": model, "max_tokens": 1024,
                                                         "messages": json.loads(json.dumps(history)),
                                                         "context_management": {"edits": [{"type": "compact_20260112"}]}}},
                             "response": {"parsed_body": {"model": model, "role": "assistant", "content": reply,
                                                          "usage": usage}}})
        history.append({"role": "assistant", "content": reply})

    for k in range(2):
        call([{"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"path": f"f{k}.py"}}],
             {"input_tokens": 1000 + 2000 * k, "output_tokens": 30})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}",
                                                     "content": "x = 1\n" * 300}]})
    call([{"type": "compaction", "content": "Summary: read f0 and f1; the bug is in f1."},
          {"type": "text", "text": "Continuing."}],
         {"input_tokens": 400, "output_tokens": 20,
          "iterations": [{"type": "compaction", "input_tokens": 5200, "output_tokens": 300},
                         {"type": "message", "input_tokens": 400, "output_tokens": 20}]})
    history.append({"role": "user", "content": "go on"})
    call([{"type": "text", "text": "Done."}], {"input_tokens": 450, "output_tokens": 5})
    history.append({"role": "user", "content": "thanks"})
    call([{"type": "text", "text": "You are welcome."}], {"input_tokens": 470, "output_tokens": 5})
    runs = tc.load_all(yaml.safe_dump({"interactions": interactions}).encode(), name="compacting.yaml")
    t = runs[-1]
    (c,) = tc.recorded(t).compactions
    assert c.tokens_before == 5200 and c.source == "anthropic compaction block"
    price = tc.pricing_for(model)
    billed = (5200 * price.input + 300 * price.output) / 1e6
    bill = tc.recorded_cost(t.messages)
    assert bill.compaction_dollars == pytest.approx(billed)
    assert bill.dollars == pytest.approx(billed + sum(c.dollars for c in bill.calls))
    priced = tc.cost(tc.recorded(t), model)
    assert [(k.uncached_tokens, k.output_tokens) for k in priced.compaction_calls] == [(5200, 300)]
    assert priced.compaction_dollars == pytest.approx(billed)
