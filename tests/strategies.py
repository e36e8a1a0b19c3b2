"""Hypothesis strategies for conversations and configs, shared by the test_hyp_* files."""

from __future__ import annotations

from hypothesis import strategies as st

from toolclear import ClearToolResultConfig, Message, ToolCall

PLACEHOLDERS = ["[Old tool result content cleared]", "[x]", "", "cleared ✂"]
NAMES = ["", "read_file", "grep", "bash", "Read"]

texts = st.one_of(
    st.sampled_from(["", "a", "abcd", "[x]", "[Old tool result content cleared]", "cleared ✂"]),
    st.text(max_size=40),
    st.text(alphabet="ab\n\r漢🙂é", max_size=60),
)


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    return ToolCall(
        id=draw(st.sampled_from(["c1", "c2", "c3", ""])),
        name=draw(st.sampled_from(NAMES)),
        arguments=draw(st.one_of(st.just(""), st.text(max_size=30))),
    )


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool", "tool", "tool", "exit"]))
    calls = tuple(draw(st.lists(tool_calls(), max_size=2))) if role == "assistant" else ()
    return Message(
        role=role,
        content=draw(texts),
        tool_calls=calls,
        tool_call_id=draw(st.sampled_from(["", "c1", "c2"])) if role == "tool" else "",
        tool_name=draw(st.sampled_from(NAMES)) if role == "tool" else "",
    )


conversations = st.lists(messages(), max_size=30)


@st.composite
def configs(draw: st.DrawFn) -> ClearToolResultConfig:
    return ClearToolResultConfig(
        tool_result_token_threshold=draw(st.integers(0, 40)),
        keep_recent_tokens=draw(st.integers(0, 60)),
        placeholder=draw(st.sampled_from(PLACEHOLDERS)),
        exclude_tools=tuple(draw(st.lists(st.sampled_from(NAMES), max_size=3))),
    )
