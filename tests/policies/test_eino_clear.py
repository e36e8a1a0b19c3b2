"""The clearing policy's API: config validation, eino-style defaults, statuses, purity."""

from __future__ import annotations

import pytest

import toolclear as tc
from toolclear import ClearToolResultConfig, ConfigError, Message, MessageStatus


def _conv() -> list[Message]:
    return [
        Message("system", "s" * 40),
        Message("user", "u" * 8),
        Message("assistant", "", tool_calls=(tc.ToolCall("c1", "read_file", '{"p":1}'),)),
        Message("tool", "r" * 400, tool_call_id="c1", tool_name="read_file"),
        Message("assistant", "", tool_calls=(tc.ToolCall("c2", "grep", "{}"),)),
        Message("tool", "g" * 400, tool_call_id="c2", tool_name="grep"),
        Message("tool", "[Old tool result content cleared]", tool_call_id="c0", tool_name="grep"),
        Message("assistant", "a" * 40),
        Message("tool", "t" * 40, tool_call_id="c3", tool_name="bash"),
    ]


def test_defaults_are_eino_defaults() -> None:
    c = ClearToolResultConfig()
    assert (c.tool_result_token_threshold, c.keep_recent_tokens) == (20000, 40000)
    assert c.placeholder == "[Old tool result content cleared]"
    assert c.exclude_tools == () and c.token_counter == "eino"


def test_zero_is_literal_but_from_eino_reads_it_as_default() -> None:
    literal = ClearToolResultConfig(tool_result_token_threshold=0, keep_recent_tokens=0, placeholder="")
    assert literal.tool_result_token_threshold == 0 and literal.placeholder == ""
    eino = ClearToolResultConfig.from_eino(0, 0, "")
    assert eino == ClearToolResultConfig()
    msgs = [Message("tool", "x", tool_name="t"), Message("user", "y")]
    # threshold 0 literally: 1 token > 0 triggers; keep 0: the last message is the window start
    r = tc.reduce_by_tokens(msgs, literal)
    assert r.triggered and r.recent_start_index == 1 and r.cleared_indices == (0,)
    assert r.messages[0].content == ""
    assert not tc.reduce_by_tokens(msgs, eino).triggered


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"tool_result_token_threshold": -1}, "tool_result_token_threshold"),
        ({"keep_recent_tokens": 1.5}, "keep_recent_tokens"),
        ({"keep_recent_tokens": True}, "keep_recent_tokens"),
        ({"placeholder": None}, "placeholder"),
        ({"exclude_tools": "read_file"}, "exclude_tools"),
        ({"exclude_tools": [1]}, "exclude_tools"),
        ({"token_counter": 3}, "token_counter"),
    ],
)
def test_bad_config_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        ClearToolResultConfig(**kwargs)
    assert issubclass(ConfigError, ValueError)


def test_exclude_list_becomes_a_tuple() -> None:
    assert ClearToolResultConfig(exclude_tools=["a", "b"]).exclude_tools == ("a", "b")


def test_reduction_statuses_and_totals() -> None:
    msgs = _conv()
    config = ClearToolResultConfig(tool_result_token_threshold=100, keep_recent_tokens=120, exclude_tools=("grep",))
    r = tc.reduce_by_tokens(msgs, config)
    assert r.token_counts == (10, 2, 2, 100, 1, 100, 9, 10, 10)
    assert r.total_tool_result_tokens == 210  # the placeholder message is not counted
    assert r.triggered and r.recent_start_index == 5
    assert r.cleared_indices == (3,)
    assert r.statuses == (
        MessageStatus.KEPT, MessageStatus.KEPT, MessageStatus.KEPT, MessageStatus.CLEARED,
        MessageStatus.KEPT, MessageStatus.EXCLUDED, MessageStatus.ALREADY_CLEARED, MessageStatus.KEPT,
        MessageStatus.PROTECTED,
    )
    assert r.token_counts_after[3] == 9 and r.tokens_saved == 91
    assert r.tokens_before == sum(r.token_counts) and r.tokens_after == sum(r.token_counts_after)


def test_not_triggered_keeps_everything() -> None:
    r = tc.reduce_by_tokens(_conv(), ClearToolResultConfig())
    assert not r.triggered and r.recent_start_index is None and r.cleared_indices == ()
    assert r.messages == tuple(_conv())
    assert MessageStatus.PROTECTED not in r.statuses


def test_input_untouched_and_output_is_new() -> None:
    msgs = _conv()
    before = [m.to_dict() for m in msgs]
    r = tc.reduce_by_tokens(msgs, ClearToolResultConfig(tool_result_token_threshold=1, keep_recent_tokens=1))
    assert [m.to_dict() for m in msgs] == before
    assert isinstance(r.messages, tuple) and r.messages is not msgs
    assert r.messages[3] is not msgs[3] and msgs[3].content == "r" * 400


def test_empty_conversation() -> None:
    r = tc.reduce_by_tokens([], ClearToolResultConfig(tool_result_token_threshold=0))
    assert (r.triggered, r.total_tool_result_tokens, r.recent_start_index) == (False, 0, None)


def test_message_round_trip_keeps_unknown_fields() -> None:
    raw = {"role": "tool", "content": "x", "tool_call_id": "c", "tool_name": "t", "response_meta": {"a": 1},
           "extra": {"k": [1, 2]}}
    m = Message.from_dict(raw)
    assert m.to_dict() == raw
    assert m.with_content("y").to_dict() == {**raw, "content": "y"}


def test_message_from_dict_errors_name_the_field() -> None:
    with pytest.raises(tc.TranscriptError, match=r"\$\.content: expected a string, got a number"):
        Message.from_dict({"role": "user", "content": 3})
    with pytest.raises(tc.TranscriptError, match="missing field 'role'"):
        Message.from_dict({"content": "x"})


def test_custom_counter_callable() -> None:
    words = lambda m: len(m.content.split())  # noqa: E731
    msgs = [Message("tool", "a b c d e", tool_name="t"), Message("user", "x y")]
    r = tc.reduce_by_tokens(msgs, ClearToolResultConfig(tool_result_token_threshold=4, keep_recent_tokens=1,
                                                        token_counter=words))
    assert r.token_counts == (5, 2) and r.cleared_indices == (0,)


def test_counter_returning_garbage_is_reported() -> None:
    with pytest.raises(ConfigError, match="message 0"):
        tc.reduce_by_tokens([Message("tool", "x")], ClearToolResultConfig(token_counter=lambda m: -1))
