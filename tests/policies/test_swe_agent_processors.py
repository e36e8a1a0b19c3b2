"""SWE-agent's RemoveRegex and ClosedWindowHistoryProcessor against vectors recorded
from SWE-agent's own code (tests/data/swe_agent_processors_vectors.jsonl.gz, its README
says how), and the two policies reached through the registry like every other."""

from __future__ import annotations

import gzip
import io
import json

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.model import OMITTED
from toolclear.policies.swe_agent_closed_window import ClosedWindowConfig
from toolclear.policies.swe_agent_remove_regex import RemoveRegexConfig

from ..conftest import DATA

VECTORS = [json.loads(line) for line in gzip.open(DATA / "swe_agent_processors_vectors.jsonl.gz", "rt")]


def _messages(history: list[dict]) -> list[tc.Message]:
    return [tc.Message(role=h["role"], content=h["content"],
                       meta={"message_type": h.get("message_type", ""), "is_demo": bool(h.get("is_demo")),
                             "tags": ()}) for h in history]


def _config(case: dict):
    if case["processor"] == "remove_regex":
        return RemoveRegexConfig(remove=tuple(case["config"]["remove"]), keep_last=case["config"]["keep_last"])
    return ClosedWindowConfig()


def _sent(messages) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages if m.role != OMITTED]


def test_the_vectors_cover_both_processors_and_the_dropped_windows() -> None:
    kinds = {c["processor"] for c in VECTORS}
    assert kinds == {"remove_regex", "closed_window"}
    assert sum(len(c["expected"]) < len(c["history"]) for c in VECTORS) > 50  # the reference's drop, often
    assert sum(a != b for c in VECTORS for a, b in zip(c["history"], c["expected"])) > 1000


@pytest.mark.parametrize("case", range(len(VECTORS)))
def test_each_vector_sends_what_swe_agent_sends(case: int) -> None:
    c = VECTORS[case]
    got = tc.apply(_messages(c["history"]), _config(c))
    assert _sent(got.messages) == [(e["role"], e["content"]) for e in c["expected"]]


@pytest.mark.parametrize("case", range(0, len(VECTORS), 7))
def test_each_call_of_the_replay_is_the_processor_on_that_prefix(case: int) -> None:
    """The processors run on the whole history before every call: the replay's context
    at each call is the policy applied to that call's prefix."""
    c = VECTORS[case]
    msgs = _messages(c["history"])
    rp = tc.replay(msgs, _config(c))
    for step in rp.model_call_steps:
        sent = tc.apply(msgs[:step.call_index], _config(c)).messages
        assert step.context_tokens == sum(tc.count_tokens(sent))


def test_a_bad_pattern_is_refused_naming_it() -> None:
    with pytest.raises(tc.ConfigError, match=r"remove: '\(unclosed' is not a regular expression"):
        RemoveRegexConfig(remove=("(unclosed",))


@pytest.mark.parametrize("spec,config", [
    ("swe-agent-remove-regex:remove=<diff>.*</diff>|^\\d+:,keep_last=2",
     RemoveRegexConfig(remove=("<diff>.*</diff>", "^\\d+:"), keep_last=2)),
    ("swe-agent-closed-window", ClosedWindowConfig())])
def test_each_is_a_policy_of_the_library_the_cli_and_compare(spec: str, config, tmp_path) -> None:
    """By its registry name with its own option names, in parse_policy, compare, the
    CLI's reduce and policies, on a real SWE-agent trajectory."""
    assert tc.parse_policy(spec) == config
    path = next(p for p in (DATA / "corpus" / "swe_agent").iterdir() if p.suffix == ".traj")
    run = tc.load(path)
    table = tc.compare(run, [config])
    assert table.rows[0]["kind"] == spec.split(":")[0]
    out, err = io.BytesIO(), io.StringIO()
    assert main(["reduce", str(path), "--policy", spec, "-o", str(tmp_path / "out.traj")], stdout=out,
                stderr=err) == 0, err.getvalue()
    back = tc.load(tmp_path / "out.traj")
    assert len(back.messages) == len(run.messages)
    listing = io.BytesIO()
    assert main(["policies"], stdout=listing, stderr=io.StringIO()) == 0
    assert spec.split(":")[0] in listing.getvalue().decode()


def test_closed_windows_on_a_real_trajectory_without_function_calling() -> None:
    """GPT-4's pydicom-1458 run opens and scrolls files: its observations are user turns
    to SWE-agent (toolclear reads them as tool results), and every window a later one of
    the same file replaces is closed; the last one of each file stays open."""
    run = tc.load(DATA / "corpus" / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj")
    got = tc.apply(run.messages, ClosedWindowConfig())
    closed = [i for i in got.cleared_indices if got.messages[i].role != OMITTED]
    assert len(closed) >= 2
    assert all(got.messages[i].content.count("Outdated window with") == 1 for i in closed)
    table = tc.compare(run, [ClosedWindowConfig()])
    assert table.rows[0]["tokens_saved"] > 0
