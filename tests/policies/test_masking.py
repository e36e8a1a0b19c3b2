"""Every public observation-masking vector (recorded by running SWE-agent's
``LastNObservations`` and OpenHands' ``ObservationMaskingCondenser`` with its
``ConversationMemory``; see data/masking_vectors.README.md) must pass, read through the
loaders a user would use, in one pass and as the last step of a replay."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import toolclear as tc
from toolclear import ObservationMaskingConfig as Masking
from toolclear.model import OMITTED

DATA = Path(__file__).parents[1] / "data" / "masking_vectors.jsonl.gz"
with gzip.open(DATA, "rt", encoding="utf-8") as fh:
    CASES = [json.loads(line) for line in fh]
SCORED = [c for c in CASES if c.get("scored", True)]


def _load(case: dict[str, Any]) -> tc.Transcript:
    if case["reference"] == "swe-agent":
        return tc.load(text=json.dumps({"history": case["input"]["history"]}), format="swe-agent")
    return tc.load(text=json.dumps(case["input"]["events"]), format="openhands")


def _config(case: dict[str, Any]) -> Masking:
    c = case["config"]
    if case["reference"] == "swe-agent":
        return Masking.swe_agent(c["n"], c["polling"])
    if c["source"] == "class_default":
        return Masking.openhands(case["expected"]["attention_window"])
    return Masking.openhands() if c["attention_window"] is None else Masking.openhands(c["attention_window"])


def skeleton(messages: Any) -> list[list[Any]]:
    """MASKING.md's ``llm_skeleton`` of what toolclear sends: tool messages after an
    assistant message in that message's call order."""
    items: list[list[Any]] = []
    for m in messages:
        if m.role == "assistant":
            items.append(["assistant", [c.id for c in m.tool_calls]])
        elif m.role == "tool":
            items.append(["tool", m.tool_call_id, m.content.strip() == "<MASKED>"])
        elif m.role == "user" and m.content.strip() == "<MASKED>":
            items.append(["user", "<MASKED>"])
    out: list[list[Any]] = []
    i = 0
    while i < len(items):
        out.append(items[i])
        j = i + 1
        if items[i][0] == "assistant":
            while j < len(items) and items[j][0] == "tool":
                j += 1
            order = items[i][1]
            out += sorted(items[i + 1:j], key=lambda t: order.index(t[1]) if t[1] in order else len(order))
        i = j
    return out


def test_vector_file_is_the_public_half() -> None:
    assert len(CASES) == 416
    assert sum(c["reference"] == "swe-agent" for c in CASES) == 260
    assert len(CASES) - len(SCORED) == 2


@pytest.mark.parametrize("case", SCORED, ids=[c["id"] for c in SCORED])
def test_masking_vector(case: dict[str, Any]) -> None:
    expected = case["expected"]
    messages = _load(case)
    if "error" in expected:
        with pytest.raises(tc.ConfigError):
            tc.apply(messages, _config(case))
        return
    result = tc.apply(messages, _config(case))
    if case["reference"] == "swe-agent":
        history = case["input"]["history"]
        assert len(messages) == len(history)  # one message per history entry
        masked = {int(k): v for k, v in expected["masked_content"].items()}
        assert set(expected["masked_indices"]) == set(masked)
        for i, (before, after) in enumerate(zip(messages, result.messages)):
            if i in masked:
                assert after.content == masked[i], i
                assert after.role == before.role
            else:
                assert after is before or after.content == before.content, i
    else:
        assert skeleton(result.messages) == expected["llm_skeleton"]


REPLAYED = [c for c in SCORED if "error" not in c["expected"]][::3]


@pytest.mark.parametrize("case", REPLAYED, ids=[c["id"] for c in REPLAYED])
def test_replay_ends_where_the_reference_ends(case: dict[str, Any]) -> None:
    """A replay moves call by call; its last step, over the whole history, is the
    reference's output, and each call's context is what one pass over it sends."""
    messages = _load(case)
    config = _config(case)
    result = tc.replay(messages, config)
    if case["reference"] == "openhands":
        assert skeleton(result.messages) == case["expected"]["llm_skeleton"]
    else:
        masked = set(case["expected"]["masked_indices"])
        assert {i for i, (a, b) in enumerate(zip(messages, result.messages)) if a.content != b.content} == masked
    for step in result.model_call_steps[::4]:
        once = tc.apply(messages[:step.call_index], config)
        assert step.context_tokens == sum(once.token_counts_after), step.call_index


def test_openhands_default_window_is_the_configs() -> None:
    assert Masking.openhands().keep_last == 100
    with pytest.raises(tc.ConfigError):
        Masking.openhands(0)


def test_swe_agent_refuses_what_swe_agent_refuses() -> None:
    with pytest.raises(tc.ConfigError, match="n"):
        Masking.swe_agent(0)
    with pytest.raises(tc.ConfigError, match="polling"):
        Masking.swe_agent(3, 0)


def test_left_out_messages_cost_nothing() -> None:
    """What OpenHands leaves out of the request (a call whose result was masked, its
    other results) is kept in place, empty, and counted as no tokens."""
    case = next(c for c in SCORED if "parallel_calls" in c["features"] and c["expected"].get("masked_event_ids")
                and "error" not in c["expected"])
    result = tc.apply(_load(case), _config(case))
    omitted = [i for i, m in enumerate(result.messages) if m.role == OMITTED]
    assert omitted
    assert all(result.token_counts_after[i] == 0 for i in omitted)
    assert all(result.statuses[i] == tc.MessageStatus.CLEARED for i in omitted)


def test_openhands_masking_on_a_run_without_structured_calls_says_why_its_losses_are_an_artifact(tmp_path) -> None:
    """SWE-agent's older trajectories record no tool calls: OpenHands' memory drops every
    such result at once. The replay says so, and the corpus row carries it."""
    import shutil

    from ..conftest import CORPUS

    path = CORPUS / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj"
    t = tc.load_all(path)[0]
    r = tc.replay(t.messages, tc.parse_policy("openhands"))
    (note,) = [n for n in r.notes if "no structured tool call" in n]
    results = sum(1 for m in t.messages if m.role == "tool")
    assert note.startswith(f"{results} of the {results} tool results")
    with_calls = tc.load(CORPUS / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl")
    assert not [n for n in tc.replay(with_calls.messages, tc.parse_policy("openhands")).notes
                if "no structured tool call" in n]
    shutil.copy(path, tmp_path / path.name)
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path), [tc.parse_policy("openhands")], engine="serial")
    assert "no structured tool call" in sweep.table["note"].iloc[0]
