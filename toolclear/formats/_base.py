"""What every format shares: the binding that writes a transcript back, a builder of
conversations, and JSON helpers for readers."""

from __future__ import annotations

import json
from array import array
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, overload

from ..errors import TranscriptError
from ..model import OMITTED, Message, ToolCall, Transcript, Usage, json_type
from ..schema import FormatName
from ._doc import Document, JsonStyle, Path, render_path
from ._splice import json_spans, splice

__all__ = [
    "Binding",
    "as_dict",
    "as_list",
    "IN_JSON",
    "InJson",
    "cassette_requests",
    "token_count",
    "Builder",
    "Wrap",
    "TEXT_INSIDE",
    "FormatReader",
    "compact_json",
    "parts_text",
    "content_text",
    "json_type",
    "result_text_paths",
    "str_or",
    "str_or_none",
    "where",
]


def as_dict(value: Any) -> dict[str, Any]:
    """The value if it is an object, else an empty one (untrusted JSON, typed for readers)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """The value if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class InJson:
    """A step into a string that holds JSON: a VCR cassette's request body as vcrpy
    stores it. A new value below it is spliced into that JSON text, and the string
    written back whole (every other character of it unchanged)."""

    def __str__(self) -> str:
        return "<json>"


IN_JSON = InJson()


def _gunzip(data: bytes, path: Path, left: list[int]) -> bytes | None:
    """A gzip body decompressed in steps, never past ``limits.MAX_BODY_BYTES`` nor past
    what the cassette has ``left`` of ``MAX_CASSETTE_BYTES`` (a 1.5 MB body can inflate
    to 1 GiB): past either, the cassette is refused in one line naming the bound."""
    import zlib

    from ..errors import TranscriptError
    from ..limits import MAX_BODY_BYTES, how_to_raise

    limit, name = ((MAX_BODY_BYTES, "MAX_BODY_BYTES") if MAX_BODY_BYTES <= left[0]
                   else (left[0], "MAX_CASSETTE_BYTES"))
    out, pending, d = [], data, zlib.decompressobj(wbits=31)
    total = 0
    try:
        while pending and not d.eof:
            chunk = d.decompress(pending, 1 << 20)
            pending = d.unconsumed_tail
            total += len(chunk)
            if total > limit:
                raise TranscriptError(f"its gzip body decompresses to more than {limit:,} bytes (a decompression "
                                      f"bomb?); not read ({how_to_raise(name)})", where=render_path(path))
            out.append(chunk)
    except zlib.error:
        return None
    if not d.eof:
        return None  # truncated: not a body to read
    left[0] -= total
    return b"".join(out)


