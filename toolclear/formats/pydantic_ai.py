"""pydantic-ai message histories: what ``result.all_messages_json()`` or
``ModelMessagesTypeAdapter.dump_json(...)`` writes.

A ``request`` holds parts: ``system-prompt`` and ``user-prompt`` parts are system and
user messages, each ``tool-return`` part is a tool result, and a ``retry-prompt`` part
answering a tool call is that call's (error) result; a ``response`` is one model call,
its ``text`` and ``thinking`` parts the reply and its ``tool-call`` parts the calls; its
``usage`` is the recorded usage. ``instructions`` (re-sent with every request) are not
messages, so they belong to the per-call overhead, like tool schemas. The live adapter
(``toolclear.integrations.pydantic_ai``) reads each message with ``read_model_message``,
so a live run and its saved history count the same.
"""

from __future__ import annotations

from typing import Any

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript, Usage
from ._base import Builder, FormatReader, compact_json, json_type, parts_text, str_or, token_count, where
from ._doc import Document, Path

__all__ = ["PydanticAIFormat", "read_model_message"]

_KINDS = ("request", "response")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return parts_text(value)
    return "" if value is None else compact_json(value)


_int = token_count  # one rule for every reader: toolclear.formats._base


def _usage(d: dict[str, Any]) -> Usage | None:
    u = d.get("usage")
    if not isinstance(u, dict) or not any(_int(u.get(k)) for k in ("input_tokens", "output_tokens")):
        return None
    read, write = _int(u.get("cache_read_tokens")), _int(u.get("cache_write_tokens"))
    return Usage(input_tokens=max(0, _int(u.get("input_tokens")) - read - write), output_tokens=_int(u.get("output_tokens")),
                 cache_write_tokens=write, cache_read_tokens=read,
                 reasoning_tokens=_int(u.get("output_reasoning_tokens")), model=str_or(d.get("model_name")),
                 timestamp=str_or(d.get("timestamp")), source="usage")


def read_model_message(d: dict[str, Any]) -> list[tuple[Message, int | None]]:
    """One request or response as toolclear messages, each with the index of the part
    whose ``content`` a clearing rewrites (None when nothing of it is rewritten).
    Parts of kinds this does not know are skipped."""
    out: list[tuple[Message, int | None]] = []
    raw = d.get("parts")
    parts: list[Any] = raw if isinstance(raw, list) else []
    if d.get("kind") == "response":
        texts: list[str] = []
        calls: list[ToolCall] = []
        for p in parts:
            if not isinstance(p, dict):
                continue
            kind = p.get("part_kind")
            if kind in ("text", "thinking") and isinstance(p.get("content"), str):
                texts.append(p["content"])
            elif kind == "tool-call":
                args = p.get("args")
                calls.append(ToolCall(str_or(p.get("tool_call_id")), str_or(p.get("tool_name")),
                                      args if isinstance(args, str) else compact_json(args if args is not None else {})))
        out.append((Message("assistant", "\n".join(texts), tool_calls=tuple(calls), usage=_usage(d)), None))
        return out
    for j, p in enumerate(parts):
        if not isinstance(p, dict):
            continue
        kind = p.get("part_kind")
        if kind == "system-prompt":
            out.append((Message("system", _text(p.get("content"))), None))
        elif kind == "user-prompt":
            out.append((Message("user", _text(p.get("content"))), None))
        elif kind == "tool-return" or (kind == "retry-prompt" and p.get("tool_name")):
            out.append((Message("tool", _text(p.get("content")), tool_call_id=str_or(p.get("tool_call_id")),
                                tool_name=str_or(p.get("tool_name"))), j))
        elif kind == "retry-prompt":
            out.append((Message("user", _text(p.get("content"))), None))
    return out


def _is_message(v: Any) -> bool:
    return isinstance(v, dict) and v.get("kind") in _KINDS and isinstance(v.get("parts"), list)


class PydanticAIFormat(FormatReader):
    name = "pydantic-ai"
    label = "pydantic-ai message history (all_messages_json / ModelMessagesTypeAdapter)"
    aliases = ("pydantic_ai", "pydanticai")
    where_found = "what you save with result.all_messages_json() or ModelMessagesTypeAdapter.dump_json"
    tool_result = "each tool-return part (and a retry-prompt answering a tool call)"
    export_changes = "that part's 'content'"
    expects = "a JSON list of pydantic-ai messages (kind 'request' / 'response' with 'parts')"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        return doc.kind == "json" and isinstance(v, list) and bool(v) and all(_is_message(m) for m in v)

    def read(self, doc: Document, source: str) -> list[Transcript]:
        v = doc.value
        if not isinstance(v, list):
            raise TranscriptError(self.expects)
        b = Builder(doc)
        skipped = 0
        for i, item in enumerate(v):
            if not _is_message(item):
                raise TranscriptError(f"expected a pydantic-ai message, got {json_type(item)}",
                                      where=where(doc, (i,)))
            read = read_model_message(item)
            skipped += len(item["parts"]) - (len(read) if item["kind"] == "request" else len(item["parts"]))
            for m, j in read:
                slots: list[Path] = [(i, "parts", j, "content")] if j is not None else []
                b.add(m, slots, (i,))
        if skipped:
            b.notes.append(f"{skipped} request part(s) of other kinds are not messages the policy sees")
        return [b.build(self.name, source=source, title="pydantic-ai conversation")]
