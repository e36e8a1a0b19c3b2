"""Transcript formats: a registry that sniffs a file's format and dispatches.

``load`` / ``load_all`` read a path, bytes, text or file object into ``Transcript``
values; ``dump`` writes messages back in the transcript's own format, changing only the
contents that changed. Every failure is a ``TranscriptError`` naming the source, the
format tried and where it failed.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

from .._gc import paused_gc
from ..errors import TranscriptError
from ..model import Message, Transcript, json_type
from ._base import Binding, FormatReader
from ._doc import Document, Path, parse
from ._source import Source, read_source
from .chat import AnthropicFormat, EinoFormat, OpenAIFormat
from .claude_code import ClaudeCodeFormat
from .codex import CodexFormat
from .gemini import GeminiApiFormat, GeminiCliFormat, GoogleAdkFormat
from .langchain import LangChainFormat
from .openhands import OpenHandsFormat
from .otel import OtelFormat
from .pydantic_ai import PydanticAIFormat
from .responses import OpenAIResponsesFormat
from .smolagents import SmolagentsFormat
from .swe_agent import MiniSweAgentFormat, SweAgentFormat

__all__ = [
    "FormatInfo",
    "dump",
    "dump_all",
    "format_names",
    "list_formats",
    "load",
    "load_all",
]

# Most specific first: agent logs, then wrappers, then plain message lists.
_READERS: tuple[FormatReader, ...] = (
    ClaudeCodeFormat(),
    CodexFormat(),
    GeminiCliFormat(),
    OpenHandsFormat(),
    SweAgentFormat(),
    MiniSweAgentFormat(),
    SmolagentsFormat(),
    GoogleAdkFormat(),
    PydanticAIFormat(),
    LangChainFormat(),
    OpenAIResponsesFormat(),
    GeminiApiFormat(),
    AnthropicFormat(),
    OtelFormat(),
    EinoFormat(),
    OpenAIFormat(),
)


@dataclass(frozen=True, slots=True)
class FormatInfo:
    """One row of the README's format table (and of the app's format override)."""

    name: str
    label: str
    where_found: str
    tool_result: str
    export_changes: str
    writes_as: str = ""
    """The format its exports are in, when not its own (``otel`` -> ``openai``)."""


def written_as(name: str) -> str:
    """The format a transcript of format ``name`` is exported in (its own, except a
    trace's: ``otel`` -> ``openai``)."""
    return next((r.writes_as or r.name for r in _READERS if r.name == name), name)


def list_formats() -> tuple[FormatInfo, ...]:
    """Every format toolclear reads, in the order auto-detection tries them."""
    return tuple(
        FormatInfo(r.name, r.label, r.where_found, r.tool_result, r.export_changes, r.writes_as or r.name)
        for r in _READERS
    )


def format_names() -> tuple[str, ...]:
    return tuple(r.name for r in _READERS)


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def _reader(name: str) -> FormatReader:
    key = _normalise(name)
    for r in _READERS:
        if key == r.name or key in r.aliases:
            return r
    raise TranscriptError(
        f"unknown format '{name}'; known formats: auto, {', '.join(format_names())}"
    )


def _describe(doc: Document) -> str:
    """What the document holds, for the error when no format matches."""
    value = doc.value
    if doc.kind == "jsonl":
        keys: dict[str, None] = {}
        kinds = set()
        for _, rec in doc.records():
            if isinstance(rec, dict):
                keys.update(dict.fromkeys(str(k) for k in list(rec)[:8]))
            else:
                kinds.add(type(rec).__name__)
        if not keys:
            return "JSON Lines without objects"
        return (
            f"JSON Lines whose records have keys {', '.join(list(keys)[:10])}; expected messages "
            "(with 'role') or agent-log events (Claude Code / Codex lines with 'type')"
        )
    if isinstance(value, list):
        if not value:
            return "an empty list"
        dicts = [v for v in value if isinstance(v, dict)]
        if not dicts:
            return f"a list of {type(value[0]).__name__ if value[0] is not None else 'null'} values, not of messages"
        first = dicts[0]
        if "role" in first and not isinstance(first["role"], str):
            kind = type(first["role"]).__name__.replace("int", "number").replace("NoneType", "null")
            return f"$[0].role must be a string, got a {kind}"
        if "content" in first and "role" not in first:
            return "a list of objects with 'content' but no 'role': each message needs a 'role'"
        return (
            f"a list of objects with keys {', '.join(str(k) for k in list(first)[:10])}; expected messages "
            "(with 'role'), LangChain messages (with 'type'), or runs holding a message list"
        )
    if isinstance(value, dict):
        if isinstance(value.get("interactions"), list):
            return "an API cassette none of whose requests has a body (parsed_body, or the JSON text vcrpy keeps) with 'messages'"
        for key in ("messages", "history", "trajectory"):
            if key in value and not isinstance(value[key], list):
                got = json_type(value[key])
                return f"$.{key} is {'null' if got == 'null' else got}; expected a list of messages there"
        keys_list = ", ".join(str(k) for k in list(value)[:12]) or "none"
        return (
            f"an object with keys {keys_list}; expected 'messages', 'history' (SWE-agent, "
            "OpenHands) or 'interactions' (API cassette)"
        )
    kind = {str: "a JSON string", bool: "a JSON boolean", type(None): "JSON null"}.get(
        type(value), "a JSON number"
    )
    return f"{kind} is not a transcript; expected a list of messages or an object"


def _detect(doc: Document) -> FormatReader:
    for r in _READERS:
        if r.sniff(doc):
            return r
    raise TranscriptError(f"not a transcript format toolclear knows: {_describe(doc)}", format="auto")


def _format_arg(format: object) -> str:
    if format is None or format == "":
        return "auto"
    if not isinstance(format, str):
        raise TranscriptError(
            f"format must be a format name (a str), got {type(format).__name__}; "
            f"known formats: auto, {', '.join(format_names())}"
        )
    return "auto" if _normalise(format) == "auto" else format


def load_all(
    source: Source = None, format: str = "auto", *, name: str | None = None, text: str | None = None
) -> list[Transcript]:
    """Every conversation in a file: a list of one for a single conversation.

    ``source`` is a path (``str`` or ``Path``: always a path), bytes or a binary file;
    pass transcript text as ``text=``."""
    fmt = _format_arg(format)
    label, data = read_source(source, name, text=text)
    # one pause from parsing to letting the records go: the parsed records are most of what
    # is made, and freed before the collector ever looks at them (a pause per step had it
    # scan every record once: 6 % of reading a corpus of sessions)
    with paused_gc():
        return _read_all(data, label, fmt)


def _read_all(data: bytes, label: str, fmt: str) -> list[Transcript]:
    reader: FormatReader | None = None
    try:
        reader = None if fmt == "auto" else _reader(fmt)
        doc = parse(data)
        if reader is None:
            reader = _detect(doc)  # every reader's sniff walks the records: no cycles made
        elif reader.expects and not reader.sniff(doc):
            # what was found, without the auto-detect hint of what else it could be
            found = _describe(doc).split("; expected ")[0]
            raise TranscriptError(f"this is not a {reader.name} file: expected {reader.expects}; found {found}")
        transcripts = reader.read(doc, label)
        if _is_cassette(doc):
            transcripts = _every_provider(doc, label, reader, transcripts, fmt == "auto")
    except TranscriptError as exc:
        raise exc.with_context(source=label, format=getattr(reader, "name", None) or fmt) from None
    except RecursionError:
        raise TranscriptError(
            "nested too deeply to read", source=label, format=getattr(reader, "name", None) or fmt
        ) from None
    if not transcripts:
        raise TranscriptError("holds no conversation", source=label, format=reader.name)
    if all(not t.messages for t in transcripts):
        problems = [w for t in transcripts for w in t.warnings]
        if problems:
            # it looked like this format, but nothing in it could be read: say what is missing
            raise TranscriptError(f"no message could be read ({problems[0]})", source=label, format=reader.name)
    checked = check_coverage(doc, transcripts)
    doc.let_go()  # the parsed records: nothing reads them now (writing back parses a line again)
    return checked


_TOOL_TYPES = frozenset({
    "tool_result", "function_call_output", "custom_tool_call_output", "local_shell_call_output",
    "functionResponse", "function_response", "tool-response", "ObservationEvent", "tool_response",
})
_TOOL_ROLES = frozenset({"tool", "function", "tool-response", "ipython"})
_TOOL_KEYS = ("observation", "functionResponse", "function_response", "tool_response")
_WALK_BUDGET = 2_000_000


def _text_bytes(value: Any) -> int:
    total, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += len(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return total


_TOOL_KEY_SET = frozenset(_TOOL_KEYS)
_SKIPPED = _TOOL_KEY_SET | {"toolUseResult"}


def _looks_like_tool_output(doc: Document, enough: int | None = None) -> int | None:
    """Characters in the file that sit where agent logs keep tool output (tool-result
    blocks, tool-role messages, observations, function responses), counted without
    asking any reader; None when the file is too big to walk within the budget (its
    elements, strings and numbers included, each counted once).

    With ``enough``, the walk may stop early and return a bound instead: JSON Lines are
    walked big lines first, and once what was counted plus the size of the lines not yet
    walked is at most ``enough``, that sum is returned (a line never holds more
    characters of text than it has bytes). A log whose tool results were read stops
    after its few biggest lines: the whole walk was a fifth of reading a corpus."""
    roots, sizes = _walk_roots(doc, enough is not None)
    total, seen = 0, 0
    left = sum(sizes) if sizes is not None else 0
    stack: list[Any] = []
    pop, extend = stack.pop, stack.extend
    for n, root in enumerate(roots):
        if root.__class__ is dict or root.__class__ is list:
            stack.append(root)
        while stack:
            node = pop()
            if node.__class__ is dict:
                seen += len(node) + 1
                if seen > _WALK_BUDGET:
                    return None
                kind, other, role = node.get("type"), node.get("kind"), node.get("role")
                if (kind.__class__ is str and kind in _TOOL_TYPES) or \
                        (other.__class__ is str and other in _TOOL_TYPES) \
                        or (role.__class__ is str and role in _TOOL_ROLES):
                    total += _text_bytes({k: v for k, v in node.items() if k not in ("type", "kind", "role")})
                    continue
                if node.keys() & _TOOL_KEY_SET:
                    for key in _TOOL_KEYS:
                        if isinstance(node.get(key), (str, dict, list)):
                            total += _text_bytes(node[key])
                    extend([v for k, v in node.items()
                            if k not in _SKIPPED and (v.__class__ is dict or v.__class__ is list)])
                elif "toolUseResult" in node:
                    extend([v for k, v in node.items()
                            if k != "toolUseResult" and (v.__class__ is dict or v.__class__ is list)])
                else:
                    extend([v for v in node.values() if v.__class__ is dict or v.__class__ is list])
            else:  # a list
                seen += len(node) + 1
                if seen > _WALK_BUDGET:
                    return None
                extend([v for v in node if v.__class__ is dict or v.__class__ is list])
        if sizes is not None and enough is not None:
            left -= sizes[n]
            if total + left <= enough:
                return total + left
    return total


def _walk_roots(doc: Document, by_size: bool) -> tuple[Iterable[Any], Sequence[int] | None]:
    """What the misread walk starts from: the records of JSON Lines, else the one value.
    ``by_size``: the records twice the mean line size or more first, largest first, then
    the rest in file order, with each one's line size (held in an array: a log of
    200,000 tiny lines would hold megabytes of sorted lists at its reading's peak)."""
    if doc.kind != "jsonl":
        return [doc.value], None
    found = doc.records()
    records = found if isinstance(found, list) else list(found)
    sizes = _line_sizes(doc, records) if by_size else None
    if sizes is None or not records:
        return (r for _, r in records), None
    cut = 2 * sum(sizes) // len(sizes)
    big = sorted((k for k, n in enumerate(sizes) if n >= cut), key=sizes.__getitem__, reverse=True)
    order = array("q", chain(big, (k for k, n in enumerate(sizes) if n < cut)))
    return (records[k][1] for k in order), array("q", (sizes[k] for k in order))


def _line_sizes(doc: Document, records: list[tuple[int, Any]]) -> array | None:
    """Each record's line length (bytes, or characters for a decoded file): a bound on
    the characters of text in it."""
    if doc._offsets is not None:
        return array("q", (end - start for start, end in (doc._line_span(i) for i, _ in records)))
    if doc._lines is not None:
        lines = doc._lines
        return array("q", (len(lines[i]) for i, _ in records))
    return None


def check_coverage(doc: Document, transcripts: list[Transcript]) -> list[Transcript]:
    """Say when a file may have been misread: calls without results, no tool result at
    all, or much more text where tool output usually sits than was read as tool results."""
    found = sum(len(m.content) for t in transcripts for m in t.messages if m.role == "tool")
    results = sum(1 for t in transcripts for m in t.messages if m.role == "tool")
    extra: list[str] = []
    # the walk counts characters of the parsed file, never more than its bytes (JSON has no
    # aliases): when what was read is a quarter of that bound already, nothing it finds can
    # raise the warning, and a corpus of Claude Code sessions skips a fifth of its reading
    bounded = doc.kind in ("json", "jsonl") and results and found * 4 >= len(doc.data)
    # the walk may stop once it can tell no warning follows (``enough``): a quarter of the file's
    # tool text read bounds the count, with no result read a count past 1,000 warns
    enough = found * 4 if results else 1_000
    looks = _looks_like_tool_output(doc, enough) if isinstance(doc.value, (list, dict)) and not bounded else 0
    if looks is not None and looks > 1_000 and found * 4 < looks:
        extra.append(
            f"toolclear read {found:,} characters of tool results, but the file holds about {looks:,} "
            "characters where agent logs keep tool output; it may be a format or version toolclear "
            "misreads (try --format, and please report the file's shape)"
        )
    out = []
    for k, t in enumerate(transcripts):
        warnings, notes = list(t.warnings), list(t.notes)
        calls = {c.id for m in t.messages for c in m.tool_calls if c.id}
        answered = {m.tool_call_id for m in t.messages if m.role == "tool"}
        last_calls = {c.id for c in t.messages[-1].tool_calls} if t.messages else set()
        missing = calls - answered - last_calls  # a run may end on a call (finish, or cut off)
        if missing and not any("have no result" in w for w in warnings):
            warnings.append(f"{len(missing)} tool call(s) have no result in the transcript "
                            f"(e.g. '{sorted(missing)[0]}')")
        if not any(m.role == "tool" for m in t.messages):
            if t.messages and not calls:
                notes.append("no tool calls and no tool results: no policy changes this conversation")
            elif not t.messages:
                warnings.append("no message was read from this conversation")
        if k == 0:
            warnings.extend(extra)
            if results == 0 and looks and looks > 1_000 and not extra:
                warnings.append("no tool result was read although the file holds text where tool output sits")
        if warnings != list(t.warnings) or notes != list(t.notes):
            t = replace(t, warnings=tuple(warnings), notes=tuple(notes))
        out.append(t)
    return out


def _is_cassette(doc: Document) -> bool:
    return doc.kind != "jsonl" and isinstance(doc.value, dict) and isinstance(doc.value.get("interactions"), list)


def _request_index(t: Transcript) -> int:
    head, _, tail = t.id.rpartition(" ")
    return int(tail) if head == "request" and tail.isdigit() else -1


def _every_provider(doc: Document, label: str, first: FormatReader, found: list[Transcript],
                    auto: bool) -> list[Transcript]:
    """A cassette may record requests to several APIs (a pydantic-ai test calling Gemini
    and OpenAI): each request is read by the format its body is in. With a format named,
    the requests of other APIs are not read, and a warning says which."""
    taken = {_request_index(t) for t in found}
    others: list[Transcript] = []
    for r in _READERS:
        if r is first or not r.sniff(doc):
            continue
        try:
            more = [t for t in r.read(doc, label) if _request_index(t) not in taken]
        except TranscriptError:
            continue
        if not more:
            continue
        if auto:
            taken |= {_request_index(t) for t in more}
            others += more
        else:
            ids = ", ".join(str(_request_index(t)) for t in more[:5]) + (", ..." if len(more) > 5 else "")
            note = (f"{len(more)} request(s) of the cassette are {r.name} requests, not read as {first.name} "
                    f"(requests {ids}): load it with format='auto' to read each by its own API")
            found = [replace(found[0], warnings=(*found[0].warnings, note)), *found[1:]] if found else found
    if not others:
        return found
    return sorted([*found, *others], key=_request_index)


def load(
    source: Source = None, format: str = "auto", *, name: str | None = None, text: str | None = None
) -> Transcript:
    """The one conversation in a file (Claude Code: the main one, without sidechains)."""
    transcripts = load_all(source, format, name=name, text=text)
    if len(transcripts) > 1 and not _reader(transcripts[0].format).first_is_primary:
        ids = ", ".join(t.id for t in transcripts[:3])
        raise TranscriptError(
            f"holds {len(transcripts)} conversations ({ids}, ...); use toolclear.load_all() "
            "to get them all (CLI: --conversation ID)",
            source=transcripts[0].source,
            format=transcripts[0].format,
        )
    return transcripts[0]


def _binding(transcript: Transcript) -> Binding:
    binding = transcript._binding
    if not isinstance(binding, Binding):
        raise TranscriptError(
            "this transcript was not read by toolclear.load, so there is no file to write back "
            "into; use Message.to_dict() for eino JSON",
            source=transcript.source or None,
        )
    return binding


def dump(transcript: Transcript, messages: Sequence[Message] | None = None) -> bytes:
    """The transcript's file with ``messages`` written back in its own format; only
    changed contents (of tool results) change, everything else is kept byte for byte."""
    return dump_all([(transcript, transcript.messages if messages is None else messages)])


def dump_all(pairs: Iterable[tuple[Transcript, Sequence[Message]]]) -> bytes:
    """Several conversations of the same file written back at once."""
    doc: Document | None = None
    edits: dict[Path, Any] = {}
    for transcript, messages in pairs:
        binding = _binding(transcript)
        if doc is None:
            doc = binding.doc
        elif binding.doc is not doc:
            raise TranscriptError("dump_all needs conversations of one and the same file")
        edits.update(binding.edits(messages, transcript.source or transcript.id))
    if doc is None:
        raise TranscriptError("nothing to write")
    return doc.write(edits)
