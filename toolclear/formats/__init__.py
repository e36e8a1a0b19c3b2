"""Transcript formats: a registry that sniffs a file's format and dispatches.

``load`` / ``load_all`` read a path, bytes, text or file object into ``Transcript``
values; ``dump`` writes messages back in the transcript's own format, changing only the
contents that changed. Every failure is a ``TranscriptError`` naming the source, the
format tried and where it failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._gc import paused_gc
from ..errors import TranscriptError
from ..model import Message, Transcript
from ._base import Binding, FormatReader
from ._doc import Document, Path, parse
from ._source import Source, read_source
from .chat import AnthropicFormat, EinoFormat, OpenAIFormat
from .claude_code import ClaudeCodeFormat
from .codex import CodexFormat
from .langchain import LangChainFormat
from .openhands import OpenHandsFormat
from .swe_agent import MiniSweAgentFormat, SweAgentFormat

__all__ = [
    "FormatInfo",
    "dump",
    "dump_all",
    "format_names",
    "formats",
    "load",
    "load_all",
]

# Most specific first: agent logs, then wrappers, then plain message lists.
_READERS: tuple[FormatReader, ...] = (
    ClaudeCodeFormat(),
    CodexFormat(),
    OpenHandsFormat(),
    SweAgentFormat(),
    MiniSweAgentFormat(),
    LangChainFormat(),
    AnthropicFormat(),
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


def formats() -> tuple[FormatInfo, ...]:
    """Every format toolclear reads, in the order auto-detection tries them."""
    return tuple(
        FormatInfo(r.name, r.label, r.where_found, r.tool_result, r.export_changes) for r in _READERS
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
            return "an API cassette none of whose requests has a parsed_body with 'messages'"
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
    reader: FormatReader | None = None
    try:
        reader = None if fmt == "auto" else _reader(fmt)
        with paused_gc():
            doc = parse(data)
        if reader is None:
            reader = _detect(doc)
        elif reader.expects and not reader.sniff(doc):
            raise TranscriptError(f"this is not a {reader.name} file: expected {reader.expects}; "
                                  f"found {_describe(doc)}")
        with paused_gc():
            transcripts = reader.read(doc, label)
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
    return transcripts


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
