"""``langchain-summarization`` against the real ``SummarizationMiddleware`` (langchain 1.x).

The reference runs as an agent runs it: before each model call of the run the
middleware's own ``before_model`` sees the agent's state (the messages so far, the
summary it wrote earlier in place of what it summarised); a summary it returns replaces
the state, and the run's next messages are appended. A fake chat model stands for the
agent's model (its profile gives ``max_input_tokens``) and a fixed text for the summary,
whose size toolclear is told (``summary_tokens``). At every call, the messages of the run
the agent's state still holds must be the ones toolclear's replay still sends, and both
must hold a summary from the same call on: on generated histories with every trigger
form and both kinds of ``keep``, and on the corpus's real runs.
"""

from __future__ import annotations

import random

import pytest
from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableLambda

import toolclear as tc
from toolclear.cost.logfacts import compactions_of
from toolclear.model import main_conversation
from toolclear.policies.langchain_summarization import LangChainSummarizationConfig

from ..conftest import CORPUS, CORPUS_FILES, corpus_id
from .test_langchain import generate, to_langchain

SUMMARY = "The agent read files and ran commands; work continues. " * 3


def summary_tokens() -> int:
    """What LangChain counts for the summary message its middleware writes."""
    msg = HumanMessage(content=f"Here is a summary of the conversation to date:\n\n{SUMMARY.strip()}")
    return count_tokens_approximately([msg])


def middleware(trigger, keep, max_input: int, trim: int | None = 4000) -> SummarizationMiddleware:
    model = GenericFakeChatModel(messages=iter(()), profile={"max_input_tokens": max_input})
    return SummarizationMiddleware(model=model, trigger=trigger, keep=keep, trim_tokens_to_summarize=trim,
                                   summarizer=RunnableLambda(lambda msgs: SUMMARY))


def reference_run(messages, mw) -> list[tuple[frozenset[int], bool]]:
    """At each model call (each assistant message), the run's messages the agent's state
    holds and whether it holds a summary, as the real middleware leaves them."""
    lc = to_langchain(messages)
    for i, m in enumerate(lc):
        m.id = f"m{i}"
    state: list = []
    out = []
    for k, m in enumerate(messages):
        if m.role == "assistant":
            update = mw.before_model({"messages": state}, None)
            if update is not None:
                state = list(update["messages"][1:])  # after RemoveMessage(REMOVE_ALL_MESSAGES)
            held = frozenset(int(x.id[1:]) for x in state if str(x.id).startswith("m"))
            out.append((held, any(x.id is None or not str(x.id).startswith("m") for x in state)))
        if m.role != "system":  # the system prompt is outside LangChain's state
            state.append(lc[k])
    return out


def toolclear_run(messages, config) -> list[tuple[frozenset[int], bool]]:
    """The same, from toolclear's replay: its compactions applied in order."""
    rp = tc.replay(messages, config)
    comps = {c.at: c for c in rp.compactions}
    gone: set[int] = set()
    summaries: set[int] = set()
    out = []
    for step in rp.model_call_steps:
        k = step.call_index
        c = comps.get(k)
        if c is not None:
            gone.update(c.dropped)
            summaries.difference_update(c.dropped)
            summaries.add(c.summary)
        held = frozenset(i for i in range(k) if i not in gone and messages[i].role != "system")
        out.append((held, bool(summaries)))
    return out


TRIGGERS = [("tokens", 300), ("messages", 6), {"tokens": 200, "messages": 8}, [("tokens", 900), ("messages", 12)],
            [{"tokens": 400, "messages": 20}, {"messages": 9}], ("fraction", 0.4), ("tokens", 50)]
KEEPS = [("messages", 4), ("messages", 1), ("messages", 20), ("tokens", 150), ("tokens", 40), ("fraction", 0.2)]


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_the_real_middleware_on_generated_runs(seed: int) -> None:
    rng = random.Random(500 + seed)
    fired = fixed = 0
    for _ in range(40):
        msgs = generate(rng)
        for _ in range(rng.randint(0, 3)):  # longer runs: more calls, more summaries
            msgs += [m for m in generate(rng)[1:] if m.role != "system"]
        trigger, keep = rng.choice(TRIGGERS), rng.choice(KEEPS)
        max_input = rng.choice([600, 1500, 4000])
        trim = rng.choice([4000, 4000, 120, 30, None])  # small: what it summarises may hold no human message
        config = LangChainSummarizationConfig(trigger=trigger, keep=keep, summary_tokens=summary_tokens(),
                                              max_input_tokens=max_input, trim_tokens_to_summarize=trim)
        want = reference_run(msgs, middleware(trigger, keep, max_input, trim))
        got = toolclear_run(msgs, config)
        assert got == want, (trigger, keep, max_input, trim)
        fired += any(s for _, s in want)
        fixed += any(not c.called for c in tc.replay(msgs, config).compactions)
    assert fired >= 10  # the trigger fired on a good share of them
    assert fixed >= 1  # and LangChain's "too long to summarize" came up


