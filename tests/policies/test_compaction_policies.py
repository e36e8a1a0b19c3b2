"""The compaction policies (LangChain's has its own differential): each one's trigger
and what it keeps, as its reference states them, on histories built so the answer is
known; and on the corpus's real compacted Claude Code sessions, beside the run as
recorded."""

from __future__ import annotations

import pytest

import toolclear as tc
from toolclear.model import OMITTED, MessageStatus
from toolclear.policies import spec_for
from toolclear.policies._compaction import DEFAULT_SUMMARY_RATIO, STAND_IN
from toolclear.runs.lab import policy_spec, sent_as

from ..conftest import CORPUS

M, C = tc.Message, tc.ToolCall
CC = CORPUS / "claude_code"
LARGE = CC / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl"
COMPACTED = [CC / "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl", LARGE]
NAMES = ["anthropic-compaction", "claude-code-compact", "codex-compact", "langchain-summarization",
         "eino-summarization", "openhands-summarizing", "openai-compaction", "adk-compaction"]


def run(turns: int, rounds: int, size: int = 400) -> list[tc.Message]:
    """``turns`` user turns of ``rounds`` tool rounds each; each result ``size`` chars."""
    msgs = [M("system", "You are an agent.")]
    k = 0
    for t in range(turns):
        msgs.append(M("user", f"task {t}: " + "please " * 20))
        for _ in range(rounds):
            k += 1
            msgs += [M("assistant", "", tool_calls=(C(f"c{k}", "read_file", f'{{"path": "f{k}.py"}}'),)),
                     M("tool", f"r{k} " + "x" * size, tool_call_id=f"c{k}")]
        msgs.append(M("assistant", f"done {t}"))
    return msgs


def held_at(r: tc.Result, call: int) -> set[int]:
    """The run's messages the call at ``call`` is sent (not compacted away, not a summary)."""
    gone: set[int] = set()
    summaries: set[int] = set()
    for c in r.compactions:
        if c.at > call:
            break
        gone.update(c.dropped)
        summaries.difference_update(c.dropped)
        summaries.add(c.summary)
    return {i for i in range(call) if i not in gone}


def test_every_compaction_policy_is_registered_and_round_trips_its_spec() -> None:
    for name in NAMES:
        config = tc.parse_policy(name)
        spec = spec_for(config)
        assert spec.compacts and spec.sticky and spec.name == name
        assert tc.parse_policy(policy_spec(config)) == config
        r = tc.replay(run(3, 4), config)
        assert r.compactions == ()  # the defaults are far above a small run


def test_the_summary_stands_for_its_size_and_says_so() -> None:
    msgs = run(4, 6)
    r = tc.replay(msgs, tc.parse_policy("openai-compaction:threshold=1500,summary=777"))
    c = r.compactions[-1]  # the last one's summary is still in the final history
    s = r.messages[c.summary]
    assert c.summary_tokens == 777
    assert s.content == STAND_IN.format(n=len(c.dropped), tokens=777)
    assert tc.count_tokens([s])[0] == 777 and tc.count_tokens([s], "cl100k_base")[0] == 777
    # modelled from the run: no compaction in the log, so the default ratio (within its bounds)
    c2 = tc.replay(msgs, tc.parse_policy("openai-compaction:threshold=1500")).compactions[0]
    assert c2.summary_tokens == max(500, min(20_000, round(DEFAULT_SUMMARY_RATIO * c2.tokens_before)))


@pytest.mark.parametrize("trigger", [50_000, 60_000])
def test_anthropic_compaction_fires_past_its_trigger_and_keeps_nothing_before(trigger: int) -> None:
    msgs = run(6, 30, size=1_500)
    r = tc.replay(msgs, tc.parse_policy(f"anthropic-compaction:trigger={trigger}"))
    assert r.compactions
    for c in r.compactions:
        assert c.tokens_before > trigger
        before = max((s for s in r.model_call_steps if s.call_index < c.at), key=lambda s: s.call_index)
        assert before.context_tokens <= trigger  # the call before was under it
        assert held_at(r, c.at) - {0} == set(range(max(c.dropped) + 1, c.at))  # only what came after
    with pytest.raises(tc.ConfigError, match="at least 50,000"):
        tc.parse_policy("anthropic-compaction:trigger=40000")


def test_openai_compaction_keeps_every_user_message() -> None:
    msgs = run(5, 6)
    r = tc.replay(msgs, tc.parse_policy("openai-compaction:threshold=2000"))
    assert r.compactions
    last = r.model_call_steps[-1].call_index
    users = {i for i, m in enumerate(msgs[:last]) if m.role in ("user", "system")}
    assert users <= held_at(r, last)
    assert all(msgs[i].role not in ("user", "system") for c in r.compactions for i in c.dropped[:-1])


