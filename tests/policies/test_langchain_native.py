"""LangChain's ``ClearToolUsesEdit`` on the messages LangChain agents really hold.

The reference is the real ``langchain`` package (its ``ClearToolUsesEdit.apply`` with
``count_tokens_approximately``, as ``ContextEditingMiddleware`` runs it). The
conversations are made of LangChain's own message types the way its chat models and
tools produce them: Anthropic-style list content with ``tool_use`` blocks, tool
messages without a name, image and ``json`` blocks, histories already cleared by the
edit and continued, duplicate assistant messages (``messages.index`` finds the first).
toolclear reads them the ways a user would, ``load(format="langchain")`` of a
``messages_to_dict`` dump and ``from_langchain``, and must edit the same messages.
"""

from __future__ import annotations

import base64
import copy
import json
import random
from typing import Any

import pytest
from langchain.agents.middleware.context_editing import ClearToolUsesEdit
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.messages.utils import count_tokens_approximately

import toolclear as tc
from toolclear.integrations.langchain import from_langchain
from toolclear.policies.langchain import langchain_tokens

TOOLS = ["read_file", "grep", "bash", "web_search"]
TEXTS = ["ok", "", "line\n" * 30, "日本語のテキスト " * 20, "x" * 700, "emoji 😀 " * 40, "short result"]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 600).decode()
PLACEHOLDER = "[cleared]"


def _tool_content(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.55:
        return rng.choice(TEXTS)
    blocks: list[Any] = []
    for _ in range(rng.randint(1, 3)):
        k = rng.random()
        if k < 0.5:
            blocks.append({"type": "text", "text": rng.choice(TEXTS)})
        elif k < 0.7:
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}})
        elif k < 0.85:
            blocks.append({"type": "json", "json": {"rows": rng.randint(0, 99), "ok": True, "path": "a/b.py"}})
        else:
            blocks.append(rng.choice(TEXTS))
    return blocks


def generate(rng: random.Random) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [HumanMessage(content=rng.choice(TEXTS) or "task")]
    if rng.random() < 0.2:
        msgs.insert(0, SystemMessage(content="You are a coding agent."))
    k = 0
    previous_ai: AIMessage | None = None
    for _ in range(rng.randint(0, 12)):
        if rng.random() < 0.1:
            msgs += [AIMessage(content=rng.choice(TEXTS)), HumanMessage(content=rng.choice(TEXTS) or "go on")]
            continue
        if previous_ai is not None and rng.random() < 0.12:
            ai = previous_ai.model_copy()  # the model said exactly the same again (messages.index)
        else:
            calls = []
            for _ in range(rng.randint(1, 3)):
                k += 1
                cid = f"toolu_{k}" if rng.random() > 0.05 else "toolu_dup"
                calls.append({"name": rng.choice(TOOLS), "args": {"path": rng.choice(TEXTS)[:15], "n": k},
                              "id": cid, "type": "tool_call"})
            text = rng.choice(["", "Let me look."])
            if rng.random() < 0.5:  # ChatAnthropic: the calls are blocks of the content too
                content: Any = ([{"type": "text", "text": text}] if text else []) + [
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls]
            else:
                content = text
            ai = AIMessage(content=content, tool_calls=calls)
        previous_ai = ai
        msgs.append(ai)
        for c in ai.tool_calls:
            if rng.random() < 0.05:
                continue  # a call without its result
            cleared = rng.random() < 0.1
            meta = {"context_editing": {"cleared": True, "strategy": "clear_tool_uses"}} if cleared else {}
            msgs.append(ToolMessage(content=PLACEHOLDER if cleared else _tool_content(rng), tool_call_id=c["id"],
                                    name=c["name"] if rng.random() < 0.6 else None, response_metadata=meta))
    return msgs


def reference(messages: list[BaseMessage], edit: ClearToolUsesEdit) -> list[BaseMessage]:
    out = copy.deepcopy(messages)
    edit.apply(out, count_tokens=count_tokens_approximately)
    return out


def _args(m: Any) -> list[Any]:
    if isinstance(m, BaseMessage):
        return [c["args"] for c in getattr(m, "tool_calls", None) or []]
    return [json.loads(c.arguments) if c.arguments else {} for c in m.tool_calls]


def compare(original: list[BaseMessage], ref: list[BaseMessage], got: tc.Result, source: tc.Transcript | list) -> None:
    assert len(got.messages) == len(ref)
    for i, (o, r, g, s) in enumerate(zip(original, ref, got.messages, source)):
        ref_changed = r.content != o.content or r.response_metadata != o.response_metadata or _args(r) != _args(o)
        assert (g is not s) == ref_changed, (i, r, g)
        if isinstance(r, ToolMessage) and ref_changed:
            assert g.content == r.content
        assert _args(g) == _args(r), i


EDITS = [
    dict(trigger=0, keep=1),
    dict(trigger=50, keep=2, clear_tool_inputs=True),
    dict(trigger=0, keep=0, clear_at_least=120),
    dict(trigger=0, keep=1, clear_at_least=60, clear_tool_inputs=True, exclude_tools=["grep"]),
    dict(trigger=400, keep=3),
]


