"""LangChain messages and LangGraph state dumps.

Three spellings of a message are read: ``messages_to_dict`` output
(``{"type": "human", "data": {...}}``), the serialised constructor form
(``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}``) and
plain ``model_dump`` dicts (``{"type": "ai", "content": ..., "tool_calls": [...]}``).
A list of them, or an object with a ``messages`` list (a LangGraph state), is one
conversation. ``ToolMessage`` results are the tool results.
"""

from __future__ import annotations

from typing import Any

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript
from ..policies.langchain import langchain_facts
from ._base import Builder, FormatReader, compact_json, content_text, json_type, str_or, str_or_none, where
from ._doc import Document, Path
from .chat import _note_roles_and_pairs, _openai_calls

__all__ = ["LangChainFormat"]

_ROLES = {
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "system": "system",
    "function": "tool",
    "developer": "developer",
    "AIMessageChunk": "assistant",
    "HumanMessageChunk": "user",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
}
_CLASSES = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "FunctionMessage": "function",
    "ChatMessage": "chat",
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "ToolMessageChunk": "tool",
}


def _unwrap(item: Any) -> tuple[str, dict[str, Any], Path] | None:
    """(type, fields, path of the fields relative to the item) for one message."""
    if not isinstance(item, dict):
        return None
    if item.get("lc") == 1 and item.get("type") == "constructor" and isinstance(item.get("kwargs"), dict):
        ident = item.get("id")
        cls = (str_or_none(ident[-1]) or "") if isinstance(ident, list) and ident else ""
        kind = _CLASSES.get(cls)
        return (kind, item["kwargs"], ("kwargs",)) if kind else None
    kind = str_or_none(item.get("type"))
    if isinstance(item.get("data"), dict) and kind in _ROLES | {"chat": ""}:
        return kind, item["data"], ("data",)
    if kind in _ROLES or kind == "chat":
        if "content" in item:
            return kind, item, ()
    return None


def _ident(d: dict[str, Any]) -> str:
    """What ``AIMessage`` equality compares beyond the text and the calls toolclear keeps
    (the raw content, ids, metadata), as a digest."""
    import hashlib

    rest = {k: v for k, v in d.items() if k != "tool_calls"}
    return hashlib.sha1(compact_json(rest).encode("utf-8", "surrogatepass")).hexdigest()


def _message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_unwrap(m) is not None for m in value)


class LangChainFormat(FormatReader):
    name = "langchain"
    label = "LangChain messages / LangGraph state (messages_to_dict, dumpd, model_dump)"
    aliases = ("langgraph", "lc")
    where_found = "what you save with messages_to_dict / dumpd, or a LangGraph checkpoint's state"
    tool_result = "each ToolMessage (type 'tool'); its name, or the name of its matching tool call"
    export_changes = "the cleared ToolMessage's 'content'"
    expects = "a list of LangChain messages (messages_to_dict, dumpd or model_dump) or an object with 'messages'"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if doc.kind != "json":
            return False
        return _message_list(v) or (isinstance(v, dict) and _message_list(v.get("messages")))

    def read(self, doc: Document, source: str) -> list[Transcript]:
        v = doc.value
        base: Path = () if isinstance(v, list) else ("messages",)
        items = v if isinstance(v, list) else v["messages"]
        b = Builder(doc)
        for i, item in enumerate(items):
            path = base + (i,)
            unwrapped = _unwrap(item)
            if unwrapped is None:
                raise TranscriptError(
                    f"expected a LangChain message, got {json_type(item)}", where=where(doc, path)
                )
            kind, d, inner = unwrapped
            fpath = path + inner
            role = _ROLES.get(kind) or (str_or(d.get("role"), "user"))
            content = content_text(d.get("content"), doc, fpath + ("content",))
            calls = self._calls(doc, d, fpath)
            call_id = str_or(d.get("tool_call_id"), "")
            name = str_or(d.get("name"), "")
            tool_name = (name or b.tool_name_for(call_id)) if role == "tool" else ""
            ident = _ident(d) if role == "assistant" else None
            meta = langchain_facts(d.get("content"), content, d.get("name"), d.get("response_metadata"), ident)
            b.add(
                Message(role=role, content=content, tool_calls=calls, tool_call_id=call_id,
                        tool_name=tool_name, name="" if role == "tool" else name, meta=meta),
                [fpath + ("content",)],
                path,
            )
        _note_roles_and_pairs(b)
        return [b.build(self.name, source=source, title="LangChain conversation")]

    @staticmethod
    def _calls(doc: Document, d: dict[str, Any], path: Path) -> tuple[ToolCall, ...]:
        raw = d.get("tool_calls")
        if isinstance(raw, list) and raw:
            out = []
            for j, c in enumerate(raw):
                if not isinstance(c, dict):
                    raise TranscriptError(f"expected a tool call object, got {json_type(c)}",
                                          where=where(doc, path + ("tool_calls", j)))
                args = c.get("args")
                out.append(
                    ToolCall(
                        id=str(c.get("id") or ""),
                        name=str(c.get("name") or ""),
                        arguments=args if isinstance(args, str) else compact_json(args if args is not None else {}),
                    )
                )
            return tuple(out)
        extra = d.get("additional_kwargs")
        if isinstance(extra, dict) and isinstance(extra.get("tool_calls"), list):
            return _openai_calls(doc, extra, path + ("additional_kwargs",))
        return ()