def test_codex_keeps_the_latest_user_messages_up_to_20000_tokens() -> None:
    msgs = [M("system", "sys"), M("user", "<environment_context>cwd</environment_context>")]
    for t in range(8):
        msgs.append(M("user", f"t{t} " + "u" * 30_000))  # 7,501 tokens each by Codex's bytes / 4
        msgs += [M("assistant", "", tool_calls=(C(f"c{t}", "shell", "{}"),)), M("tool", "y" * 20_000, tool_call_id=f"c{t}")]
    msgs.append(M("assistant", "end"))
    r = tc.replay(msgs, tc.parse_policy("codex-compact:limit=60000"))
    c = r.compactions[0]
    kept_users = [i for i in held_at(r, c.at) if msgs[i].role == "user"]
    assert len(kept_users) == 2  # two of 7,501 fit in 20,000; the third would not (Codex would cut it)
    assert 1 in c.dropped  # the environment context: Codex's initial context sends it again
    assert max(kept_users) == max(i for i in range(c.at) if msgs[i].role == "user")


def test_codex_limit_defaults_to_90_percent_of_the_window_the_log_records() -> None:
    msgs = run(4, 10)
    window = tc.Usage(input_tokens=10, context_window=3_000, model="gpt-5")
    msgs = [m if m.role != "assistant" else tc.Message("assistant", m.content, m.tool_calls, usage=window) for m in msgs]
    r = tc.replay(msgs, tc.parse_policy("codex-compact"))
    assert r.compactions and all(c.tokens_before >= 2_700 for c in r.compactions)


def test_openhands_keeps_the_first_and_the_latest_half() -> None:
    msgs = run(1, 40)  # 82 messages
    r = tc.replay(msgs, tc.parse_policy("openhands-summarizing:max_size=30,keep_first=2"))
    c = r.compactions[0]
    held = sorted(held_at(r, c.at))
    assert held[:2] == [0, 1]  # keep_first
    assert len(held) == 2 + (30 // 2 - 2 - 1)  # and the tail
    assert c.at == 32  # the first call whose view held more than 30
    assert not c.cached  # OpenHands' condenser turns caching off
    with pytest.raises(tc.ConfigError, match="keep_first"):
        tc.parse_policy("openhands-summarizing:max_size=10,keep_first=5")


def test_eino_summarization_keeps_the_system_messages_and_fires_on_its_quirk() -> None:
    msgs = run(3, 5)
    r = tc.replay(msgs, tc.parse_policy("eino-summarization:tokens=800"))
    c = r.compactions[0]
    assert held_at(r, c.at) == {0}  # the leading system message, then only the summary
    # a Trigger that sets only ContextMessages leaves ContextTokens at 0: eino fires at every call
    quirk = tc.replay(msgs, tc.parse_policy("eino-summarization:tokens=0,messages=500"))
    assert [c.at for c in quirk.compactions] == [s.call_index for s in quirk.model_call_steps]
    with pytest.raises(tc.ConfigError):
        tc.parse_policy("eino-summarization:tokens=0,messages=0")


def test_adk_token_mode_compacts_after_an_invocation_and_keeps_the_latest_events() -> None:
    msgs = run(5, 6)
    r = tc.replay(msgs, tc.parse_policy("adk-compaction:threshold=1500,keep=4"))
    assert r.compactions
    for c in r.compactions:
        assert msgs[c.at - 1].role == "user"  # checked when an invocation ended: the next one starts
        held = held_at(r, c.at)
        assert {i for i in held if msgs[i].role != "system"} >= {c.at - 1}
    window = tc.replay(msgs, tc.parse_policy("adk-compaction:threshold=0,interval=2"))
    # once two new invocations have ended: as task 2 and task 4 start
    assert [msgs[c.at - 1].content[:6] for c in window.compactions] == ["task 2", "task 4"]


@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: p.name[:30])
def test_claude_code_compact_compacts_where_the_log_did_and_costs_near_the_run_as_recorded(path) -> None:
    """On a real compacted session, Claude Code's own trigger (by the log's version)
    fires within a few calls of where Claude Code compacted, and the run costs within
    15 % of the run as recorded."""
    t = tc.load(path)
    cal = sent_as(t.messages)
    rec = tc.recorded(t, calibration=cal)
    sim = tc.replay(t.messages, tc.parse_policy("claude-code-compact"), calibration=cal)
    (real,) = rec.compactions
    first = sim.compactions[0]
    calls = [s.call_index for s in rec.model_call_steps]
    assert abs(calls.index(first.at) - calls.index(real.at)) <= 3
    assert first.tokens_before == pytest.approx(real.tokens_before, rel=0.05)
    a, b = tc.cost(rec, calibrate=True), tc.cost(sim, calibrate=True)
    assert b.dollars == pytest.approx(a.dollars, rel=0.15)
    assert b.dollars_without_policy == pytest.approx(a.dollars, rel=1e-9)  # the baseline is the run as recorded
    assert all(sim.messages[i].role == OMITTED for i in first.dropped if i != first.summary)
    assert sim.statuses[first.dropped[0]] is MessageStatus.COMPACTED


