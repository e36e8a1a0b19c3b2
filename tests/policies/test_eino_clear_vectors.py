"""Every reference vector of eino's clearing and offloading must pass."""

from __future__ import annotations

import pytest

import toolclear as tc
from toolclear import ClearToolResultConfig, MemoryBackend, Message, ToolResultOffloadingConfig

from ..conftest import load_vectors

CLEAR = load_vectors("clear")
OFFLOAD = load_vectors("offload")


def test_vector_file_is_complete() -> None:
    assert len(CLEAR) == 400
    assert len(OFFLOAD) == 60


@pytest.mark.parametrize("case", CLEAR, ids=[c["id"] for c in CLEAR])
def test_clear_vector(case: dict) -> None:
    config = ClearToolResultConfig.from_eino(**case["config"])
    eff = case["effective"]
    assert config.tool_result_token_threshold == eff["tool_result_token_threshold"]
    assert config.keep_recent_tokens == eff["keep_recent_tokens"]
    assert config.placeholder == eff["placeholder"]
    assert list(config.exclude_tools) == eff["exclude_tools"]

    messages = [Message.from_dict(m) for m in case["messages"]]
    result = tc.reduce_by_tokens(messages, config)
    expected = case["expected"]
    assert list(result.token_counts) == expected["token_counts"]
    assert result.total_tool_result_tokens == expected["total_tool_result_tokens"]
    assert result.triggered is expected["triggered"]
    assert result.recent_start_index == expected["recent_start_index"]
    assert list(result.cleared_indices) == expected["cleared_indices"]
    assert [m.to_dict() for m in result.messages] == expected["messages"]
    # the input is untouched and a second run changes nothing more
    assert [m.to_dict() for m in messages] == case["messages"]
    again = tc.reduce_by_tokens(result.messages, config)
    assert again.cleared_indices == ()
    assert again.messages == result.messages


@pytest.mark.parametrize("case", CLEAR[:120], ids=[c["id"] for c in CLEAR[:120]])
def test_clear_vector_literal_config_matches_effective(case: dict) -> None:
    """Building the config literally from the effective values gives the same result."""
    eff = case["effective"]
    config = ClearToolResultConfig(
        tool_result_token_threshold=eff["tool_result_token_threshold"],
        keep_recent_tokens=eff["keep_recent_tokens"],
        placeholder=eff["placeholder"],
        exclude_tools=tuple(eff["exclude_tools"]),
    )
    result = tc.reduce_by_tokens([Message.from_dict(m) for m in case["messages"]], config)
    assert list(result.cleared_indices) == case["expected"]["cleared_indices"]


@pytest.mark.parametrize("case", OFFLOAD, ids=[c["id"] for c in OFFLOAD])
def test_offload_vector(case: dict) -> None:
    config = ToolResultOffloadingConfig.from_eino(**case["config"])
    assert config.offloading_token_limit == case["effective"]["offloading_token_limit"]
    assert config.read_file_tool_name == case["effective"]["read_file_tool_name"]
    backend = MemoryBackend()
    done = tc.offload(case["result"], case["tool_call_id"], case["tool_name"], config, backend)
    expected = case["expected"]
    assert done.token_count == expected["token_count"]
    assert done.offloaded is expected["offloaded"]
    assert done.path == expected["path"]
    assert done.message == expected["message"]
    if done.offloaded:
        assert backend.files == {expected["path"]: case["result"]}
    else:
        assert backend.files == {}
