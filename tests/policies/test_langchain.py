"""LangChainClearToolUsesConfig against the real ``langchain`` package, message by message.

The reference is LangChain's own ``ClearToolUsesEdit.apply`` with its own
``count_tokens_approximately`` (what ``ContextEditingMiddleware`` runs before each model
call). Conversations are converted to LangChain's message types, edited by both, and
compared on every message: 1,000 generated conversations (whole history), a sample of
them call by call (each prefix, as the middleware sees it), and every real transcript.
"""

from __future__ import annotations

import json
import random

import pytest
from langchain.agents.middleware.context_editing import ClearToolUsesEdit
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

import toolclear as tc
from toolclear.policies.langchain import langchain_tokens

from ..conftest import CORPUS_FILES, corpus_id

TOOLS = ["read_file", "grep", "bash", "list_dir", "web_search"]
TEXTS = ["ok", "", "line\n" * 40, "日本語のテキスト " * 30, "x" * 900, "emoji 😀 " * 50, "short result"]


def to_langchain(messages):
    out = []
    for m in messages:
        if m.role == "system":
            out.append(SystemMessage(content=m.content))
        elif m.role == "user":
            out.append(HumanMessage(content=m.content, name=m.name or None))
        elif m.role == "assistant":
            calls = [{"name": c.name, "args": json.loads(c.arguments) if c.arguments else {}, "id": c.id}
                     for c in m.tool_calls]
            out.append(AIMessage(content=m.content, tool_calls=calls, name=m.name or None))
        elif m.role == "tool":
            out.append(ToolMessage(content=m.content, tool_call_id=m.tool_call_id, name=m.tool_name or None))
        else:  # a role of the log's own ('exit' in mini-swe-agent)
            out.append(ChatMessage(role=m.role, content=m.content, name=m.name or None))
    return out


def lc_view(messages):
    """What a model would be sent: content, and the arguments of each call."""
    out = []
    for m in messages:
        calls = [(c["id"], c["name"], c["args"]) for c in getattr(m, "tool_calls", [])]
        out.append((m.content, calls))
    return out


def tc_view(messages):
    return [(m.content, [(c.id, c.name, json.loads(c.arguments) if c.arguments else {}) for c in m.tool_calls])
            for m in messages]


def generate(rng: random.Random):
    msgs = [tc.Message("system", "You are a coding agent."), tc.Message("user", rng.choice(TEXTS) or "task")]
    n_rounds = rng.randint(0, 14)
    k = 0
    for _ in range(n_rounds):
        r = rng.random()
        if r < 0.12:
            msgs.append(tc.Message("assistant", rng.choice(TEXTS)))
            msgs.append(tc.Message("user", rng.choice(TEXTS), name=rng.choice(["", "alice"])))
            continue
        calls = []
        for _ in range(rng.randint(1, 3)):
            k += 1
            cid = f"call_{k}" if rng.random() > 0.05 else "call_dup"
            calls.append(tc.ToolCall(cid, rng.choice(TOOLS), json.dumps({"path": rng.choice(TEXTS)[:20], "n": k})))
        msgs.append(tc.Message("assistant", rng.choice(["", "Let me look."]), tool_calls=tuple(calls)))
        order = calls[:] if rng.random() > 0.2 else rng.sample(calls, len(calls))
        for c in order:
            if rng.random() < 0.05:
                continue  # a call without its result
            name = c.name if rng.random() > 0.1 else ""
            msgs.append(tc.Message("tool", rng.choice(TEXTS), tool_call_id=c.id, tool_name=name))
        if rng.random() < 0.05:
            msgs.append(tc.Message("tool", "orphan", tool_call_id="nobody", tool_name="grep"))
    return msgs


def random_config(rng: random.Random, total: int) -> tc.LangChainClearToolUsesConfig:
    return tc.LangChainClearToolUsesConfig(
        trigger=rng.choice([0, 10, rng.randint(0, max(1, total)), 100_000]),
        clear_at_least=rng.choice([0, 0, rng.randint(1, 400)]),
        keep=rng.choice([0, 1, 2, 3, 5]),
        clear_tool_inputs=rng.random() < 0.4,
        exclude_tools=tuple(rng.sample(TOOLS, rng.randint(0, 2))),
        placeholder=rng.choice(["[cleared]", "", "— removed —"]),
    )


def reference(messages, config: tc.LangChainClearToolUsesConfig):
    lc = to_langchain(messages)
    edit = ClearToolUsesEdit(trigger=config.trigger, clear_at_least=config.clear_at_least, keep=config.keep,
                             clear_tool_inputs=config.clear_tool_inputs, exclude_tools=config.exclude_tools,
                             placeholder=config.placeholder)
    edit.apply(lc, count_tokens=count_tokens_approximately)
    return lc


def test_the_counter_is_langchains() -> None:
    rng = random.Random(7)
    for _ in range(200):
        msgs = generate(rng)
        assert sum(langchain_tokens(m) for m in msgs) == count_tokens_approximately(to_langchain(msgs))


