"""The model calls of a Claude Code session, read from only the fields they need.

Listing a year of sessions (``toolclear sessions``, ``advise``) needs each session's
calls and their usage, not its text. msgspec decodes each line into the few fields the
reader looks at, scanning past tool output and prompts without building them: about a
third of the time of parsing every line whole, which was most of reading a session.

The lines are chosen exactly as the full read chooses them (``select_lines``,
``main_line``, ``sidechains`` are shared), streamed replies are merged on their message
id with the usage of their last line, and the conversation is the one the full read
opens on (the most tool results). Anything that read could judge otherwise (a line
that is not JSON, a field of an unexpected type, no usage at all, no msgspec) gives
None: the caller reads the file whole, so both reads agree (tested on every Claude
Code log in the tests and on hundreds of mutations of them). Two kinds of line, which
no Claude Code writes, the full read refuses and this read takes, because msgspec
scans past the fields it skips without converting them: bytes that are not UTF-8
inside a skipped string, and a number of more than 4,300 digits (more than Python
reads) in a skipped field. Checking for them would cost more than the read itself.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Union

from ..model import Message
from ._doc import first_line_is_object
from .claude_code import has_usage, is_message_event, main_line, read_usage, select_lines, sidechains

__all__ = ["SessionCalls", "session_calls"]


@dataclass(frozen=True)
class SessionCalls:
    """The conversation a session's log is opened on, as its assistant messages (with
    their usage; no text), and how many compactions it went through.

    Each message is kept as the fields of the line its usage is read from (None: none
    recorded): plain data, which a worker process hands back in a few milliseconds where
    the messages themselves took a tenth of a second."""

    usage_lines: tuple[dict[str, Any] | None, ...]
    compactions: int

    @property
    def messages(self) -> tuple[Message, ...]:
        blank = Message(role="assistant", content="")
        return tuple(blank.with_usage(read_usage(rec)) if rec is not None else blank for rec in self.usage_lines)


class _Unsure(Exception):
    """Something only the full read can judge: it decides."""


_DECODER: Any = None


def _decoder() -> Any:
    """msgspec's decoder of one line into the fields read here (None without msgspec)."""
    global _DECODER
    if _DECODER is None:
        try:
            import msgspec
        except ImportError:
            _DECODER = False
            return None

        # absent keys stay absent (``total=False``): the reader tells a missing field from a null
        class Block(TypedDict, total=False):
            type: Any
            id: Union[str, None]
            name: Union[str, None]
            tool_use_id: Union[str, None]
            input: msgspec.Raw  # kept as bytes: only its JSON type matters here
            content: msgspec.Raw

        class Msg(TypedDict, total=False):
            id: Any
            model: Any
            usage: Any
            content: Union[str, list[Block], None]

        class Event(TypedDict, total=False):
            type: Any
            uuid: Any
            parentUuid: Any
            logicalParentUuid: Any
            isSidechain: Any
            sessionId: Any
            subtype: Any
            requestId: Any
            timestamp: Any
            payload: msgspec.Raw
            message: Union[Msg, None]

        global _RAW
        _DECODER, _RAW = msgspec.json.Decoder(Event), msgspec.Raw
    return _DECODER or None


def _records(data: bytes) -> list[Any] | None:
    """Each line's fields (None for a blank line), or None when any line is not one
    JSON object of the expected shape, or the file would not be read as JSON Lines."""
    decoder = _decoder()
    if decoder is None:
        return None
    import msgspec

    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not first_line_is_object(body):
        return None
    decode, whole = decoder.decode, msgspec.json.decode
    view = memoryview(body)  # each line decoded where it lies: no copy of it
    records: list[Any] = []
    append = records.append
    pos, size = 0, len(body)
    while True:
        nl = body.find(b"\n", pos)
        end = size if nl == -1 else nl
        try:
            append(decode(view[pos:end]))
        except msgspec.ValidationError:
            # JSON, of another shape (a line that is not an event, a message that is a
            # string): read whole, as the full read sees it, and judged as it judges it
            try:
                append(whole(view[pos:end]))
            except (msgspec.MsgspecError, RecursionError, ValueError):
                return None
        except (msgspec.MsgspecError, RecursionError, ValueError):
            if body[pos:end].strip():
                return None
            append(None)  # a blank line (the end of the file, mostly)
        if nl == -1:
            break
        pos = nl + 1
    return records


_RESULT_STARTS = frozenset(b'"[n')  # a tool result's content: a string, a list or null
_INPUT_STARTS = frozenset(b'"{[n')  # a call's input: a string, an object, a list or null
_NONE: frozenset[int] = frozenset()  # (ids are decoded: never left as JSON)


