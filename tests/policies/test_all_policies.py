"""Properties every policy keeps, and replay equal to calling the policy call by call."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear.inspector import exports
from toolclear.model import OMITTED
from toolclear.policies.masking import is_observation

from ..conftest import CORPUS_FILES, SAMPLE_FILES, corpus_id, hypothesis_examples
from .test_langchain import generate

POLICIES = [
    tc.ClearToolResultConfig(300, 600),
    tc.EinoReductionConfig(max_tokens_for_clear=300, skip_truncation=True),
    tc.EinoReductionConfig(max_tokens_for_clear=300, clear_retention_suffix_limit=2, clear_at_least_tokens=50,
                           skip_truncation=True),
    tc.AnthropicClearToolUsesConfig(trigger_input_tokens=300, keep_tool_uses=2),
    tc.AnthropicClearToolUsesConfig(trigger_input_tokens=300, clear_at_least_input_tokens=400,
                                    clear_tool_inputs=("grep",), exclude_tools=("bash",)),
    tc.AnthropicClearToolUsesConfig(trigger_tool_uses=4, keep_tool_uses=1, clear_tool_inputs=True),
    tc.LangChainClearToolUsesConfig(trigger=300, keep=2),
    tc.LangChainClearToolUsesConfig(trigger=100, clear_at_least=300, clear_tool_inputs=True),
    tc.ObservationMaskingConfig.openhands(6),
    tc.ObservationMaskingConfig.swe_agent(2, polling=3),
]
IDS = [f"{tc.runs.lab.policy_name(p)}-{k}" for k, p in enumerate(POLICIES)]


def conversations(n: int, seed: int = 0):
    rng = random.Random(seed)
    return [generate(rng) for _ in range(n)]


def as_written(original: tc.Message, sent: tc.Message) -> str:
    """The content a log's own format gets back: OpenHands' memory leaves some messages
    out of a request (they stay in the log as they were) and sends a masked result as a
    user turn (its text goes in the result's place)."""
    if sent.role == OMITTED:
        return original.content
    return sent.content.lstrip("\n") if sent.role != original.role else sent.content


def inputs_cleared(config) -> bool:
    return bool(getattr(config, "clear_tool_inputs", False))


def backend_for(config):
    return tc.MemoryBackend() if isinstance(config, tc.EinoReductionConfig) and not config.skip_truncation else None


@pytest.mark.parametrize("config", POLICIES, ids=IDS)
def test_input_untouched_and_only_tool_results_change(config) -> None:
    for msgs in conversations(60, seed=1):
        before = [m.to_dict() for m in msgs]
        for result in (tc.apply(msgs, config), tc.replay(msgs, config)):
            assert [m.to_dict() for m in msgs] == before
            assert len(result.messages) == len(msgs)
            for a, b in zip(msgs, result.messages):
                if getattr(config, "unit", "") == "events" and (b.role == OMITTED or b.role != a.role):
                    # OpenHands sends a masked observation as a user turn and leaves a call
                    # whose result was masked out of the request, with its other results
                    assert (b.role, b.content) == (OMITTED, "") or (
                        is_observation(a) and b.role == "user" and b.content.strip() == "<MASKED>")
                    continue
                assert (a.role, a.tool_call_id, a.tool_name) == (b.role, b.tool_call_id, b.tool_name)
                if a.role == "assistant":
                    assert a.content == b.content
                    assert [(c.id, c.name) for c in a.tool_calls] == [(c.id, c.name) for c in b.tool_calls]
                    if not inputs_cleared(config):
                        assert a.tool_calls == b.tool_calls
                    else:
                        assert all(c.arguments in (d.arguments, "{}") for c, d in zip(b.tool_calls, a.tool_calls))
                elif not (a.role == "tool" or is_observation(a)):
                    assert a == b
            assert set(result.cleared_indices) <= {i for i, m in enumerate(msgs)
                                                   if m.role in ("tool", "assistant")}


@pytest.mark.parametrize("config", POLICIES, ids=IDS)
def test_replay_is_the_policy_call_by_call(config) -> None:
    """Each call of replay sends what the reference sends for that call: the policy on the
    raw prefix (request-level policies) or on the state the previous call left (eino)."""
    sticky = isinstance(config, (tc.ClearToolResultConfig, tc.EinoReductionConfig))
    for msgs in conversations(25, seed=2):
        rp = tc.replay(msgs, config)
        state: tuple[tc.Message, ...] = ()
        prev: tuple[tc.Message, ...] | None = None
        for step in rp.steps:
            prefix = tuple(msgs[: step.call_index])
            if sticky:
                state = tc.apply(state + prefix[len(state):], config).messages
                sent = state
            else:
                sent = tc.apply(prefix, config).messages
            assert step.context_tokens == sum(tc.count_tokens(sent)), step
            assert step.context_tokens_unreduced == sum(tc.count_tokens(prefix))
            if prev is not None:
                broke = any(a != b for a, b in zip(prev, sent))
                assert step.cache_break == broke, step
            prev = sent
        assert [m.content for m in rp.messages] == [m.content for m in sent]


@pytest.mark.parametrize("config", POLICIES, ids=IDS)
def test_idempotent_where_the_reference_is(config) -> None:
    """Applying again to what a step sends changes nothing. SWE-agent's placeholder
    counts the lines of what it replaces; a result already holding it keeps it (SWE-agent
    never masks twice; an agent persisting the edit must not see the count turn to 1)."""
    gated = bool(getattr(config, "clear_at_least", 0) or getattr(config, "clear_at_least_input_tokens", None))
    for msgs in conversations(40, seed=3):
        once = tc.apply(msgs, config).messages
        twice = tc.apply(once, config).messages
        if gated and isinstance(config, (tc.AnthropicClearToolUsesConfig, tc.LangChainClearToolUsesConfig)):
            # a gate measured on an already-cleared history need not fire again; what it
            # clears is still only the placeholder
            assert all(b.content in (a.content, config.placeholder) for a, b in zip(once, twice))
            continue
        assert [m.content for m in twice] == [m.content for m in once]


def _pairs(messages):
    calls = {c.id for m in messages for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    return calls, results


WRITES_AS = {f.name: f.writes_as for f in tc.list_formats()}
FORMAT_FILES = sorted(p for p in (CORPUS_FILES[0].parents[2] / "formats").iterdir() if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("path", CORPUS_FILES + FORMAT_FILES + SAMPLE_FILES, ids=corpus_id)
def test_every_policy_keeps_pairs_through_every_export(path, tmp_path) -> None:
    """No tool call loses its result and no result its call, in the file written back."""
    transcripts = tc.load_all(path)
    for config in POLICIES:
        results = [tc.replay(t.messages, config, backend=backend_for(config)) for t in transcripts]
        out = tmp_path / ("out" + "".join(path.suffixes))
        pairs = [(t, r.messages) for t, r in zip(transcripts, results)]
        if any(a.tool_calls != b.tool_calls for t, r in pairs for a, b in zip(t.messages, r) if b.role != OMITTED):
            with pytest.raises(tc.TranscriptError, match="export eino JSON"):
                tc.dump_all(pairs)  # arguments cannot go back into a log's own format: said, not lost
            eino = tmp_path / "out.json"
            eino.write_bytes(exports.eino_json(pairs[0][1]))  # the app's eino JSON download
            assert _pairs(tc.load(eino, format="eino").messages) == _pairs(transcripts[0].messages)
            continue
        out.write_bytes(tc.dump_all(pairs))
        back = tc.load_all(out, format=WRITES_AS[transcripts[0].format])
        assert [_pairs(b.messages) for b in back] == [_pairs(t.messages) for t in transcripts], config
        for b, t, r in zip(back, transcripts, results):
            assert [m.content for m in b.messages] == [as_written(o, m) for o, m in zip(t.messages, r.messages)]


@settings(max_examples=hypothesis_examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(0, len(POLICIES) - 1))
def test_hyp_results_count_what_they_show(seed, k) -> None:
    config = POLICIES[k]
    msgs = generate(random.Random(seed))
    r = tc.replay(msgs, config)
    assert r.token_counts_after == tc.count_tokens(r.messages)
    assert r.tokens_sent <= r.tokens_sent_unreduced or any(
        len(m.content) < 20 for m in msgs if m.role == "tool")  # placeholders can outgrow tiny results
    assert r.cache_breaks == sum(1 for s in r.steps if s.cache_break)
    assert len(r.statuses) == len(msgs)
    json.dumps([s._asdict() for s in r.steps])


def test_a_persisted_mask_keeps_its_line_count_and_status() -> None:
    config = tc.ObservationMaskingConfig.swe_agent(1)
    msgs = [tc.Message("user", "go")]
    for k in range(4):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", "read", "{}"),)),
                 tc.Message("tool", "x\n" * (10 + k), tool_call_id=f"c{k}", tool_name="read")]
    once = tc.apply(msgs, config)
    assert [m.content for m in once.messages if m.role == "tool"][1:3] == [
        "Old environment output: (11 lines omitted)", "Old environment output: (12 lines omitted)"]
    twice = tc.apply(once.messages, config)
    assert twice.messages == once.messages and twice.cleared_indices == ()
    assert [str(s) for s in twice.statuses if s != tc.MessageStatus.KEPT] == [
        "protected", "already cleared", "already cleared", "protected"]
    # a real result that merely looks like a mask elsewhere in the text is still masked
    odd = msgs[:4] + [msgs[4].with_content("Old environment output: (3 lines omitted) and more")] + msgs[5:]
    assert "(1 lines omitted)" in tc.apply(odd, config).messages[4].content
