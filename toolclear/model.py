"""The canonical message model, following eino's message JSON names.

Every format is read into these immutable values and the policy only ever sees them.
A message remembers the dict it was read from so that ``to_dict`` gives back unknown
fields unchanged; eino omits empty strings, so a missing optional string means "".
"""

from __future__ import annotations

import copy
import enum
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, overload

from .errors import TranscriptError

__all__ = [
    "main_conversation",
    "reply_time",
    "Message",
    "MessageStatus",
    "Role",
    "Slot",
    "ToolCall",
    "Transcript",
    "Usage",
]


_intern = sys.intern
_ENDS = ("", "")


def _own(text: Any) -> Any:
    """A copy of a short string read from a file (a longer one, or anything else, as it
    is). The parser makes a message's strings among the records it parses, and one of
    them kept alive keeps the memory page it shares with them: a message holding its own
    copies lets the records free whole pages once read (200,000 tiny messages held 194
    MB after reading, 120 MB with copies). Long strings are not in those pages."""
    return text.join(_ENDS) if text.__class__ is str and 0 < len(text) < 400 else text


def _own_name(text: Any) -> Any:
    """One copy per distinct name (a role, a tool's name, a call's type)."""
    return _intern(_own(text)) if text.__class__ is str else text


class Slot(enum.Enum):
    """What a message memoises besides its token counts, one slot each. The counts are
    kept under each counter's ``counters.CountKey``; every other slot is a member here, so no
    two modules share a key by accident and no counter's name can take one."""

    __hash__ = object.__hash__  # members are singletons: hashed by identity, in C (Enum's own is Python)

    CLEARED = enum.auto()
    """``Message.replaced``: (the text, the copy holding it)."""
    ROW = enum.auto()
    """The report's role, tool, call id and preview."""
    HOVER = enum.auto()
    """The chart's hover text."""
    THINKING = enum.auto()
    """Anthropic: the message's thinking on its own."""
    MASK = enum.auto()
    """Masking: (MASK, placeholder) -> the mask this message gets."""
    OMITTED = enum.auto()
    MASKED = enum.auto()
    """Masking: the message as the request leaves it out, or masks it."""
    CUSTOM_COUNT = enum.auto()
    """(the custom counter last used, its count): one slot for any custom counter."""
    LOST_RUN = enum.auto()
    """Losses: what is the same for every replay of the run (on its first message)."""
    LOST_LINES = enum.auto()
    """Losses: the message's non-trivial lines, in order and as a set (whose text a reply copied)."""


