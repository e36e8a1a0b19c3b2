"""What every format shares: the binding that writes a transcript back, a builder of
conversations, and JSON helpers for readers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript, Usage, json_type
from ._doc import Document, Path, render_path

__all__ = [
    "Binding",
    "Builder",
    "FormatReader",
    "compact_json",
    "content_text",
    "json_type",
    "str_or_none",
    "where",
]


def str_or_none(value: Any) -> str | None:
    """The value if it is a string: untrusted values go through this before any set or
    dict lookup (a list or object there would raise TypeError: unhashable)."""
    return value if isinstance(value, str) else None


def where(doc: Document, path: Path) -> str:
    """'line 12: $.message.content[0]' for JSON Lines, '$.messages[3]' otherwise."""
    if doc.kind == "jsonl" and path:
        return f"line {path[0] + 1}: {render_path(path[1:])}"
    return render_path(path)


def compact_json(value: Any) -> str:
    """How a non-text part is shown and counted: compact JSON, non-ASCII kept."""
    # default=str: YAML cassettes can hold dates and other values JSON has no type for
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


_TEXT_KEYS = ("text", "thinking")


def content_text(value: Any, doc: Document, path: Path, *, blocks_ok: bool = True) -> str:
    """Content that is a string, null, or a list of parts: the text of text parts and
    the compact JSON of any other part, joined by newlines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and blocks_ok:
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in (
                "text", "input_text", "output_text", "thinking",
            ):
                text = next((part[k] for k in _TEXT_KEYS if isinstance(part.get(k), str)), None)
                parts.append(text if text is not None else compact_json(part))
            else:
                parts.append(compact_json(part))
        return "\n".join(parts)
    allowed = "a string or a list of parts" if blocks_ok else "a string"
    raise TranscriptError(f"expected {allowed}, got {json_type(value)}", where=where(doc, path))


@dataclass(frozen=True, slots=True)
class Binding:
    """Ties a transcript to its document: where each message's content lives."""

    doc: Document
    slots: tuple[tuple[Path, ...], ...]
    originals: tuple[Message, ...]

    def edits(self, messages: Sequence[Message], label: str) -> dict[Path, Any]:
        if len(messages) != len(self.originals):
            raise TranscriptError(
                f"got {len(messages)} messages for a transcript of {len(self.originals)}; "
                "dump writes back changed contents, it cannot add or remove messages",
                source=label,
            )
        out: dict[Path, Any] = {}
        for i, (new, old) in enumerate(zip(messages, self.originals)):
            if new is old:
                continue
            same_shape = (
                new.role == old.role
                and new.tool_calls == old.tool_calls
                and new.tool_call_id == old.tool_call_id
                and new.tool_name == old.tool_name
            )
            if not same_shape:
                raise TranscriptError(
                    f"message {i} changed more than its content; only contents can be written back",
                    source=label,
                )
            if not isinstance(new.content, str):
                raise TranscriptError(
                    f"message {i} has content of type {type(new.content).__name__}; only text can be written",
                    source=label,
                )
            if new.content == old.content:
                continue
            if not self.slots[i]:
                raise TranscriptError(
                    f"message {i} ({old.role}) has no single place in the file to write "
                    "new content to; only tool results can be rewritten",
                    source=label,
                )
            for path in self.slots[i]:
                out[path] = new.content
        return out


class Builder:
    """Collects one conversation's messages with where each came from."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.messages: list[Message] = []
        self.slots: list[tuple[Path, ...]] = []
        self.origins: list[str] = []
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self._calls: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.messages)

    def add(self, message: Message, slots: Sequence[Path] = (), origin: Path = ()) -> int:
        for call in message.tool_calls:
            if call.id:
                self._calls[call.id] = call.name
        self.messages.append(message)
        self.slots.append(tuple(slots))
        self.origins.append(where(self.doc, origin) if origin else "")
        return len(self.messages) - 1

    def extend_calls(self, index: int, calls: Sequence[ToolCall], content: str = "") -> None:
        """Merge more of an assistant reply (split over several records) into one message."""
        old = self.messages[index]
        for call in calls:
            if call.id:
                self._calls[call.id] = call.name
        text = old.content + ("\n" if old.content and content else "") + content
        self.messages[index] = Message(
            role=old.role, content=text, tool_calls=old.tool_calls + tuple(calls), name=old.name
        )
        self.slots[index] = ()

    def set_usage(self, index: int, usage: Usage) -> None:
        """Attach what the model call that produced message ``index`` cost."""
        self.messages[index] = replace(self.messages[index], usage=usage)

    def tool_name_for(self, call_id: str) -> str:
        """The name of the most recent call with this id ("" if none)."""
        return self._calls.get(call_id, "")

    def build(
        self,
        fmt: str,
        *,
        id: str = "0",
        source: str = "",
        title: str = "",
        container: str = "",
    ) -> Transcript:
        messages = tuple(self.messages)
        return Transcript(
            format=fmt,
            messages=messages,
            id=id,
            source=source,
            title=title,
            container=container,
            warnings=tuple(self.warnings),
            notes=tuple(self.notes),
            origins=tuple(self.origins),
            _binding=Binding(self.doc, tuple(self.slots), messages),
        )


@dataclass
class FormatReader:
    """A transcript format: how to recognise it and read its conversations."""

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    where_found: ClassVar[str] = ""
    tool_result: ClassVar[str] = ""
    export_changes: ClassVar[str] = ""
    expects: ClassVar[str] = ""
    """What the file must look like; set for formats that read only their own shape,
    so forcing them on another file says what is missing instead of misreading it."""
    first_is_primary: ClassVar[bool] = False
    """The first conversation is *the* conversation (Claude Code's main line; the
    others are its subagents), so ``load`` returns it instead of asking for load_all."""

    def sniff(self, doc: Document) -> bool:
        raise NotImplementedError

    def read(self, doc: Document, source: str) -> list[Transcript]:
        raise NotImplementedError
