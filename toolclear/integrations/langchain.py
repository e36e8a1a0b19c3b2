"""toolclear policies inside a LangChain v1 agent: ``create_agent(..., middleware=[...])``.

``persist=True`` writes the edit back to the agent's state before each model call
(``before_model``), so every later call sees the same cleared prefix and the prompt
cache holds, as eino does; ``persist=False`` edits only the request
(``wrap_model_call``), as LangChain's own ``ContextEditingMiddleware`` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ..lab import apply
from ..model import Message, ToolCall
from ..result import Result

__all__ = ["ToolclearMiddleware", "from_langchain", "to_langchain"]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else ""
                       for p in content)
    return str(content)


def from_langchain(messages: Sequence[BaseMessage]) -> list[Message]:
    """LangChain messages as toolclear messages (text content, calls, results)."""
    out = []
    for m in messages:
        role = _ROLES.get(m.type, getattr(m, "role", m.type))
        calls = tuple(ToolCall(c.get("id") or "", c["name"], json.dumps(c.get("args", {})))
                      for c in getattr(m, "tool_calls", []) or [])
        out.append(Message(role, _text(m.content), tool_calls=calls,
                           tool_call_id=getattr(m, "tool_call_id", "") or "",
                           tool_name=(m.name or "") if isinstance(m, ToolMessage) else "",
                           name="" if isinstance(m, ToolMessage) else (m.name or "")))
    return out


def to_langchain(originals: Sequence[BaseMessage], edited: Sequence[Message]) -> list[BaseMessage]:
    """The originals with the policy's edits: a changed content, emptied call arguments.
    Everything else the framework holds (ids, metadata, multimodal parts) is kept."""
    out: list[BaseMessage] = []
    for lc, before, after in zip(originals, from_langchain(originals), edited):
        update: dict[str, Any] = {}
        if after.content != before.content:
            update["content"] = after.content
        if isinstance(lc, AIMessage) and after.tool_calls != before.tool_calls:
            update["tool_calls"] = [{**c, "args": json.loads(t.arguments or "{}")}
                                    for c, t in zip(lc.tool_calls, after.tool_calls)]
        out.append(lc.model_copy(update=update) if update else lc)
    return out


class ToolclearMiddleware(AgentMiddleware):
    """Any toolclear policy config as LangChain agent middleware; ``on_result`` receives
    each call's ``Result`` (what was cleared)."""

    def __init__(self, config: Any, persist: bool = True, on_result: Callable[[Result], None] | None = None,
                 counter: str | None = None) -> None:
        super().__init__()
        self.config, self.persist, self.on_result, self.counter = config, persist, on_result, counter

    def _edit(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        result = apply(from_langchain(messages), self.config, counter=self.counter)
        if self.on_result is not None:
            self.on_result(result)
        if not result.cleared_indices:
            return None
        return to_langchain(messages, result.messages)

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if not self.persist:
            return None
        edited = self._edit(state["messages"])
        if edited is None:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *edited]}

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        if self.persist:
            return handler(request)
        edited = self._edit(request.messages)
        return handler(request if edited is None else request.override(messages=edited))
