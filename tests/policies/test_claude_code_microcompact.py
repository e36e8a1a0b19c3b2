"""Claude Code's time-based microcompact on real Claude Code sessions: the documented rule
(past an idle gap, every tool result but the most recent keepRecent becomes the
placeholder, and stays so), driven by the times the log records; and the point of it: a
clear made on a cold cache costs no cache write the run was not paying already."""

from __future__ import annotations

import io

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.model import reply_time
from toolclear.policies.claude_code_microcompact import PLACEHOLDER, MicrocompactConfig

from ..conftest import CORPUS

LARGE = CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"  # idle gaps up to 37 minutes


def _gaps(messages, minutes: int) -> list[int]:
    """The message index of each reply that came more than ``minutes`` after the one before."""
    replies = [(i, reply_time(m)) for i, m in enumerate(messages) if m.role == "assistant" and reply_time(m) is not None]
    return [i for (_, a), (i, b) in zip(replies, replies[1:]) if b - a > minutes * 60]


@pytest.mark.parametrize("minutes,keep", [(10, 5), (20, 0), (30, 12)])
def test_past_each_idle_gap_all_but_the_recent_results_are_cleared_and_stay_so(minutes: int, keep: int) -> None:
    run = tc.load(LARGE)
    msgs = run.messages
    gaps = _gaps(msgs, minutes)
    assert gaps, "the session has such a gap"
    config = MicrocompactConfig(gap_threshold_minutes=minutes, keep_recent=keep)
    rp = tc.replay(msgs, config)
    for step in rp.model_call_steps:
        sent = tc.replay(msgs[:step.call_index + 1], config).messages[:step.call_index]
        results = [i for i, m in enumerate(msgs[:step.call_index]) if m.role == "tool"]
        if step.call_index < gaps[0]:
            assert all(sent[i].content == msgs[i].content for i in results)  # nothing before the first gap
        if step.call_index in gaps:
            live = [i for i in results if msgs[i].content != PLACEHOLDER]
            recent = set(live[len(live) - keep:]) if keep else set()
            assert all((sent[i].content == PLACEHOLDER) != (i in recent) for i in live), step.call_index
    assert len(rp.cleared_indices) >= sum(1 for m in msgs if m.role == "tool") // 2


def test_a_clear_on_a_cold_cache_breaks_nothing_it_was_paying_for() -> None:
    """The gap is longer than the cache lives (5 minutes): the call after it writes its
    whole prompt anyway, so clearing then saves money, where the same clear made while
    the cache is warm (eino's) costs its cache rewrite."""
    run = tc.load(LARGE)
    table = tc.compare(run, [MicrocompactConfig(gap_threshold_minutes=10, keep_recent=5)],
                       pricing="claude-sonnet-4-5")
    row = table.rows[-1]  # after the run as recorded (the session compacted)
    assert row["tokens_saved"] > 0 and row["net_dollars_saved"] > 0


def test_a_log_without_reply_times_is_never_microcompacted() -> None:
    run = tc.load(LARGE)
    bare = [tc.Message(m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name) for m in run.messages]
    assert tc.replay(bare, MicrocompactConfig(gap_threshold_minutes=0)).cleared_indices == ()


def test_by_its_registry_name_in_the_cli() -> None:
    out, err = io.BytesIO(), io.StringIO()
    assert main(["compare", str(LARGE), "--policy", "claude-code-microcompact:gap=10,keep=5"], stdout=out,
                stderr=err) == 0, err.getvalue()
    assert "microcompact after 10 min, keep 5" in out.getvalue().decode()
    assert tc.parse_policy("claude-code-microcompact:gap_threshold_minutes=10,keep_recent=3,only=Read|Bash") == \
        MicrocompactConfig(10, 3, tools=("Read", "Bash"))
