"""toolclear policies inside a LangChain v1 agent: ``create_agent(..., middleware=[...])``.

``persist=True`` writes the edit back to the agent's state before each model call
(``before_model``), so every later call sees the same cleared prefix and the prompt
cache holds, as eino does; ``persist=False`` edits only the request
(``wrap_model_call``), as LangChain's own ``ContextEditingMiddleware`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ..formats._base import compact_json, parts_text
from ..model import Message, ToolCall
from ..policies.langchain import langchain_facts
from ..result import Result
from ._live import Live, Memo

__all__ = ["LangChainLive", "ToolclearMiddleware", "from_langchain", "to_langchain"]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
          "AIMessageChunk": "assistant", "HumanMessageChunk": "user", "ToolMessageChunk": "tool"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return parts_text(content)
    return "" if content is None else compact_json(content)


def _convert(m: BaseMessage, before: Sequence[Message]) -> Message:
    """One LangChain message as toolclear reads its saved form (``toolclear.load``);
    a tool message without a name takes its call's, found in ``before``."""
    role = _ROLES.get(m.type) or getattr(m, "role", None) or m.type
    calls = tuple(ToolCall(str(c.get("id") or ""), str(c.get("name") or ""),
                           a if isinstance(a := c.get("args", {}), str) else compact_json(a if a is not None else {}))
                  for c in getattr(m, "tool_calls", None) or ())
    call_id = str(getattr(m, "tool_call_id", "") or "")
    name = m.name or ""
    text = _text(m.content)
    ident = (m.id, repr(m.response_metadata), repr(m.additional_kwargs), repr(getattr(m, "usage_metadata", None)),
             isinstance(m.content, list)) if isinstance(m, AIMessage) else None
    meta = langchain_facts(m.content, text, m.name, m.response_metadata, ident)
    if role == "tool":
        return Message(role, text, tool_calls=calls, tool_call_id=call_id,
                       tool_name=name or _call_name(before, call_id), meta=meta)
    return Message(role, text, tool_calls=calls, tool_call_id=call_id, name=name, meta=meta)


def _call_name(before: Sequence[Message], call_id: str) -> str:
    """The name of the latest call with this id (usually the message just before)."""
    for prev in reversed(before):
        for c in prev.tool_calls:
            if c.id == call_id:
                return c.name
    return ""


def _stamp(m: BaseMessage) -> tuple[Any, ...]:
    return (m.content, m.tool_calls if isinstance(m, AIMessage) else None, m.name)


def from_langchain(messages: Sequence[BaseMessage], memo: Memo | None = None) -> list[Message]:
    """LangChain messages as toolclear messages (text content, calls, results; a tool
    message without a name takes its call's). ``memo`` reuses earlier conversions."""
    if memo is None:
        out: list[Message] = []
        for m in messages:
            out.append(_convert(m, out))
        return out
    k = memo.known(messages)
    out = memo.conv[:k]
    entries = memo.entries
    for m in messages[k:]:  # one probe and one compare per message not in the known prefix
        key = id(m)
        stamp = (m.content, m.tool_calls if isinstance(m, AIMessage) else None, m.name)
        hit = entries.get(key)
        if hit is not None and hit[0] is m and hit[1] == stamp:
            out.append(hit[2])
            continue
        msg = _convert(m, out)
        entries[key] = (m, stamp, msg)
        out.append(msg)
    return out


def to_langchain(originals: Sequence[BaseMessage], edited: Sequence[Message],
                 before: Sequence[Message] | None = None,
                 copies: dict[int, tuple[Any, Message, BaseMessage]] | None = None) -> list[BaseMessage]:
    """The originals with the policy's edits: a changed content, emptied call arguments.
    Everything else the framework holds (ids, metadata, multimodal parts of messages the
    policy left alone) is kept. ``copies`` (original id -> (original, edit, copy)) hands
    back the copy made for the same edit of the same message on an earlier call."""
    before = before if before is not None else from_langchain(originals)
    out: list[BaseMessage] = []
    for lc, b, after in zip(originals, before, edited):
        update: dict[str, Any] = {}
        if after is not b:
            if copies is not None:
                hit = copies.get(id(lc))
                if hit is not None and hit[0] is lc and hit[1] is after:
                    out.append(hit[2])
                    continue
            if after.content != b.content:
                update["content"] = after.content
            if isinstance(lc, AIMessage) and after.tool_calls != b.tool_calls:
                update["tool_calls"] = [{**c, "args": _args(t.arguments)} for c, t in zip(lc.tool_calls, after.tool_calls)]
        new = lc.model_copy(update=update) if update else lc
        if copies is not None and after is not b:
            copies[id(lc)] = (lc, after, new)
        out.append(new)
    return out


def _args(text: str) -> Any:
    import json

    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class LangChainLive(Live):
    """The policy on LangChain messages, for the middleware and the LangGraph hook."""

    def __init__(self, config: Any, persist: bool, **kw: Any) -> None:
        super().__init__(config, per_call=not persist, **kw)
        self.persist = persist

    def edit(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """The messages as the policy leaves them, or None when the model would see no change."""
        with self.lock:
            return self._edit(messages)

    def _edit(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        state = self.conversation_of(messages)
        memo = state.memo
        before = from_langchain(messages, memo)
        shown = self.shown(before, state)
        out = None
        src: Sequence[BaseMessage] = messages
        conv: Sequence[Message] = before
        if not all(map(is_, before, shown)):
            if len(state.copies) > 2 * len(messages) + 64:
                state.copies.clear()
            edited = to_langchain(messages, shown, before, None if self.persist else state.copies)
            if self.persist:  # the history keeps these, with what the framework cannot show
                for lc, b, after in zip(edited, before, shown):
                    if after is not b:
                        memo.put(lc, _stamp(lc), after)
                src, conv = edited, shown
            if self.changes(before, shown, state):
                out = edited
        memo.done(src, conv)
        return out


class ToolclearMiddleware(AgentMiddleware):
    """Any toolclear policy config as LangChain agent middleware; ``on_result`` receives
    each call's ``Result`` (what was cleared)."""

    def __init__(self, config: Any, persist: bool = True, on_result: Callable[[Result], None] | None = None,
                 counter: Any = None, backend: Any = None, tools: Sequence[Any] = ()) -> None:
        super().__init__()
        self.config, self.persist = config, persist
        self.live = LangChainLive(config, persist, counter=counter, on_result=on_result, backend=backend, tools=tools)

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if not self.persist:
            return None
        edited = self.live.edit(state["messages"])
        if edited is None:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *edited]}

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        if self.persist:
            return handler(request)
        edited = self.live.edit(request.messages)
        return handler(request if edited is None else request.override(messages=edited))