class Role(str, enum.Enum):
    """The four roles eino knows. Other role strings are kept as they are."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"

    def __str__(self) -> str:
        return self.value


class MessageStatus(str, enum.Enum):
    """What the policy did with (or to) one message; the app colours by it."""

    PROTECTED = "protected"  # a tool result inside the protected window
    CLEARED = "cleared"  # replaced by the placeholder by this reduction
    ALREADY_CLEARED = "already cleared"  # held exactly the placeholder before
    EXCLUDED = "excluded"  # a tool result of an excluded tool
    KEPT = "kept"  # not a tool result, or the policy did not trigger
    OFFLOADED = "offloaded"  # written to storage; the model sees a notice
    COMPACTED = "compacted"  # dropped by a compaction; a summary stands for it

    def __str__(self) -> str:
        return self.value


def _str_field(d: Mapping[str, Any], key: str, path: str, *, null_ok: bool = True) -> str:
    value = d.get(key, "")
    if value is None and null_ok:
        return ""
    if not isinstance(value, str):
        raise TranscriptError(
            f"expected a string, got {json_type(value)}", where=f"{path}.{key}"
        )
    return value


def utf8_len(text: str) -> int:
    """UTF-8 byte length, as Go counts it (a lone surrogate is 3 bytes, like U+FFFD)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def json_type(value: Any) -> str:
    """'a number', 'an object', ...: how error messages name a JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@dataclass(frozen=True, slots=True)
class Usage:
    """What one model call cost, as the log recorded it (never counted as message text).

    Token counts follow Anthropic's split, which the other providers map onto:
    ``input_tokens`` is the uncached prompt, ``cache_write_tokens`` what was written to
    the prompt cache, ``cache_read_tokens`` what was read from it; the whole prompt is
    their sum (``prompt_tokens``). ``source`` names the log field it came from.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    reasoning_tokens: int = 0
    model: str = ""
    timestamp: str = ""
    source: str = ""
    context_window: int = 0
    """The model's context window where the log records it (Codex's
    ``model_context_window``); 0 when it does not."""
    cache_write_1h_tokens: int = 0
    """Of ``cache_write_tokens``, those written with Anthropic's 1-hour lifetime
    (``usage.cache_creation.ephemeral_1h_input_tokens``), billed at the 1-hour rate."""
    call_id: str = ""
    """The provider's ids of this call where the log records them (Claude Code: the
    message id and the request id): the same call written into several logs (a resumed
    session repeats the calls of the one it resumed) is billed once in totals."""
    compaction: Usage | None = None
    """The compaction the provider ran within this call before answering, billed apart
    (Anthropic's ``usage.iterations`` entries of type ``compaction``: they read the whole
    context and write the summary; the top-level counts leave them out)."""

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.model if self.model == other.model else "",
            "",
            self.source if self.source == other.source else "",
            max(self.context_window, other.context_window),
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.call_id if self.call_id == other.call_id else "",
            self.compaction + other.compaction if self.compaction is not None and other.compaction is not None
            else self.compaction or other.compaction,
        )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant message: ``{id, type, function: {name, arguments}}``."""

    id: str = ""
    name: str = ""
    arguments: str = ""
    type: str = "function"
    _raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    _shape: CallShape | None = field(default=None, compare=False, repr=False)
    """Instead of ``_raw`` when the source dict says nothing its fields do not (the
    usual ``{id, type, function: {name, arguments}}``): which of its keys it had, in
    order. A log of 50,000 calls kept 100,000 such dicts alive (18 MB, and the parse's
    memory they pinned) only to write them back as they were."""

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "id", _own(self.id))
        setattr_(self, "name", _own_name(self.name))
        setattr_(self, "arguments", _own(self.arguments))
        setattr_(self, "type", _own_name(self.type))

    @classmethod
    def of(cls, d: dict[str, Any], id: str, name: str, arguments: str, type: str) -> ToolCall:
        """The call read from ``d`` with these fields: its dict kept only where writing
        it back needs more than its shape."""
        shape = call_shape(d)
        return cls(id, name, arguments, type, None if shape is not None else d, shape)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, path: str = "$") -> ToolCall:
        if not isinstance(d, Mapping):
            raise TranscriptError(f"expected a tool call object, got {json_type(d)}", where=path)
        fn = d.get("function", {})
        if fn is None:
            fn = {}
        if not isinstance(fn, Mapping):
            raise TranscriptError(
                f"expected an object, got {json_type(fn)}", where=f"{path}.function"
            )
        # the reader's own dict, never changed: not copied
        return cls.of(d if type(d) is dict else dict(d), _str_field(d, "id", path),
                      _str_field(fn, "name", f"{path}.function"), _str_field(fn, "arguments", f"{path}.function"),
                      _str_field(d, "type", path))

    def to_dict(self, *, shared: bool = False) -> dict[str, Any]:
        """The call's JSON: its source dict with what changed written over it. A copy
        the caller may change; with ``shared``, the source's nested values are shared
        (for a dict only read: eino's reduction keeps one per flagged message)."""
        if self._raw is None and self._shape is not None:
            return self._from_shape(self._shape)
        if self._raw is None:
            out: dict[str, Any] = {}
            if self.id:
                out["id"] = self.id
            out["type"] = self.type
            fn: dict[str, Any] = {}
            if self.name:
                fn["name"] = self.name
            if self.arguments:
                fn["arguments"] = self.arguments
            out["function"] = fn
            return out
        base = ToolCall.from_dict(self._raw)
        if shared and base == self:
            return dict(self._raw)
        out = dict(self._raw) if shared else copy.deepcopy(dict(self._raw))
        if self.id != base.id:
            out["id"] = self.id
        if self.type != base.type:
            out["type"] = self.type
        if self.name != base.name or self.arguments != base.arguments:
            fn = dict(self._raw.get("function") or {})
            if self.name != base.name:
                fn["name"] = self.name
            if self.arguments != base.arguments:
                fn["arguments"] = self.arguments
            out["function"] = fn
        return out

    def _from_shape(self, shape: CallShape) -> dict[str, Any]:
        """What the branch over ``_raw`` makes of the dict ``shape`` stands for: its keys
        in order with this call's values, then any field its source lacked and this call
        sets (a source's missing key reads as "")."""
        top, fn_keys = shape
        out: dict[str, Any] = {}
        for key in top:
            if key == "function":
                out["function"] = self._function(fn_keys or ())
            else:
                out[key] = self.id if key == "id" else self.type
        if "id" not in top and self.id:
            out["id"] = self.id
        if "type" not in top and self.type:
            out["type"] = self.type
        if "function" not in top and (self.name or self.arguments):
            out["function"] = self._function(())
        return out

    def _function(self, keys: tuple[str, ...]) -> dict[str, Any]:
        fn = {key: self.name if key == "name" else self.arguments for key in keys}
        if "name" not in keys and self.name:
            fn["name"] = self.name
        if "arguments" not in keys and self.arguments:
            fn["arguments"] = self.arguments
        return fn


CallShape = tuple[tuple[str, ...], tuple[str, ...] | None]
_TOP_KEYS = frozenset({"id", "type"})
_FN_KEYS = frozenset({"name", "arguments"})
_SHAPES: dict[CallShape, CallShape] = {}


def call_shape(d: dict[str, Any]) -> CallShape | None:
    """The keys of a tool call dict holding only string ``id``, ``type`` and a
    ``function`` of string ``name`` and ``arguments`` (then its fields say all of it), one
    shared tuple per shape; None for any other dict. Bounded: only those keys make one."""
    fn_keys: tuple[str, ...] | None = None
    for key, value in d.items():
        if key == "function":
            if value.__class__ is not dict:
                return None
            for fk, fv in value.items():
                if fk not in _FN_KEYS or fv.__class__ is not str:
                    return None
            fn_keys = tuple(value)
        elif key not in _TOP_KEYS or value.__class__ is not str:
            return None
    shape = (tuple(d), fn_keys)
    return _SHAPES.setdefault(shape, shape)


class _NoMemo(dict):
    """The memo of a message that has memoised nothing yet: empty, read as any dict, and
    never written (``memo_put`` gives the message a dict of its own first). A log of
    200,000 tiny messages held 12 MB of empty dicts, one per message."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a message's empty memo is shared: write with toolclear.model.memo_put")

    __setitem__ = setdefault = update = __ior__ = _refuse
    # one object for every message, never changed: hashable, so dataclasses take it as a default
    __hash__ = object.__hash__  # type: ignore[assignment]


NO_MEMO: dict[Any, Any] = _NoMemo()


def memo_put(m: Message, key: Any, value: Any) -> Any:
    """Memoise ``value`` under ``key`` on ``m``; returns the value."""
    memo = m._memo
    if memo.__class__ is _NoMemo:
        object.__setattr__(m, "_memo", {key: value})
    else:
        memo[key] = value
    return value


_CACHE_SLOTS = ("_ck", "_cn", "_lc", "_red", "_terms")
_COPIES = frozenset({Slot.CLEARED, Slot.MASKED, Slot.OMITTED, Slot.THINKING})


def forget_copies(messages: Sequence[Message]) -> None:
    """Drop what the messages memoised for one policy's replay (cleared and masked
    copies, masks), keeping their counts and terms: a setting tried once (the verdict's
    others, a sweep's cell) need not keep its copies for the life of the run. The memo
    is a cache: what is dropped is made again if asked for."""
    setattr_ = object.__setattr__
    for m in messages:
        memo = m._memo
        if memo and any(map(_is_copy, memo)):
            # a new dict: a dict emptied in place keeps its table's size
            setattr_(m, "_memo", {k: v for k, v in memo.items() if not _is_copy(k)} or NO_MEMO)
    for drop in COPIES_KEPT_ELSEWHERE:
        drop(messages)


COPIES_KEPT_ELSEWHERE: list[Callable[[Sequence[Message]], None]] = []
"""How each policy that keeps copies of a run's messages outside their memos (eino's
outputs per cleared set) lets them go when ``forget_copies`` is asked to."""


def _is_copy(key: Any) -> bool:
    """A memo key holding what one policy made of the message: a copy, or a mask."""
    return key in _COPIES or (key.__class__ is tuple and key[0] is Slot.MASK)


OMITTED = "omitted"
"""The role of a message the agent's own memory leaves out of the request although its
history holds it (OpenHands drops a tool call whose result was masked, and its other
results): kept in place, empty, so indices line up with the history; 0 tokens."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message as the policy sees it.

    ``_raw`` keeps the dict it came from, not a copy (for lossless ``to_dict``); ``_memo``
    and the slots after it cache what is computed from the message alone (its token
    counts, its cleared copy, its terms), which is safe because a message never changes.
    """

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    tool_name: str = ""
    name: str = ""
    usage: Usage | None = field(default=None, compare=False, repr=False)
    """What the model call that produced this (assistant) message cost, if recorded."""
    _raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    meta: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """What the reader knew about this message that its text does not say and a
    reference policy reads: SWE-agent's ``message_type``, ``is_demo``, ``tags`` and the
    line and image counts of its parts; OpenHands' event positions in the agent's view."""
    _shape: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    """Instead of ``_raw`` when the source dict says nothing its fields do not: its keys,
    in order (``ToolCall._shape``; a log of tiny eino messages kept every record)."""
    _memo: dict[Any, Any] = field(default=NO_MEMO, init=False, compare=False, repr=False)
    """Shared and empty until the message memoises something (``memo_put``)."""
    # the caches every message gets, each in a slot of its own rather than in ``_memo``:
    # a dict with entries is 224 bytes, a message of a tiny log about 100 (a 200,000-
    # message log held 90 MB of memo dicts); any other counter's count goes in ``_memo``
    _ck: Any = field(default=None, init=False, compare=False, repr=False)
    """The ``CountKey`` of the first named counter that counted this message."""
    _cn: Any = field(default=None, init=False, compare=False, repr=False)
    """Its count."""
    _lc: int | None = field(default=None, init=False, compare=False, repr=False)
    """LangChain's approximate count."""
    _red: int | None = field(default=None, init=False, compare=False, repr=False)
    """eino reduction's count."""
    _terms: frozenset[str] | None = field(default=None, init=False, compare=False, repr=False)
    """The losses' terms of its text."""

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        # a parser makes a new string for every "assistant" and every tool's name: one
        # copy each (a log of 200,000 messages held 200,000 role strings); the message's
        # own copy of its other short strings (``_own``)
        setattr_ = object.__setattr__
        setattr_(self, "role", _own_name(self.role))
        setattr_(self, "tool_name", _own_name(self.tool_name))
        setattr_(self, "content", _own(self.content))
        setattr_(self, "tool_call_id", _own(self.tool_call_id))
        setattr_(self, "name", _own(self.name))

    @property
    def is_tool_result(self) -> bool:
        return self.role == "tool"

    def with_usage(self, usage: Usage | None) -> Message:
        """A copy with what its model call cost (readers attach it once the call is read):
        every other field as it is, the strings already the message's own."""
        new = self.with_content(self.content)
        object.__setattr__(new, "usage", usage)
        return new

    def with_content(self, content: str) -> Message:
        """A copy with other content: the only change the policy ever makes.

        Built field by field rather than through ``dataclasses.replace``: clearing makes
        tens of thousands of these on a long run, and this is several times faster."""
        new = object.__new__(Message)
        setattr_ = object.__setattr__
        setattr_(new, "role", self.role)
        setattr_(new, "content", content)
        setattr_(new, "tool_calls", self.tool_calls)
        setattr_(new, "tool_call_id", self.tool_call_id)
        setattr_(new, "tool_name", self.tool_name)
        setattr_(new, "name", self.name)
        setattr_(new, "usage", self.usage)
        setattr_(new, "_raw", self._raw)
        setattr_(new, "meta", self.meta)
        setattr_(new, "_shape", self._shape)
        setattr_(new, "_memo", NO_MEMO)
        for slot in _CACHE_SLOTS:
            setattr_(new, slot, None)
        return new

    def replaced(self, content: str) -> Message:
        """This message holding ``content`` instead (a placeholder, a mask): memoised, so
        clearing the same message again (a slider move, the next replay step, the next
        live call) returns the same copy with its token counts already known. One slot
        per message, for the last text used, so trying many placeholders stays bounded."""
        if content == self.content:
            return self
        hit = self._memo.get(Slot.CLEARED)
        if hit is not None and hit[0] == content:
            return hit[1]
        new = self.with_content(content)
        memo_put(self, Slot.CLEARED, (content, new))
        return new

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, path: str = "$") -> Message:
        """Read one message in eino's JSON shape; raises TranscriptError naming the field."""
        if not isinstance(d, Mapping):
            raise TranscriptError(f"expected a message object, got {json_type(d)}", where=path)
        role = d.get("role")
        if not isinstance(role, str):
            if "role" not in d:
                raise TranscriptError("missing field 'role'", where=path)
            raise TranscriptError(
                f"expected a string, got {json_type(role)}", where=f"{path}.role"
            )
        raw_calls = d.get("tool_calls") or ()
        if not isinstance(raw_calls, (list, tuple)):
            raise TranscriptError(
                f"expected a list, got {json_type(raw_calls)}", where=f"{path}.tool_calls"
            )
        calls = tuple(
            ToolCall.from_dict(c, path=f"{path}.tool_calls[{i}]") for i, c in enumerate(raw_calls)
        )
        raw = d if type(d) is dict else dict(d)  # the reader's own dict, never changed: not copied
        shape = _message_shape(raw, calls)
        return cls(
            role=role,
            content=_str_field(d, "content", path),
            tool_calls=calls,
            tool_call_id=_str_field(d, "tool_call_id", path),
            tool_name=_str_field(d, "tool_name", path),
            name=_str_field(d, "name", path),
            _raw=None if shape is not None else raw,
            _shape=shape,
        )

    def to_dict(self, *, shared: bool = False) -> dict[str, Any]:
        """eino's message JSON; unknown fields of the source dict come back unchanged. A
        copy the caller may change; with ``shared``, nested source values are shared
        (``ToolCall.to_dict``)."""
        if self._raw is None:
            return self._from_shape(self._keys(), shared)
        base = Message.from_dict(self._raw)
        # the caller may change it; the source never does
        out = dict(self._raw) if shared else copy.deepcopy(dict(self._raw))
        for key in ("role", "content", "tool_call_id", "tool_name", "name"):
            if getattr(self, key) != getattr(base, key):
                out[key] = getattr(self, key)
        if self.tool_calls != base.tool_calls:
            out["tool_calls"] = [c.to_dict(shared=shared) for c in self.tool_calls]
        return out

    def _keys(self) -> tuple[str, ...]:
        """The keys ``to_dict`` writes for a message that keeps no source dict: its
        source's (``_shape``), or role and content and each other field it sets."""
        if self._shape is not None:
            return self._shape
        return ("role", "content", *(k for k in _MESSAGE_DEFAULT_KEYS if getattr(self, k)))

    def _from_shape(self, shape: tuple[str, ...], shared: bool) -> dict[str, Any]:
        """What the branch over ``_raw`` makes of the dict ``shape`` stands for: its keys in
        order with this message's values, then any field its source lacked and this one
        sets."""
        out: dict[str, Any] = {}
        for key in shape:
            out[key] = [c.to_dict(shared=shared) for c in self.tool_calls] if key == "tool_calls" \
                else getattr(self, key)
        for key in _MESSAGE_TEXT_KEYS:
            if key not in out and getattr(self, key):
                out[key] = getattr(self, key)
        if "tool_calls" not in out and self.tool_calls:
            out["tool_calls"] = [c.to_dict(shared=shared) for c in self.tool_calls]
        return out