def _config(edit: dict[str, Any]) -> tc.LangChainClearToolUsesConfig:
    return tc.LangChainClearToolUsesConfig(**{**edit, "exclude_tools": tuple(edit.get("exclude_tools", ()))})


def test_counts_equal_langchains_on_every_message_kind() -> None:
    rng = random.Random(3)
    for _ in range(300):
        msgs = generate(rng)
        for lc, m in zip(msgs, from_langchain(msgs)):
            assert langchain_tokens(m) == count_tokens_approximately([lc]), lc
        loaded = tc.load(text=json.dumps(messages_to_dict(msgs)), format="langchain")
        assert [langchain_tokens(m) for m in loaded] == [count_tokens_approximately([lc]) for lc in msgs]


@pytest.mark.parametrize("seed", range(0, 600, 3))
def test_generated_histories_through_load_and_from_langchain(seed: int) -> None:
    rng = random.Random(seed)
    msgs = generate(rng)
    spec = EDITS[seed % len(EDITS)]
    ref = reference(msgs, ClearToolUsesEdit(**spec))
    config = _config(spec)
    loaded = tc.load(text=json.dumps(messages_to_dict(msgs)), format="langchain")
    compare(msgs, ref, tc.apply(loaded, config), list(loaded))
    converted = from_langchain(msgs)
    compare(msgs, ref, tc.apply(converted, config), converted)


@pytest.mark.parametrize("seed", range(1, 120, 7))
def test_replay_is_the_edit_on_each_prefix(seed: int) -> None:
    """The middleware edits a fresh copy of the whole history before every call."""
    rng = random.Random(seed)
    msgs = generate(rng)
    spec = EDITS[seed % len(EDITS)]
    loaded = tc.load(text=json.dumps(messages_to_dict(msgs)), format="langchain")
    result = tc.replay(loaded, _config(spec))
    shown: set[int] = set()  # what differs from the history at each call: LangChain's edits only add
    for step in result.model_call_steps:
        shown |= set(step.cleared_indices)
        ref = reference(msgs[:step.call_index], ClearToolUsesEdit(**spec))
        changed = {i for i, (o, r) in enumerate(zip(msgs, ref))
                   if r.content != o.content or r.response_metadata != o.response_metadata or _args(r) != _args(o)}
        assert shown == changed, step.call_index


def _scripted_run(middleware: Any) -> list[list[BaseMessage]]:
    """A real ``create_agent`` run whose (fake) model answers as ``ChatAnthropic`` does:
    list content with ``tool_use`` blocks, parallel calls; the tool returns text or
    blocks with an image. Returns what each model call received."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.tools import tool

    @tool
    def read_file(path: str) -> Any:
        """Read a file."""
        if path.endswith(".png"):
            return [{"type": "text", "text": f"{path}: an image"},
                    {"type": "image", "source_type": "base64", "mime_type": "image/png", "data": PNG}]
        return f"{path}\n" + "def f():\n    return 1\n" * 40

    class Model(GenericFakeChatModel):
        seen: list[list[Any]] = []

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(copy.deepcopy(list(messages)))
            return super()._generate(messages, *args, **kwargs)

    script = []
    for k in range(9):
        calls = [{"name": "read_file", "args": {"path": f"f{k}_{j}." + ("png" if (k + j) % 4 == 0 else "py")},
                  "id": f"toolu_{k}_{j}", "type": "tool_call"} for j in range(1 + k % 2)]
        blocks = [{"type": "text", "text": "Reading."}] + [
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls]
        script.append(AIMessage(content=blocks, tool_calls=calls))
    script.append(AIMessage(content=[{"type": "text", "text": "done"}]))
    model = Model(messages=iter(script), seen=[])
    agent = create_agent(model, [read_file], middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("read the files")]}, {"recursion_limit": 100})
    return model.seen


@pytest.mark.parametrize("spec", [dict(trigger=t, keep=1 + t % 2, clear_tool_inputs=t % 3 == 0)
                                  for t in range(700, 2300, 150)] + [dict(trigger=0, keep=0, clear_at_least=700)])
def test_a_real_agent_run_sends_what_langchains_own_middleware_sends(spec: dict[str, Any]) -> None:
    """The same scripted run twice, once with LangChain's ``ContextEditingMiddleware``,
    once with toolclear's middleware running the same edit per call: every call
    receives the same contents and call arguments."""
    from langchain.agents.middleware.context_editing import ContextEditingMiddleware

    from toolclear.integrations.langchain import ToolclearMiddleware

    theirs = _scripted_run(ContextEditingMiddleware(edits=[ClearToolUsesEdit(**spec)]))
    ours = _scripted_run(ToolclearMiddleware(_config(spec), persist=False))
    assert len(theirs) == len(ours) == 10
    cleared = 0
    for a, b in zip(theirs, ours):
        assert [(m.content, _args(m)) for m in a] == [(m.content, _args(m)) for m in b]
        cleared += sum(m.content == PLACEHOLDER for m in a)
    assert cleared  # the edit did something in this run
