"""The policy's invariants as properties (hypothesis).

Run long with TOOLCLEAR_HYPOTHESIS_EXAMPLES=1000 (see the README); CI uses a smaller default.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings

import toolclear as tc
from toolclear import MessageStatus

from ..conftest import hypothesis_examples
from ..strategies import configs, conversations

EXAMPLES = hypothesis_examples(200)


def _step_by_step(messages, config):
    history = list(messages)
    steps = []
    for call in [i for i, m in enumerate(messages) if m.role == "assistant"] + [len(messages)]:
        r = tc.reduce_by_tokens(history[:call], config)
        history[:call] = r.messages
        steps.append((call, r))
    return history, steps


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_input_never_mutated(messages, config):
    snapshot = copy.deepcopy([m.to_dict() for m in messages])
    as_tuple = tuple(messages)
    tc.reduce_by_tokens(messages, config)
    tc.replay(messages, config)
    assert [m.to_dict() for m in messages] == snapshot
    assert tuple(messages) == as_tuple


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_only_tool_content_changes_and_only_to_placeholder(messages, config):
    for result in (tc.reduce_by_tokens(messages, config), tc.replay(messages, config)):
        assert len(result.messages) == len(messages)
        for before, after in zip(messages, result.messages):
            assert (after.role, after.tool_calls, after.tool_call_id, after.tool_name, after.name) == (
                before.role, before.tool_calls, before.tool_call_id, before.tool_name, before.name)
            if after.content != before.content:
                assert before.role == "tool"
                assert after.content == config.placeholder


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_window_and_exclusions_never_cleared(messages, config):
    r = tc.reduce_by_tokens(messages, config)
    for i in r.cleared_indices:
        assert r.recent_start_index is not None and i < r.recent_start_index
        assert messages[i].tool_name not in config.exclude_tools
        assert r.statuses[i] is MessageStatus.CLEARED
    for i, m in enumerate(messages):
        if m.role == "tool" and m.tool_name in config.exclude_tools:
            assert r.messages[i].content == m.content
    if r.triggered:
        for i in range(r.recent_start_index, len(messages)):
            assert r.messages[i] == messages[i]
    rp = tc.replay(messages, config)
    for i, m in enumerate(messages):
        if m.role == "tool" and m.tool_name in config.exclude_tools:
            assert rp.messages[i].content == m.content


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_idempotent(messages, config):
    once = tc.reduce_by_tokens(messages, config)
    twice = tc.reduce_by_tokens(once.messages, config)
    assert twice.messages == once.messages
    assert twice.cleared_indices == ()
    rp = tc.replay(messages, config)
    assert tc.replay(rp.messages, config).messages == rp.messages


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_replay_equals_step_by_step(messages, config):
    history, steps = _step_by_step(messages, config)
    rp = tc.replay(messages, config)
    assert list(rp.messages) == history
    assert len(rp.steps) == len(steps)
    prev = None
    for step, (call, r) in zip(rp.steps, steps):
        assert step.call_index == call
        assert step.cleared_indices == r.cleared_indices
        assert step.triggered == r.triggered
        assert step.recent_start_index == r.recent_start_index
        assert step.total_tool_result_tokens == r.total_tool_result_tokens
        assert step.context_tokens == r.tokens_after
        assert step.context_tokens_unreduced == sum(rp.token_counts[:call])
        assert step.cache_break == (bool(r.cleared_indices) and prev is not None and r.cleared_indices[0] < prev)
        prev = call


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_statuses_are_consistent(messages, config):
    r = tc.reduce_by_tokens(messages, config)
    for i, (m, s) in enumerate(zip(messages, r.statuses)):
        if m.role != "tool":
            assert s is MessageStatus.KEPT
        elif s is MessageStatus.PROTECTED:
            assert r.triggered and i >= r.recent_start_index
        elif s is MessageStatus.ALREADY_CLEARED:
            assert m.content == config.placeholder