class ShapedRaw(Mapping[str, Any]):
    """``source.to_dict()`` with more keys (eino reduction's ``extra`` flag), for a
    message that keeps no source dict, as a copy's ``_raw``: each value made when read.
    Flagging every message of a long run copied every dict and its calls' (40 MB of a
    200,000-message run)."""

    __slots__ = ("_source", "_keys", "_more")

    def __init__(self, source: Message, more: Mapping[str, Any]) -> None:
        assert source._raw is None
        self._source, self._more = source, more
        self._keys = tuple(k for k in source._keys() if k not in more)

    def __getitem__(self, key: str) -> Any:
        if key in self._more:
            return self._more[key]
        if key in self._keys:
            m = self._source
            return [c.to_dict() for c in m.tool_calls] if key == "tool_calls" else getattr(m, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from self._keys
        yield from self._more

    def __len__(self) -> int:
        return len(self._keys) + len(self._more)


_MESSAGE_DEFAULT_KEYS = ("tool_calls", "tool_call_id", "tool_name", "name")
_MESSAGE_TEXT_KEYS = ("role", "content", "tool_call_id", "tool_name", "name")
_MESSAGE_KEYS = frozenset(_MESSAGE_TEXT_KEYS)
_MESSAGE_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}


def _message_shape(d: dict[str, Any], calls: tuple[ToolCall, ...]) -> tuple[str, ...] | None:
    """The keys of an eino message dict holding only strings and a list of calls each
    kept by its shape (``call_shape``), one shared tuple per shape; else None."""
    for key, value in d.items():
        if key == "tool_calls":
            if value.__class__ is not list or any(c._shape is None for c in calls):
                return None
        elif key not in _MESSAGE_KEYS or value.__class__ is not str:
            return None
    shape = tuple(d)
    return _MESSAGE_SHAPES.setdefault(shape, shape)