@pytest.mark.parametrize("seed", range(10))
def test_agrees_with_langchain_on_generated_conversations(seed: int) -> None:
    """100 conversations per seed, 1,000 in all, each with its own settings."""
    rng = random.Random(seed)
    for _ in range(100):
        msgs = generate(rng)
        config = random_config(rng, count_tokens_approximately(to_langchain(msgs)))
        ours = tc.apply(msgs, config)
        assert tc_view(ours.messages) == lc_view(reference(msgs, config)), (config, msgs)


@pytest.mark.parametrize("seed", range(3))
def test_replay_agrees_with_langchain_call_by_call(seed: int) -> None:
    """Each model call of our replay sends what LangChain sends for that prefix."""
    rng = random.Random(100 + seed)
    for _ in range(25):
        msgs = generate(rng)
        config = random_config(rng, count_tokens_approximately(to_langchain(msgs)))
        rp = tc.replay(msgs, config)
        for step in rp.model_call_steps:
            prefix = msgs[: step.call_index]
            want = reference(prefix, config)
            assert tc_view(tc.apply(prefix, config).messages) == lc_view(want)
            assert step.context_tokens == sum(tc.count_tokens(tc.apply(prefix, config).messages))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=corpus_id)
def test_agrees_with_langchain_on_real_transcripts(path) -> None:
    for t in tc.load_all(path):
        msgs = [m for m in t.messages]
        total = count_tokens_approximately(to_langchain(msgs))
        for config in (tc.LangChainClearToolUsesConfig(trigger=total // 3, keep=2),
                       tc.LangChainClearToolUsesConfig(trigger=0, keep=0, clear_at_least=total // 4,
                                                       clear_tool_inputs=True),
                       tc.LangChainClearToolUsesConfig(trigger=total // 2, exclude_tools=("Bash", "read_file"))):
            assert tc_view(tc.apply(msgs, config).messages) == lc_view(reference(msgs, config))


# ---- OpenAI Chat messages whose content is a list of parts, as LangChain holds them

PNG = "iVBORw0KGgo" * 10
PARTS = [{"type": "text", "text": "hello " * 7}, {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}},
         {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}, {"type": "text", "text": "日本語 😀"},
         {"type": "file", "file": {"file_data": PNG, "filename": "a.pdf"}}, {"type": "text", "text": "x" * 400}]


def _parts_conversation(rng: random.Random) -> list[dict]:
    """An OpenAI Chat history whose user, assistant and tool contents are often lists
    mixing text with image, audio and file parts (tool messages name their tool, as a
    LangChain agent's ToolMessages do)."""
    def content() -> object:
        return rng.choice(TEXTS) if rng.random() < 0.3 else [rng.choice(PARTS) for _ in range(rng.randint(1, 3))]

    msgs: list[dict] = [{"role": "user", "content": content()}]
    for k in range(rng.randint(1, 8)):
        name = rng.choice(TOOLS)
        msgs.append({"role": "assistant", "content": rng.choice([None, "ok", [{"type": "text", "text": "ok then"}]]),
                     "tool_calls": [{"id": f"c{k}", "type": "function",
                                     "function": {"name": name, "arguments": json.dumps({"n": k})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{k}", "name": name, "content": content()})
    return msgs


def test_list_contents_of_text_images_and_files_are_counted_as_langchain_counts_them() -> None:
    """LangChain keeps an OpenAI message's list of parts as its content and counts each
    text part's characters, a flat 85 per image and the repr of any other part (and, for
    a list, not the tool calls): toolclear counts the messages it read from the same
    file alike, where it counted the text it read (3,975 of 12,000 messages differed)."""
    from langchain_core.messages import convert_to_messages

    rng = random.Random(11)
    for _ in range(400):
        msgs = _parts_conversation(rng)
        t = tc.load(json.dumps({"model": "gpt-4o", "messages": msgs}).encode(), name="body.json")
        assert [langchain_tokens(m) for m in t.messages] == [
            count_tokens_approximately([m]) for m in convert_to_messages(msgs)]


@pytest.mark.parametrize("seed", range(40))
def test_list_contents_clear_as_langchain_clears_them(seed: int) -> None:
    """ClearToolUsesEdit on LangChain's own messages of the file, and toolclear on the
    file: the same results cleared."""
    from langchain_core.messages import convert_to_messages

    rng = random.Random(seed)
    msgs = _parts_conversation(rng)
    spec = [dict(trigger=0, keep=1), dict(trigger=150, keep=2, clear_at_least=100), dict(trigger=300, keep=0)][seed % 3]
    lc = convert_to_messages(msgs)
    ref = [m.model_copy() for m in lc]
    ClearToolUsesEdit(**spec).apply(ref, count_tokens=count_tokens_approximately)
    expected = [i for i, (a, b) in enumerate(zip(lc, ref)) if a.content != b.content]
    t = tc.load(json.dumps({"model": "gpt-4o", "messages": msgs}).encode(), name="body.json")
    got = tc.apply(t.messages, tc.LangChainClearToolUsesConfig(**spec))
    assert list(got.cleared_indices) == expected