def _of_type(value: Any, starts: frozenset[int], types: tuple[type, ...]) -> bool:
    """Whether a field the full read reads is of a type it accepts (null, or one of
    ``types``): judged by its first byte where it was left as JSON."""
    if value.__class__ is _RAW:
        return memoryview(value)[0] in starts
    return value is None or isinstance(value, types)


_RAW: Any = None


def _check_calls(blocks: list[Any]) -> None:
    """A reply's calls as the full read reads them (else it refuses the file, and says why)."""
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use" and not (
                _of_type(block.get("id"), _NONE, (str,)) and _of_type(block.get("name"), _NONE, (str,))
                and _of_type(block.get("input"), _INPUT_STARTS, (str, dict, list))):
            raise _Unsure


def _user_blocks(blocks: list[Any], role: str, roles: list[str]) -> int:
    """The messages ``read_anthropic_blocks`` makes of a user line's blocks (a tool
    message per result, a user message of the text between): their roles added to
    ``roles``; how many are tool results."""
    tools, pending = 0, False
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if not (_of_type(block.get("tool_use_id"), _NONE, (str,))
                    and _of_type(block.get("content"), _RESULT_STARTS, (str, list))):
                raise _Unsure
            if pending:
                roles.append(role)
            roles.append("tool")
            tools, pending = tools + 1, False
        else:
            pending = True
    if pending:
        roles.append(role)
    return tools


@dataclass
class _Tally:
    usage_lines: list[dict[str, Any] | None]
    tools: int
    last_line: int


def _usage_line(rec: dict[str, Any]) -> dict[str, Any]:
    """The fields of a line ``read_usage`` reads (no content, no msgspec values)."""
    msg = rec["message"]
    out: dict[str, Any] = {"message": {k: msg[k] for k in ("id", "model", "usage") if k in msg}}
    for key in ("requestId", "timestamp"):
        if key in rec:
            out[key] = rec[key]
    return out


def _tally(records: Sequence[Any], lines: list[int]) -> _Tally:
    """What ``ClaudeCodeFormat._build`` makes of these lines, counted: its assistant
    messages with their usage, its tool results, and the line of its last message."""
    roles: list[str] = []
    usage_line: dict[int, dict[str, Any]] = {}
    by_reply: dict[str, int] = {}
    tools, last = 0, -1
    for i in lines:
        rec = records[i]
        msg = rec["message"]
        role = rec["type"]
        content = msg.get("content")
        if content is None or isinstance(content, str):
            roles.append(role)
            last = i
            continue
        if not isinstance(content, list):
            continue  # (the full read warns and leaves the line out)
        if role == "assistant":
            _check_calls(content)
            reply = msg.get("id")
            index = by_reply.get(reply) if isinstance(reply, str) else None
            if index is None:
                index = len(roles)
                roles.append(role)
                last = i
                if isinstance(reply, str):
                    by_reply[reply] = index
            if has_usage(rec):  # each line of a split reply repeats it; the last is final
                usage_line[index] = rec
            continue
        before = len(roles)
        tools += _user_blocks(content, role, roles)
        if len(roles) > before:
            last = i
    lines_ = [_usage_line(usage_line[k]) if k in usage_line else None for k, r in enumerate(roles) if r == "assistant"]
    return _Tally(lines_, tools, last)


def session_calls(data: bytes) -> SessionCalls | None:
    """The calls of the conversation the full read opens this Claude Code log on, or
    None where only the full read can tell (see the module's docstring)."""
    from .._gc import paused_gc

    with paused_gc():
        records = _records(data)
        if records is None or not any(is_message_event(r) for r in records):
            return None  # (not a Claude Code log: another reader decides what it is)
        sel = select_lines(records)
        main = main_line(records, sel.main, sel.by_uuid)
        groups = sidechains(records, sel.side, sel.by_uuid)
        convs = ([main] if main or not groups else []) + groups
        try:
            tallies = [_tally(records, lines) for lines in convs]
        except _Unsure:
            return None
    best = max(range(len(tallies)), key=lambda k: tallies[k].tools)  # the first of those that tie
    chosen = tallies[best]
    if all(rec is None for rec in chosen.usage_lines):
        return None  # no usage: the summary counts the text's tokens, which only the full read has
    on_main = best == 0 and bool(main or not groups)
    compactions = sum(1 for b in sel.compactions if b < chosen.last_line) if on_main else 0
    return SessionCalls(tuple(chosen.usage_lines), compactions)