def _json_body(raw: Any, path: Path = (), left: list[int] | None = None) -> dict[str, Any] | None:
    """A cassette body's JSON object: a string, or bytes (gzip or not), as vcrpy keeps it."""
    if isinstance(raw, dict) and "string" in raw:  # vcrpy's {'string': ...} form
        raw = raw["string"]
    if isinstance(raw, (bytes, bytearray)):
        data = bytes(raw)
        if data[:2] == b"\x1f\x8b":
            from ..limits import MAX_CASSETTE_BYTES

            found = _gunzip(data, path, left if left is not None else [MAX_CASSETTE_BYTES])
            if found is None:
                return None
            data = found
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(raw, str) or not raw.lstrip().startswith("{"):
        return None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def cassette_requests(value: Any) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path, body) of each recorded request body of an API cassette (VCR), whatever API
    it is: the formats pick the bodies that hold their own message list. pydantic-ai's
    cassettes hold a ``parsed_body``; plain vcrpy keeps ``body`` as the JSON text that
    was sent (a string, ``{string: ...}``, or bytes, gzip or not)."""
    from ..limits import MAX_CASSETTE_BYTES

    left = [MAX_CASSETTE_BYTES]  # what the cassette's compressed bodies may still decompress to
    for i, it in enumerate(as_list(as_dict(value).get("interactions"))):
        request = as_dict(as_dict(it).get("request"))
        body = as_dict(request.get("parsed_body"))
        if body:
            yield ("interactions", i, "request", "parsed_body"), body
            continue
        raw = request.get("body")
        parsed = _json_body(raw, ("interactions", i, "request", "body"), left)
        if parsed is not None:
            base: Path = ("interactions", i, "request", "body")
            yield base + (("string",) if isinstance(raw, dict) else ()) + (IN_JSON,), parsed


MAX_TOKENS = 10**12
"""The most tokens one usage field of one call is taken to hold: past it a count is a
mutation or an overflow, not a call (and sums of it over a run would overflow the cost
model's 64-bit arrays), so it reads as not recorded."""


def token_count(value: Any) -> int:
    """A usage field as a count: a whole number from 0 to ``MAX_TOKENS``, else 0 (a string,
    a bool, NaN, a negative or absurd number is not a count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS else 0


def compaction_usage(usage: dict[str, Any], model: str) -> Usage | None:
    """What Anthropic's server-side compaction cost within a call: the ``usage.iterations``
    entries of type ``compaction`` (the top-level counts are the answer's alone)."""
    iterations = usage.get("iterations")
    found = [it for it in (iterations if isinstance(iterations, list) else [])
             if isinstance(it, dict) and it.get("type") == "compaction"]
    if not found:
        return None
    total = Usage()
    for it in found:
        total = total + Usage(
            input_tokens=token_count(it.get("input_tokens")), output_tokens=token_count(it.get("output_tokens")),
            cache_write_tokens=token_count(it.get("cache_creation_input_tokens")),
            cache_read_tokens=token_count(it.get("cache_read_input_tokens")))
    return replace(total, model=model, source="usage.iterations (compaction)")


def str_or(value: Any, default: str = "") -> str:
    """The value if it is a string, else ``default``."""
    return value if isinstance(value, str) else default


def str_or_none(value: Any) -> str | None:
    """The value if it is a string: untrusted values go through this before any set or
    dict lookup (a list or object there would raise TypeError: unhashable)."""
    return value if isinstance(value, str) else None


def where(doc: Document, path: Path) -> str:
    """'line 12: $.message.content[0]' for JSON Lines, '$.messages[3]' otherwise."""
    return _located(doc.kind == "jsonl" and bool(path), path)


def _located(in_line: bool, path: Path) -> str:
    """``path`` as text, its first step a JSON Lines line index when ``in_line``."""
    return f"line {path[0] + 1}: {render_path(path[1:])}" if in_line else render_path(path)


def _compact_encoder() -> Any:
    """The stdlib's C encoder set up once as ``compact_json``'s ``json.dumps`` sets it up
    on every call (a tool call's arguments are encoded once per call read: setting it up
    was over half of that)."""
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - CPython has it
        return None
    if c_make_encoder is None:  # pragma: no cover
        return None
    return c_make_encoder(None, str, encode_basestring, None, ":", ",", False, False, True)


_COMPACT = _compact_encoder()


def compact_json(value: Any) -> str:
    """How a non-text part is shown and counted: compact JSON, non-ASCII kept."""
    if _COMPACT is not None and (value.__class__ is dict or value.__class__ is list):
        try:
            return "".join(_COMPACT(value, 0))
        except RecursionError:  # deep, or a value that holds itself: json.dumps says which
            pass
    # default=str: YAML cassettes can hold dates and other values JSON has no type for
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


_RESULT_TEXT_MIN = 80
_ID_KEYS = frozenset(
    {"filePath", "file_path", "fileName", "path", "url", "type", "mode", "status", "agentId", "taskId", "shellId",
     "id", "task_id", "task_type", "description", "subject", "query", "command", "codeText",
     "retrieval_status", "outputFile", "backgroundTaskId", "timestamp", "service_tier", "prompt"}
)


def result_text_paths(value: Any, path: tuple[Any, ...], result: str) -> list[tuple[Any, ...]]:
    """Where a tool's structured copy of its result (Claude Code's ``toolUseResult``,
    Gemini CLI's ``resultDisplay``) holds the result's text: the value itself when it
    is a string, else the strings inside it that are not names, paths or ids and are
    long, multi-line, or part of the result the model saw. Only those are replaced on
    export, so every field keeps its type for the tool's own readers and no copy of a
    cleared result is left."""
    if isinstance(value, str):
        return [path]

    def holds_text(text: str) -> bool:
        return len(text) >= _RESULT_TEXT_MIN or "\n" in text or (bool(text.strip()) and text.strip() in result)

    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack:
        node, at = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            if isinstance(child, str):
                if key not in _ID_KEYS and holds_text(child):
                    out.append(at + (key,))
            elif isinstance(child, (dict, list)) and key != "usage":  # recorded usage is no result text
                stack.append((child, at + (key,)))
    return sorted(out, key=lambda p: [str(k) for k in p])


_TEXT_KEYS = ("text", "thinking")


def parts_text(parts: list[Any]) -> str:
    """A list of content parts as the policy counts it (the live adapters share this, so
    a live run and its saved transcript count the same): the text of text parts and the
    compact JSON of any other part, joined by newlines."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text", "thinking"):
            text = next((part[k] for k in _TEXT_KEYS if isinstance(part.get(k), str)), None)
            out.append(text if text is not None else compact_json(part))
        else:
            out.append(compact_json(part))
    return "\n".join(out)


def content_text(value: Any, doc: Document, path: Path, *, blocks_ok: bool = True) -> str:
    """Content that is a string, null, or a list of parts: the text of text parts and
    the compact JSON of any other part, joined by newlines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and blocks_ok:
        return parts_text(value)
    allowed = "a string or a list of parts" if blocks_ok else "a string"
    raise TranscriptError(f"expected {allowed}, got {json_type(value)}", where=where(doc, path))


@dataclass(frozen=True, slots=True)
class Wrap:
    """The last step of a slot whose new text must be wrapped to keep the file valid:
    the value at the path before it becomes ``{key: text}`` (a Gemini function
    response must stay an object)."""

    key: str


@dataclass(frozen=True, slots=True)
class TextInside:
    """The last step of a slot that stands for the strings inside the value at the path
    before it that hold the result's text (``result_text_paths`` of that value and the
    message's original content): worked out when the file is written, not while it is
    read (Claude Code's ``toolUseResult``: a tenth of reading a corpus of sessions)."""

    def __reduce__(self) -> str:
        return "TEXT_INSIDE"  # unpickled as the one instance (a pickled transcript writes back)


TEXT_INSIDE = TextInside()


@dataclass(frozen=True, slots=True)
class Binding:
    """Ties a transcript to its document: where each message's content lives."""

    doc: Document
    slots: Sequence[tuple[Path, ...]]
    originals: Sequence[Message]
    blanks: Sequence[tuple[Path, ...]] = ()
    """Per message, more places its text was split over (a second text part): emptied
    when the content changes, so the new text stands once and nothing old is left."""

    def edits(self, messages: Sequence[Message], label: str,
              indices: Sequence[int] | None = None) -> dict[Path, Any]:
        """Where each changed content goes; ``indices`` limits the work to the messages
        known to have changed (a live adapter knows)."""
        if len(messages) != len(self.originals):
            raise TranscriptError(
                f"got {len(messages)} messages for a transcript of {len(self.originals)}; "
                "dump writes back changed contents, it cannot add or remove messages",
                source=label,
            )
        out: dict[Path, Any] = {}
        for i in range(len(messages)) if indices is None else indices:
            new, old = messages[i], self.originals[i]
            if new is old or new.role == OMITTED:  # left out of one request, still in the log
                continue
            if new.role == "user" and old.role == "tool" and not new.tool_calls:
                # a result OpenHands sends as a user turn once masked: its text goes in its place
                new = old.with_content(new.content.lstrip("\n"))
            same_shape = (
                new.role == old.role
                and new.tool_calls == old.tool_calls
                and new.tool_call_id == old.tool_call_id
                and new.tool_name == old.tool_name
            )
            if not same_shape and _only_arguments(new, old):
                raise TranscriptError(
                    f"message {i}: its tool-call arguments were cleared (clear_tool_inputs); toolclear writes "
                    "back only contents in a log's own format, so export eino JSON or turn clear_tool_inputs off",
                    source=label,
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
                self._place(out, path, new.content, old.content)
            for path in self.blanks[i] if self.blanks else ():
                out[path] = ""
        return _embedded_edits(self.doc, out, label)

    def _place(self, out: dict[Path, Any], path: Path, text: str, was: str) -> None:
        """Where one slot puts a message's new text."""
        if path and isinstance(path[-1], Wrap):
            out[path[:-1]] = {path[-1].key: text}
        elif path and isinstance(path[-1], TextInside):
            node: Any = self.doc.value
            for step in path[:-1]:
                node = node[step]
            for inner in result_text_paths(node, path[:-1], was):
                out[inner] = text
        else:
            out[path] = text


def _embedded_edits(doc: Document, edits: dict[Path, Any], label: str) -> dict[Path, Any]:
    """Edits below an ``InJson`` step become one new string each: the JSON text with the
    new values spliced in, every other character of it as it was."""
    inner: dict[Path, dict[Path, Any]] = defaultdict(dict)
    out: dict[Path, Any] = {}
    for path, value in edits.items():
        k = next((j for j, step in enumerate(path) if isinstance(step, InJson)), None)
        if k is None:
            out[path] = value
        else:
            inner[path[:k]][path[k + 1:]] = value
    for prefix, sub in inner.items():
        node: Any = doc.value
        for step in prefix:
            node = node[step]
        text, packed = _body_text(node, prefix, label)
        spans = json_spans(text, sub)
        if spans is None:
            raise TranscriptError(f"{render_path(prefix)}: cannot find the edited value in the body's JSON",
                                  source=label)
        style = JsonStyle.detect(text)
        out[prefix] = packed(splice(text, spans, lambda new, _old, style=style: style.dumps(new)))
    return out


def _body_text(node: Any, prefix: Path, label: str) -> tuple[str, Any]:
    """A cassette body's JSON text, and how to store a new text as the body was stored:
    a string as a string; bytes (vcrpy's ``!!binary`` for httpx-based SDKs) as UTF-8
    bytes, gzipped again when they came gzipped."""
    from ..errors import TranscriptError

    if isinstance(node, str):
        return node, lambda text: text
    if isinstance(node, (bytes, bytearray)):
        data, zipped = bytes(node), node[:2] == b"\x1f\x8b"
        if zipped:
            import gzip

            data = gzip.decompress(data)  # read once already, within the body bounds
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            def packed(new: str) -> bytes:
                if zipped:
                    import gzip

                    return gzip.compress(new.encode("utf-8"), mtime=0)
                return new.encode("utf-8")
            return text, packed
    raise TranscriptError(f"{render_path(prefix)}: the cassette body is not JSON text; cannot be written back",
                          source=label)


def _only_arguments(new: Message, old: Message) -> bool:
    return (new.role == old.role and new.tool_call_id == old.tool_call_id and new.tool_name == old.tool_name
            and [(c.id, c.name) for c in new.tool_calls] == [(c.id, c.name) for c in old.tool_calls])


class Origins(Sequence[str]):
    """Where each message sits in its file ('line 12: $.message.content[0]'), worked out
    when shown: as strings, 200,000 of them took 24 MB of a log of tiny messages. A
    JSON Lines line number is kept in an array, the path within the line as one tuple
    per shape (the same few shapes repeat on every line)."""

    __slots__ = ("_jsonl", "_lines", "_rests", "_shapes")

    def __init__(self, jsonl: bool, blank: int = 0) -> None:
        self._jsonl = jsonl
        self._lines = array("q", [-1]) * blank  # -1: no origin; -2: a path not under a line
        self._rests: list[Path] = [()] * blank
        self._shapes: dict[Path, Path] | None = {}

    def append(self, path: Path) -> None:
        if not path:
            line, rest = -1, ()
        elif self._jsonl and isinstance(path[0], int):
            line, rest = path[0], path[1:]
        else:
            line, rest = -2, path
        if rest and self._shapes is not None:
            rest = self._shapes.setdefault(rest, rest)
            if len(self._shapes) > 1_000:  # paths that do not repeat: stop looking them up
                self._shapes = None
        self._lines.append(line)
        self._rests.append(rest)

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        line, rest = self._lines[i], self._rests[i]
        if line == -1:
            return ""
        return _located(line >= 0, (line, *rest) if line >= 0 else rest)

    def line(self, i: int) -> int | None:
        """The 0-based line of message ``i``'s record in a JSON Lines file, if any."""
        line = self._lines[i]
        return line if line >= 0 else None

    def __getstate__(self) -> tuple[Any, ...]:
        return (self._jsonl, self._lines, self._rests)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._jsonl, self._lines, self._rests = state
        self._shapes = None


class Slots(Sequence[tuple[Path, ...]]):
    """Per message, the places in its file its content is written back to. Most are one
    path under the message's own line or item (``(12, "content")``): the line is kept in
    an array and the rest as one tuple per shape, as ``Origins`` does; as tuples, a log of
    200,000 tiny messages held 27 MB of them."""

    __slots__ = ("_heads", "_tails", "_shapes")

    def __init__(self) -> None:
        self._heads = array("q")  # the line or item every path starts at, or -1: the tail is the paths
        self._tails: list[tuple[Path, ...]] = []
        self._shapes: dict[tuple[Path, ...], tuple[Path, ...]] | None = {}

    def _split(self, paths: Sequence[Path]) -> tuple[int, tuple[Path, ...]]:
        paths = tuple(paths)
        head, tail = -1, paths
        first = paths[0][0] if paths and paths[0] else None
        if first.__class__ is int and first >= 0 and all(p and p[0] == first for p in paths):
            head, tail = first, tuple(p[1:] for p in paths)
        if self._shapes is not None:
            tail = self._shapes.setdefault(tail, tail)
            if len(self._shapes) > 1_000:  # shapes that do not repeat: stop looking them up
                self._shapes = None
        return head, tail

    def append(self, paths: Sequence[Path]) -> None:
        if not paths:  # most messages but tool results: nowhere to write
            self._heads.append(-1)
            self._tails.append(())
            return
        head, tail = self._split(paths)
        self._heads.append(head)
        self._tails.append(tail)

    def __len__(self) -> int:
        return len(self._tails)

    @overload
    def __getitem__(self, i: int) -> tuple[Path, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[Path, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[Path, ...] | list[tuple[Path, ...]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        head, tail = self._heads[i], self._tails[i]
        return tail if head < 0 else tuple((head, *p) for p in tail)

    def __iter__(self) -> Iterator[tuple[Path, ...]]:
        for head, tail in zip(self._heads, self._tails):
            yield tail if head < 0 else tuple((head, *p) for p in tail)

    def __setitem__(self, i: int, paths: Sequence[Path]) -> None:
        self._heads[i], self._tails[i] = self._split(paths)

    def __delitem__(self, i: slice) -> None:
        del self._heads[i], self._tails[i]

    def copy(self) -> Slots:
        out = Slots()
        out._heads, out._tails, out._shapes = array("q", self._heads), list(self._tails), None
        return out

    def __getstate__(self) -> tuple[Any, ...]:
        return (self._heads, self._tails)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._heads, self._tails = state
        self._shapes = None


class Builder:
    """Collects one conversation's messages with where each came from."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.messages: list[Message] = []
        self.slots = Slots()
        self.blanks: list[tuple[Path, ...]] = []
        self.origins = Origins(doc.kind == "jsonl")
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self._calls: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.messages)

    def add(self, message: Message, slots: Sequence[Path] = (), origin: Path = (),
            blanks: Sequence[Path] = ()) -> int:
        for call in message.tool_calls:
            if call.id:
                self._calls[call.id] = call.name
        self.messages.append(message)
        self.slots.append(slots)
        self.blanks.append(tuple(blanks))
        self.origins.append(origin)
        return len(self.messages) - 1

    def extend_calls(self, index: int, calls: Sequence[ToolCall], content: str = "",
                     thinking: Sequence[str] = ()) -> None:
        """Merge more of an assistant reply (split over several records) into one message."""
        old = self.messages[index]
        kept = tuple((old.meta or {}).get("thinking", ())) + tuple(thinking)
        self.note_calls(calls)
        text = old.content + ("\n" if old.content and content else "") + content
        self.messages[index] = Message(
            role=old.role, content=text, tool_calls=old.tool_calls + tuple(calls), name=old.name,
            meta={**(old.meta or {}), "thinking": kept} if kept else old.meta,
        )
        self.slots[index] = ()
        self.blanks[index] = ()

    def note_calls(self, calls: Sequence[ToolCall]) -> None:
        """Calls a message holds, by id: the results after them take their names."""
        for call in calls:
            if call.id:
                self._calls[call.id] = call.name

    def set_usage(self, index: int, usage: Usage) -> None:
        """Attach what the model call that produced message ``index`` cost."""
        self.messages[index] = self.messages[index].with_usage(usage)

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
        notes = list(self.notes)
        odd = self.doc.non_finite
        if odd and any(m.usage is not None or m.role == "assistant" for m in messages):
            notes.append(f"the file writes {odd} where a number belongs (JSON has no such value): a usage count "
                         "written so reads as not recorded")
        return Transcript(
            format=fmt,
            messages=messages,
            id=id,
            source=source,
            title=title,
            container=container,
            warnings=tuple(self.warnings),
            notes=tuple(notes),
            origins=self.origins,
            _binding=Binding(self.doc, self.slots.copy(), messages,
                             tuple(self.blanks) if any(self.blanks) else ()),
        )


@dataclass
class FormatReader:
    """A transcript format: how to recognise it and read its conversations."""

    name: ClassVar[FormatName]
    label: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    where_found: ClassVar[str] = ""
    tool_result: ClassVar[str] = ""
    export_changes: ClassVar[str] = ""
    expects: ClassVar[str] = ""
    """What the file must look like; set for formats that read only their own shape,
    so forcing them on another file says what is missing instead of misreading it."""
    writes_as: ClassVar[str] = ""
    """The format an export is written in when it is not this one (a trace is written as
    an OpenAI Chat transcript); empty: exports are this format, byte for byte."""
    first_is_primary: ClassVar[bool] = False
    """The first conversation is *the* conversation (Claude Code's main line; the
    others are its subagents), so ``load`` returns it instead of asking for load_all."""

    def sniff(self, doc: Document) -> bool:
        raise NotImplementedError

    def read(self, doc: Document, source: str) -> list[Transcript]:
        raise NotImplementedError