def reply_time(m: Message) -> float | None:
    """The time (seconds since the epoch) the log records for the call that produced
    ``m`` (its usage's timestamp), or None when it records none it can be read from."""
    stamp = m.usage.timestamp if m.usage is not None else ""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Transcript:
    """One conversation read from a file, with what is needed to write it back.

    ``format`` names the message format; ``container`` says what held it when the file
    holds several conversations. ``origins`` gives, per message, where it sits in the file.
    """

    format: str
    messages: tuple[Message, ...]
    id: str = "0"
    source: str = ""
    title: str = ""
    container: str = ""
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    origins: Sequence[str] = field(default=(), compare=False, repr=False)
    marks: tuple[tuple[int, str], ...] = field(default=(), compare=False, repr=False)
    """Events the log recorded between messages, as (index of the first message after
    it, label): Claude Code's compactions. Drawn on the charts."""
    _binding: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        """A transcript reads as its messages, so ``apply(load(...), config)`` works."""
        return iter(self.messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        return self.messages[index]

    @property
    def size(self) -> int:
        """UTF-8 bytes of every content and tool-call argument: what the eino counter
        sees (divide by 4 for its tokens). A size hint for picking conversations."""
        total = 0
        for m in self.messages:
            total += utf8_len(m.content)
            for c in m.tool_calls:
                total += utf8_len(c.arguments)
        return total

    @property
    def label(self) -> str:
        """A short human name: the title if any, else the id."""
        return self.title or self.id

    def with_messages(self, messages: Sequence[Message]) -> Transcript:
        return replace(self, messages=tuple(messages))


def main_conversation(transcripts: Sequence[Transcript]) -> Transcript:
    """The conversation a file is opened on: the one with the most tool results (an API
    cassette's first request often holds one message and nothing to clear), the first
    of those that tie."""
    return max(transcripts, key=lambda t: sum(1 for m in t.messages if m.role == "tool"))