def test_every_compaction_policy_prices_its_summaries_on_a_real_session() -> None:
    t = tc.load(LARGE)
    cal = sent_as(t.messages)
    for spec in ("anthropic-compaction:trigger=60000", "codex-compact:limit=100000", "eino-summarization:tokens=90000",
                 "openhands-summarizing:max_size=80", "openai-compaction:threshold=90000",
                 "adk-compaction:threshold=80000", 'langchain-summarization:trigger=["tokens",60000]'):
        r = tc.replay(t.messages, tc.parse_policy(spec), calibration=cal)
        assert r.compactions, spec
        c = tc.cost(r, calibrate=True)
        assert len(c.compaction_calls) == sum(1 for x in r.compactions if x.called)
        peak = max(s.context_tokens for s in r.model_call_steps)
        assert peak < max(s.context_tokens_unreduced for s in r.model_call_steps), spec
        assert tc.losses(r).calls > 0


def test_a_hybrid_compacts_on_what_its_clearing_policy_shows() -> None:
    """Masking keeps the context small: a compaction whose trigger the raw run passes is
    not reached behind the masking, and once the context does pass it (a lower trigger),
    what the compaction dropped stays dropped whatever the masking would show."""
    msgs = run(6, 12, size=1_200)
    alone = tc.replay(msgs, tc.parse_policy("openai-compaction:threshold=6000"))
    assert alone.compactions
    masked = tc.replay(msgs, tc.parse_policy("hybrid:base=swe-agent,keep=2,compaction=openai-compaction,"
                                              "compact_at=6000"))
    assert not masked.compactions  # masking keeps every call under 6,000
    mask_only = tc.replay(msgs, tc.parse_policy("swe-agent:n=2"))
    assert [s.context_tokens for s in masked.model_call_steps] == [s.context_tokens for s in mask_only.model_call_steps]
    low = tc.replay(msgs, tc.parse_policy("hybrid:base=swe-agent,keep=2,compaction=openai-compaction,compact_at=1500"))
    assert low.compactions
    first = low.compactions[0]
    for step in low.model_call_steps:
        if step.call_index >= first.at:
            assert all(low.messages[i].role == OMITTED for i in first.dropped if i != first.summary)
            break
    assert tc.cost(low, "claude-sonnet-4-5").compaction_calls
    assert all(s.context_tokens <= 1500 + first.summary_tokens + 2_000 for s in low.model_call_steps
               if s.call_index > first.at)
    with pytest.raises(tc.ConfigError, match="compaction policy"):
        tc.parse_policy("hybrid:compaction=eino")
    with pytest.raises(tc.ConfigError, match="clearing policy"):
        tc.parse_policy("hybrid:base=codex-compact")


def test_a_corpus_sweeps_compaction_beside_clearing_and_recommends_among_them(tmp_path) -> None:
    import shutil

    for p in COMPACTED:
        shutil.copy(p, tmp_path / p.name)
    corpus = tc.load_corpus(tmp_path)
    configs = [*tc.grid(tc.parse_policy("claude-code-compact"), threshold=[100_000, 150_000]),
               tc.parse_policy("as-recorded"), tc.parse_policy("swe-agent:n=5"),
               tc.parse_policy("hybrid:base=openai-trimmer,keep=1,compaction=anthropic-compaction")]
    sweep = tc.sweep_corpus(corpus, configs, engine="serial", pricing="auto", calibrate=True)
    assert (sweep.table["error"] == "").all() and len(sweep.table) == 2 * len(configs)
    rec = sweep.recommend(loss_budget=float("inf"))
    assert rec.config is not None and spec_for(rec.config).name in {"claude-code-compact", "hybrid"}
    as_run = sweep.table[sweep.table["policy"] == "as-recorded"]
    assert (as_run["dollars_saved"].abs() < 1e-6).all()  # the run as recorded is the baseline itself