@pytest.mark.parametrize("path", [p for p in CORPUS_FILES if "claude_code" in str(p) or "openai_chat" in str(p)],
                         ids=corpus_id)
def test_agrees_with_the_real_middleware_on_real_runs(path) -> None:
    t = main_conversation(tc.load_all(path))
    logged = set(compactions_of(t.messages))  # the log's own summaries: a fresh run would not have them
    msgs = [m for i, m in enumerate(t.messages) if i not in logged]
    total = count_tokens_approximately(to_langchain(msgs))
    for trigger, keep in ((("tokens", max(50, total // 6)), ("messages", 20)),
                          ({"tokens": max(50, total // 10), "messages": 30}, ("tokens", max(40, total // 40)))):
        config = LangChainSummarizationConfig(trigger=trigger, keep=keep, summary_tokens=summary_tokens())
        assert toolclear_run(msgs, config) == reference_run(msgs, middleware(trigger, keep, 200_000)), trigger


def test_a_long_tool_loop_is_summarised_to_langchains_fixed_text_and_no_call_is_priced() -> None:
    """mini-swe-agent's run is one human task and 90 tool rounds: once the task is
    summarised away, what LangChain would summarise holds no human message and its
    summary is "Previous conversation was too long to summarize." (the reference test
    above holds the sizes equal); such a compaction makes no summarisation call."""
    t = main_conversation(tc.load_all(CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json"))
    config = LangChainSummarizationConfig(trigger={"tokens": 4980, "messages": 30}, keep=("tokens", 1245))
    rp = tc.replay(t.messages, config)
    fixed = [c for c in rp.compactions if not c.called]
    assert fixed and len(fixed) < len(rp.compactions)
    assert {c.summary_tokens for c in fixed} == {count_tokens_approximately([HumanMessage(
        "Here is a summary of the conversation to date:\n\nPrevious conversation was too long to summarize.")])}
    c = tc.cost(rp, "claude-sonnet-4-5")
    assert len(c.compaction_calls) == len(rp.compactions) - len(fixed)


def test_spec_takes_langchains_own_forms_and_writes_them_back() -> None:
    from toolclear.runs.lab import policy_spec

    spec = 'langchain-summarization:trigger={"tokens":4000,"messages":10},keep=["messages",20]'
    config = tc.parse_policy(spec)
    assert config.clauses == ((("tokens", 4000), ("messages", 10)),)
    assert config.keep == ("messages", 20)
    either = tc.parse_policy('langchain-summarization:trigger=[{"tokens":5000},{"messages":3}]')
    assert either.clauses == ((("tokens", 5000),), (("messages", 3),))
    for c in (config, either, tc.parse_policy('langchain-summarization:trigger=["fraction",0.5],keep=["tokens",900]')):
        assert tc.parse_policy(policy_spec(c)) == c
    with pytest.raises(tc.ConfigError, match="trigger"):
        tc.parse_policy('langchain-summarization:trigger={"turns":3}')
    with pytest.raises(tc.ConfigError, match="keep"):
        tc.parse_policy('langchain-summarization:keep=["messages",0]')


def test_the_state_is_counted_once_per_message_not_once_per_call(monkeypatch) -> None:
    """LangChain counts its whole state before each call; replaying that literally made a
    200,000-message run take minutes (quadratic). Each message is counted once between
    compactions, and the decisions are the real middleware's (the differential tests)."""
    from toolclear.policies import langchain_summarization as mod

    calls = 0
    real = mod.langchain_tokens

    def counting(m):
        nonlocal calls
        calls += 1
        return real(m)

    monkeypatch.setattr(mod, "langchain_tokens", counting)
    msgs = [tc.Message("user", "go")]
    for i in range(2000):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{i}", "ls", "{}"),)),
                 tc.Message("tool", "ok", tool_call_id=f"c{i}", tool_name="ls")]
    result = tc.replay(msgs, LangChainSummarizationConfig(trigger=("messages", 10**6)))
    assert not result.compactions
    assert calls <= 2 * len(msgs)
