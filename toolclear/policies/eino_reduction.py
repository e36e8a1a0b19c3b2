"""eino's current reduction middleware (``adk/middlewares/reduction``), faithfully.

Two phases. **Truncation** when a tool returns: a text result longer than
``max_length_for_trunc`` bytes is saved whole to ``{root_dir}/trunc/{call id}`` and
the model sees a ``<persisted-output>`` notice with its head and tail (``truncate``).
**Clear** before each model call: once the whole conversation plus the tool schemas
counts ``max_tokens_for_clear`` tokens, the results of older tool-call rounds become a
placeholder, or, with a backend, a notice naming the file each was saved to
(``clear_step``). The processed flag travels in each assistant message's ``extra``
exactly as eino writes it, so the output of one call is the state of the next.

Every rule, number and string follows eino's own Go code at commit ``ca0441ac``; the
conformance vectors recorded from it (``tests/data/eino_reduction_vectors.jsonl.gz``)
pass. Where eino misbehaves (a re-clear after a plain assistant reply overwrites a
saved file with the placeholder), this does the same and says so in ``overwritten``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from ..errors import ConfigError
from ..model import Message, MessageStatus, Slot, utf8_len
from . import _checks as checks
from ._export import go_list, go_str
from ._spec import Knob, Option, PolicySpec, Preset
from .offload import StorageBackend

__all__ = ["SPEC", "eino_reduction_go", 
    "ReductionEngine",

    "PROCESSED_FLAG",
    "ClearStep",
    "EinoReductionConfig",
    "Truncated",
    "clear_step",
    "go_path_join",
    "reduction_tokens",
    "truncate",
]

PROCESSED_FLAG = "_reduction_mw_processed"

_TRUNC_NOTICE = {
    "en": ("<persisted-output>\nOutput too large ({original_size}). Full output saved to: {file_path}\n"
           "Preview (first {preview_size}):\n{preview_first}\n\nPreview (last {preview_size}):\n"
           "{preview_last}\n\nUse {read_tool_name} to view\n</persisted-output>"),
    "zh": ("<persisted-output>\n输出结果过大 ({original_size}). 完整输出保存到: {file_path}\n"
           "预览 (前 {preview_size}):\n{preview_first}\n\n预览 (后 {preview_size}):\n"
           "{preview_last}\n\n使用 {read_tool_name} 进行查看\n</persisted-output>"),
}
_STREAM_NOTICE = {
    "en": "Output truncated after {max} bytes were streamed. Full output saved to: {file_path}. "
          "Use {read_tool_name} to view.",
    "zh": "输出结果在流式传输 {max} 字节后被截断。完整输出保存到: {file_path}。使用 {read_tool_name} 进行查看。",
}
_CLEAR_WITH_FILE = {
    "en": "<persisted-output>Tool result saved to: {file_path}\nUse {read_tool_name} to view</persisted-output>",
    "zh": "<persisted-output>工具结果已保存至: {file_path}\n使用 {read_tool_name} 进行查看</persisted-output>",
}
_CLEARED = {"en": "[Old tool result content cleared]", "zh": "[工具输出结果已清理]"}

ToolSchema = Mapping[str, Any]
"""A tool as the counter sees it: ``{"name", "desc", "params"?}`` (params never count)."""
ReductionCounter = Callable[[Sequence[Message], Sequence[ToolSchema]], int]


@dataclass(frozen=True)
class EinoReductionConfig:
    """eino's ``reduction.Config`` with its names in snake_case and its zero values:
    ``0`` (or ``""``) means eino's default, exactly as ``reduction.New`` reads it.

    ``tool_config`` maps a tool name to ``{"skip_truncation": bool, "skip_clear": bool}``.
    ``token_counter`` is ``"default"`` (eino's counter, see ``reduction_tokens``),
    ``"eino_test_bytes"`` (the counter of eino's own unit test), or a callable
    ``(messages, tools) -> int``.
    """

    max_tokens_for_clear: int = 160_000
    clear_retention_suffix_limit: int = 1
    clear_at_least_tokens: int = 0
    clear_exclude_tools: tuple[str, ...] = ()
    max_length_for_trunc: int = 50_000
    trunc_exclude_tools: tuple[str, ...] = ()
    skip_truncation: bool = False
    skip_clear: bool = False
    read_file_tool_name: str = "read_file"
    root_dir: str = "/tmp"
    language: Literal["en", "zh"] = "en"
    token_counter: str | ReductionCounter = "default"
    tool_config: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("max_tokens_for_clear", "clear_retention_suffix_limit", "clear_at_least_tokens",
                     "max_length_for_trunc"):
            # eino reads 0 (and for some fields a negative number) in its own ways, recorded in
            # the vectors (REDUCTION.md): any whole number is taken, as eino takes it
            checks.whole(name, getattr(self, name), minimum=-(2**63))
        for name in ("clear_exclude_tools", "trunc_exclude_tools"):
            value = getattr(self, name)
            if value is None:
                value = ()
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{name}: expected a list of tool names, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in ("skip_truncation", "skip_clear"):
            checks.flag(name, getattr(self, name))
        if self.language not in _CLEARED:
            raise ConfigError(f"language: expected 'en' or 'zh', got {self.language!r}")
        tc = self.tool_config or {}
        if not isinstance(tc, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) and set(v) <= {"skip_truncation", "skip_clear"}
            and all(isinstance(b, bool) for b in v.values()) for k, v in tc.items()
        ):
            raise ConfigError("tool_config: expected {tool name: {'skip_truncation': bool, 'skip_clear': bool}}")
        object.__setattr__(self, "tool_config", {k: dict(v) for k, v in tc.items()})
        if not callable(self.token_counter) and self.token_counter not in ("default", "eino_test_bytes"):
            raise ConfigError(f"token_counter: expected 'default', 'eino_test_bytes' or a callable, "
                              f"got {self.token_counter!r}")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EinoReductionConfig:
        """From eino's fields as the vectors (and a JSON settings file) spell them."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: (v if v is not None else ({} if k == "tool_config" else ()))
                      for k, v in d.items() if k in known})

    # -- what eino actually uses (reduction.go:260-292)
    @property
    def effective_max_tokens_for_clear(self) -> int:
        return self.max_tokens_for_clear or 160_000

    @property
    def effective_retention(self) -> int:
        return self.clear_retention_suffix_limit or 1

    @property
    def effective_max_length_for_trunc(self) -> int:
        return self.max_length_for_trunc or 50_000

    @property
    def effective_root_dir(self) -> str:
        return self.root_dir or "/tmp"

    @property
    def effective_read_tool(self) -> str:
        return self.read_file_tool_name or "read_file"

    @property
    def placeholder(self) -> str:
        """What a cleared result holds without a backend."""
        return _CLEARED[self.language]

    def effective(self) -> dict[str, Any]:
        """The values eino uses, as its ``effective_config`` names them."""
        return {
            "clear_at_least_tokens": self.clear_at_least_tokens,
            "clear_retention_suffix_limit": self.effective_retention,
            "max_length_for_trunc": self.effective_max_length_for_trunc,
            "max_tokens_for_clear": self.effective_max_tokens_for_clear,
            "read_file_tool_name": self.effective_read_tool,
            "root_dir": self.effective_root_dir,
        }

    def clear_disabled(self, tool: str) -> bool:
        """A tool's clear handler is off: its own ``skip_clear``, or the global one
        (an entry with ``skip_clear: false`` does not turn it back on)."""
        return bool(self.tool_config.get(tool, {}).get("skip_clear")) or self.skip_clear

    def trunc_disabled(self, tool: str) -> bool:
        return (self.skip_truncation or bool(self.tool_config.get(tool, {}).get("skip_truncation"))
                or tool in self.trunc_exclude_tools)


# ------------------------------------------------------------------ counting


def _raw(m: Message, key: str) -> Any:
    return m._raw.get(key) if m._raw is not None else None


def _parts(m: Message, key: str) -> list[Any]:
    value = _raw(m, key)
    return value if isinstance(value, list) else []


def _default_message_tokens(m: Message) -> int:
    """floor(bytes / 4) of role, reasoning, content, the calls of an assistant message
    and every text part (reduction.go:1620-1662), per message."""
    memo = m._memo.get(Slot.REDUCTION)
    if memo is not None:
        return memo
    reasoning = _raw(m, "reasoning_content")
    pieces = [m.role, "\n", reasoning if isinstance(reasoning, str) else "", "\n", m.content, "\n"]
    if m.role == "assistant":
        for c in m.tool_calls:
            pieces += [c.name, "\n", c.arguments]
    for key in ("user_input_multi_content", "assistant_output_multi_content"):
        for p in _parts(m, key):
            if isinstance(p, Mapping) and p.get("type") == "text":
                text = p.get("text")
                pieces += [text if isinstance(text, str) else "", "\n"]
    n = utf8_len("".join(pieces)) // 4
    m._memo[Slot.REDUCTION] = n
    return n


def _sonic_string(s: str) -> str:
    """A JSON string as sonic writes it: short escapes for \\n \\r \\t, \\u00xx for the other
    control characters (\\b and \\f too), nothing else escaped."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _tool_tokens(tool: ToolSchema) -> int:
    name, desc = tool.get("name") or "", tool.get("desc") or ""
    text = '{"Name":' + _sonic_string(str(name)) + ',"Desc":' + _sonic_string(str(desc)) + ',"Extra":null}'
    return utf8_len(text) // 4


def _test_bytes(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
    """The counter of eino's ClearAtLeastTokens unit tests: content bytes plus the name
    and arguments bytes of every tool call."""
    return sum(utf8_len(m.content) + sum(utf8_len(c.name) + utf8_len(c.arguments) for c in m.tool_calls)
               for m in messages)


def reduction_tokens(messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
    """eino's default reduction counter: each message floored on its own, plus each tool
    schema's ``{"Name","Desc","Extra":null}`` JSON (parameters never count)."""
    return sum(_default_message_tokens(m) for m in messages) + sum(_tool_tokens(t) for t in tools)


def _counter(config: EinoReductionConfig) -> ReductionCounter:
    if callable(config.token_counter):
        return config.token_counter
    return _test_bytes if config.token_counter == "eino_test_bytes" else reduction_tokens


# ------------------------------------------------------------------ paths and JSON


def go_path_join(*parts: str) -> str:
    """Go's ``filepath.Join`` on Linux: join the non-empty parts, clean lexically."""
    joined = "/".join(p for p in parts if p)
    if not joined:
        return ""
    rooted = joined.startswith("/")
    out: list[str] = []
    for seg in joined.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not rooted:
                out.append("..")
            continue
        out.append(seg)
    path = "/".join(out)
    if rooted:
        return "/" + path
    return path or "."


_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _go_indent_json(value: Any) -> str:
    """Go's ``json.MarshalIndent(v, "", "\\t")``: HTML characters and U+2028/9 escaped."""
    text = json.dumps(value, ensure_ascii=False, indent="\t", separators=(",", ": "))
    for ch, esc in _GO_ESCAPES.items():
        if ch in text:
            text = text.replace(ch, esc)
    return text


_MEDIA = {"image_url": "image", "audio_url": "audio", "video_url": "video", "file_url": "file"}
_MEDIA_KEYS = ("url", "base64data", "mime_type", "extra")


class PartError(ValueError):
    """eino's ``unknown msg part type``: a result part it cannot convert."""


def _media(obj: Any) -> dict[str, Any]:
    obj = obj if isinstance(obj, Mapping) else {}
    return {k: obj[k] for k in _MEDIA_KEYS if obj.get(k)}


def to_output_part(p: Mapping[str, Any]) -> dict[str, Any]:
    """An input part as eino's tool-output part (part-level extra and image detail go)."""
    kind = p.get("type")
    if kind == "text":
        out: dict[str, Any] = {"type": "text"}
        if p.get("text"):
            out["text"] = p["text"]
        return out
    if kind in _MEDIA:
        name = _MEDIA[kind]
        out = {"type": name}
        media = _media(p.get(name))
        if media:
            out[name] = media
        return out
    raise PartError(f"unknown msg part type: {kind}")


def from_output_part(p: Mapping[str, Any]) -> dict[str, Any]:
    kind = p["type"]
    if kind == "text":
        return {"type": "text", "text": p.get("text", "")}
    back = {v: k for k, v in _MEDIA.items()}[kind]
    out: dict[str, Any] = {"type": back}
    if p.get(kind):
        out[kind] = dict(p[kind])
    return out


_PART_KEYS = ("type", "text", "image", "audio", "video", "file", "tool_search_result", "extra")


def _go_part(p: Mapping[str, Any]) -> dict[str, Any]:
    """A tool-output part as Go marshals it: its keys in struct order, empty ones left out."""
    out: dict[str, Any] = {}
    for key in _PART_KEYS:
        value = p.get(key)
        if key in ("image", "audio", "video", "file") and isinstance(value, Mapping):
            value = _media(value)
        if key == "type" or value not in (None, "", [], {}):
            out[key] = value
    return out


def _offload_content(parts: Sequence[Mapping[str, Any]]) -> str:
    """One text part: its text; anything else: the indented JSON of the parts (C14)."""
    if len(parts) == 1 and parts[0].get("type") == "text":
        return str(parts[0].get("text") or "")
    return _go_indent_json([_go_part(p) for p in parts])


# ------------------------------------------------------------------ clear


@dataclass(frozen=True)
class ClearStep:
    """What one before-model call of the clear phase did."""

    messages: tuple[Message, ...]
    applied: bool
    """The phase ran to the end (it may still have changed no content, e.g. skip_clear)."""
    tokens_before: int
    tokens_after: int
    changed: tuple[int, ...]
    """Indices of tool results whose content was replaced (a re-clear counts too)."""
    files: dict[str, str]
    write_order: tuple[str, ...]
    overwritten: tuple[str, ...] = ()
    """Saved files this call overwrote with the placeholder (eino's re-clear, C5)."""
    error: str | None = None


def is_flagged(m: Message) -> bool:
    extra = _raw(m, "extra")
    return isinstance(extra, Mapping) and extra.get(PROCESSED_FLAG) is True


def _bounds(messages: Sequence[Message], retention: int) -> tuple[int, int]:
    n = len(messages)
    start = next((i for i, m in enumerate(messages) if m.role == "assistant" and not is_flagged(m)), n)
    return start, retention_end(messages, retention)


def retention_end(messages: Sequence[Message], retention: int) -> int:
    """The index of the retention-th assistant message with tool calls from the end
    (reduction.go:1012-1022): it and everything after it stay untouched."""
    r, end = retention, len(messages)
    while r > 0 and end > 0:
        m = messages[end - 1]
        if m.role == "assistant" and m.tool_calls:
            r -= 1
            if r == 0:
                end -= 1
                break
        end -= 1
    return end


def owner(messages: Sequence[Message], j: int) -> int:
    """The assistant message whose call a cleared result answers (the nearest before it)."""
    a = j - 1
    while a >= 0 and messages[a].role != "assistant":
        a -= 1
    return a


def clear_notice(config: EinoReductionConfig, path: str) -> str:
    return _CLEAR_WITH_FILE[config.language].format(file_path=path, read_tool_name=config.effective_read_tool)


def _find_result(messages: Slots | Sequence[Message], i: int, call_id: str) -> int | None:
    n = len(messages[i].tool_calls)
    for j in range(i + 1, min(i + n, len(messages) - 1) + 1):
        m = messages[j]
        if m.role != "tool":
            return None
        if m.tool_call_id == call_id:
            return j
    return None


def rebuilt(m: Message, **changes: Any) -> Message:
    d = m.to_dict()
    d.update(changes)
    new = Message.from_dict(d)
    object.__setattr__(new, "usage", m.usage)
    return new


def replace_result(m: Message, placeholder: str) -> tuple[Message, str]:
    """The result with the placeholder, and what is saved for it (reduction.go:1934-1950)."""
    parts = _parts(m, "user_input_multi_content")
    if parts:
        out_parts = [to_output_part(p if isinstance(p, Mapping) else {}) for p in parts]
        content = _offload_content(out_parts)
        new_parts = []
        for p in out_parts:
            if p["type"] == "text":
                p = {"type": "text", "text": placeholder}
            new_parts.append(from_output_part(p))
        return rebuilt(m, user_input_multi_content=new_parts), content
    return (m.with_content(placeholder) if m.content != placeholder else m), m.content


def _flagged(m: Message) -> Message:
    """The message with eino's processed flag in its ``extra`` (other keys kept). Only
    the source dict changes, so the copy is made directly (a replay flags every round)."""
    if _raw(m, "extra") is not None and is_flagged(m):
        return m
    raw = dict(m._raw) if m._raw is not None else m.to_dict()
    extra = raw.get("extra")
    raw["extra"] = {**(extra if isinstance(extra, Mapping) else {}), PROCESSED_FLAG: True}
    new = m.with_content(m.content)
    object.__setattr__(new, "_raw", raw)
    return new


class Slots(Protocol):
    """A list of messages as ``_clear_range`` reads and writes it."""

    def __getitem__(self, i: int) -> Message: ...
    def __setitem__(self, i: int, m: Message) -> None: ...
    def __len__(self) -> int: ...


def clear_range(out: Slots, start: int, end: int, config: EinoReductionConfig, files_on: bool,
                 new_id: Callable[[], str], writes: list[tuple[str, str]], changed: list[int],
                 write_now: StorageBackend | None) -> None:
    """Steps 6-7 of the clear phase over ``out[start:end]``, in place (so an error leaves
    what was done before it, as eino does with the gate off)."""
    read_tool, lang = config.effective_read_tool, config.language
    for i in range(start, end):
        m = out[i]
        if m.role != "assistant" or not m.tool_calls:
            continue
        for call in m.tool_calls:
            j = _find_result(out, i, call.id)
            if j is None or call.name in config.clear_exclude_tools or config.clear_disabled(call.name):
                continue
            path = ""
            if files_on:
                path = go_path_join(config.effective_root_dir, "clear", call.id or new_id())
                placeholder = _CLEAR_WITH_FILE[lang].format(file_path=path, read_tool_name=read_tool)
            else:
                placeholder = _CLEARED[lang]
            out[j], content = replace_result(out[j], placeholder)
            changed.append(j)
            if files_on:
                writes.append((path, content))
                if write_now is not None:
                    write_now.write(path, content)
        out[i] = _flagged(m)


def clear_step(
    messages: Sequence[Message],
    config: EinoReductionConfig,
    *,
    backend: StorageBackend | None = None,
    has_backend: bool | None = None,
    tools: Sequence[ToolSchema] = (),
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> ClearStep:
    """One ``BeforeModelRewriteState`` of eino's reduction middleware (reduction.go:983-1141).

    With a backend (or ``has_backend``) each cleared result is saved to
    ``{root_dir}/clear/{call id}`` and replaced by a notice naming that file; without,
    by the placeholder. The input is never changed; the returned messages are the
    state the next call starts from."""
    msgs = tuple(messages)
    files_on = backend is not None if has_backend is None else has_backend
    counter = _counter(config)
    before = counter(msgs, tools)
    if before < config.effective_max_tokens_for_clear:
        return ClearStep(msgs, False, before, before, (), {}, ())
    start, end = _bounds(msgs, config.effective_retention)
    if start >= end:
        return ClearStep(msgs, False, before, before, (), {}, ())
    gate = config.clear_at_least_tokens > 0
    out = list(msgs)
    writes: list[tuple[str, str]] = []
    changed: list[int] = []
    try:
        clear_range(out, start, end, config, files_on, new_id, writes, changed,
                     None if gate else backend)
    except PartError as exc:
        if gate:
            out, writes, changed = list(msgs), [], []
        state = tuple(out)
        return ClearStep(state, False, before, counter(state, tools), tuple(changed), dict(writes),
                         tuple(p for p, _ in writes), (), str(exc))
    state = tuple(out)
    after = counter(state, tools)
    if gate:
        if before - after < config.clear_at_least_tokens:
            return ClearStep(msgs, False, before, before, (), {}, ())
        if backend is not None:
            for path, content in writes:
                backend.write(path, content)
    overwritten = tuple(p for j, (p, c) in zip(changed, writes) if c == msgs[j].content and _is_notice(c))
    return ClearStep(state, True, before, after, tuple(changed), dict(writes), tuple(p for p, _ in writes),
                     overwritten)


def _is_notice(text: str) -> bool:
    return text.startswith(("<persisted-output>工具结果已保存至: ", "<persisted-output>Tool result saved to: "))


# ------------------------------------------------------------------ truncation


@dataclass(frozen=True)
class Truncated:
    """What the model receives from one tool call, and what was saved."""

    result: Any
    """The string, the list of parts, or (streams) the list of chunks emitted."""
    truncated: bool
    path: str | None
    files: dict[str, str]
    write_order: tuple[str, ...]


def _cut_head(data: bytes, n: int) -> str:
    """The first n bytes, cut back to a character start."""
    if n <= 0:
        return ""
    n = min(n, len(data))
    while n > 0 and n < len(data) and (data[n] & 0xC0) == 0x80:
        n -= 1
    return data[:n].decode("utf-8", "surrogatepass")


def _cut_tail(data: bytes, n: int) -> str:
    if n <= 0:
        return ""
    start = max(0, len(data) - n)
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _text_len(parts: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    texts = [p for p in parts if p.get("type") == "text"]
    return sum(utf8_len(str(p.get("text") or "")) for p in texts), len(texts)


def _truncate_parts(parts: list[dict[str, Any]], path_for: Callable[[], str], config: EinoReductionConfig,
                    ) -> tuple[list[dict[str, Any]], str | None, str]:
    limit = config.effective_max_length_for_trunc
    total, count = _text_len(parts)
    if count == 0 or total <= limit:
        return parts, None, ""
    per = _go_div(limit, count)
    preview = _go_div(per, 2)
    content = _offload_content(parts)
    path = path_for()
    out = []
    for p in parts:
        text = str(p.get("text") or "") if p.get("type") == "text" else None
        if text is not None and utf8_len(text) >= per:
            data = text.encode("utf-8", "surrogatepass")
            notice = _TRUNC_NOTICE[config.language].format(
                original_size=len(data), file_path=path, preview_size=preview,
                preview_first=_cut_head(data, preview), preview_last=_cut_tail(data, preview),
                read_tool_name=config.effective_read_tool)
            p = {**p, "text": notice}  # the part keeps its own extra
        out.append(p)
    return out, path, content


def _stream_notice(config: EinoReductionConfig, path: str) -> str:
    notify = _STREAM_NOTICE[config.language].format(
        max=config.effective_max_length_for_trunc, file_path=path, read_tool_name=config.effective_read_tool)
    return f"<persisted-output>\n{notify} \n</persisted-output>"


def _truncate_stream(chunks: Iterable[str], path_for: Callable[[], str], config: EinoReductionConfig,
                     ) -> tuple[list[str], str | None, str]:
    limit = config.effective_max_length_for_trunc
    out: list[str] = []
    stored: list[str] = []
    cur, prefix, crossed = 0, "", False
    for chunk in chunks:
        if chunk == "":
            continue
        stored.append(chunk)
        if crossed:
            continue
        size = utf8_len(chunk)
        if cur + size < limit:
            out.append(chunk)
            cur += size
            continue
        crossed = True
        prefix = _cut_head(chunk.encode("utf-8", "surrogatepass"), limit - cur)
    if not crossed:
        return out, None, ""
    path = path_for()
    out.append(prefix + _stream_notice(config, path))
    return out, path, "".join(stored)


def _truncate_part_stream(chunks: Iterable[Sequence[Mapping[str, Any]]], path_for: Callable[[], str],
                          config: EinoReductionConfig) -> tuple[list[list[dict[str, Any]]], str | None, str]:
    limit = config.effective_max_length_for_trunc
    out: list[list[dict[str, Any]]] = []
    stored: list[dict[str, Any]] = []
    cur, crossed = 0, False
    prefix: list[dict[str, Any]] = []
    for raw in chunks:
        chunk = [dict(p) for p in raw]
        stored.extend(chunk)
        if crossed:
            continue
        size, _ = _text_len(chunk)
        if cur + size < limit:
            out.append(chunk)
            cur += size
            continue
        crossed = True
        budget = limit - cur
        if budget > 0:
            for p in chunk:
                if p.get("type") != "text":
                    prefix.append(p)
                    continue
                if budget <= 0:
                    break
                data = str(p.get("text") or "").encode("utf-8", "surrogatepass")
                if len(data) <= budget:
                    prefix.append(p)
                    budget -= len(data)
                    continue
                cut = _cut_head(data, budget)
                if cut:
                    prefix.append({**p, "text": cut})
                break
    if not crossed:
        return out, None, ""
    path = path_for()
    out.append(prefix + [{"type": "text", "text": _stream_notice(config, path)}])
    return out, path, _offload_content(stored)


def truncate(
    result: Any,
    tool_call_id: str,
    tool_name: str,
    config: EinoReductionConfig | None = None,
    backend: StorageBackend | None = None,
    *,
    mode: Literal["invokable", "enhanced", "stream", "enhanced_stream"] | None = None,
    has_backend: bool | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> Truncated:
    """eino's truncation of one tool result as the tool returns (reduction.go:427-938).

    ``result`` is a string (``invokable``), a list of parts (``enhanced``), or, for
    streams, an iterable of string chunks (``stream``) or of lists of parts
    (``enhanced_stream``); ``mode`` says which when the shape alone cannot. Like
    ``reduction.New``, refuses to run without a backend unless truncation is skipped.
    """
    config = config or EinoReductionConfig()
    files_on = backend is not None if has_backend is None else has_backend
    if not config.skip_truncation and not files_on:
        raise ConfigError("backend must be set when not skipping truncation")
    if mode is None:
        if isinstance(result, str):
            mode = "invokable"
        else:
            result = list(result)
            if result and all(isinstance(c, str) for c in result):
                mode = "stream"
            elif result and all(isinstance(c, (list, tuple)) for c in result):
                mode = "enhanced_stream"
            else:
                mode = "enhanced"
    if config.trunc_disabled(tool_name):
        if mode in ("stream", "enhanced_stream"):
            return Truncated(list(result), False, None, {}, ())
        return Truncated(result, False, None, {}, ())

    def path_for() -> str:
        return go_path_join(config.effective_root_dir, "trunc", tool_call_id or new_id())

    new: Any
    if mode == "invokable":
        parts, path, content = _truncate_parts([{"type": "text", "text": result}], path_for, config)
        new = parts[0]["text"]
    elif mode == "enhanced":
        new, path, content = _truncate_parts([dict(p) for p in result], path_for, config)
    elif mode == "stream":
        new, path, content = _truncate_stream(result, path_for, config)
    else:
        new, path, content = _truncate_part_stream(result, path_for, config)
    if path is None:
        return Truncated(new, False, None, {}, ())
    if backend is not None:
        backend.write(path, content)
    return Truncated(new, True, path, {path: content}, (path,))


# ------------------------------------------------------------------ the replay
# eino's reduction middleware over a whole run, each round worked once.
# 
# Equal to calling ``reduction.clear_step`` before every model call with the state
# carried (the tests check it call by call, files included), without redoing the work
# eino redoes: see ``ReductionEngine._fast_step``.


class ReductionEngine:
    """eino's reduction middleware as an agent runs it: each tool result truncated as it
    arrives, the clear phase before each call, its output the next call's state."""

    def __init__(self, messages: tuple[Message, ...], config: EinoReductionConfig,
                 backend: StorageBackend | None, tools: Sequence[ToolSchema], has_backend: bool,
                 arrivals: bool = True) -> None:
        self.msgs, self.config, self.backend, self.tools = messages, config, backend, tuple(tools)
        self.arrivals = arrivals  # truncate results as they arrive (a replay; not one before-model step)
        self.has_backend = has_backend
        self.state: list[Message] = []
        self.files: dict[str, str] = {}
        self.overwritten: list[str] = []
        self.truncated: set[int] = set()
        self.cleared: set[int] = set()
        # eino's default counter is a sum over messages (and tools): kept running, so calls
        # below the trigger cost nothing
        self.total: int | None = reduction_tokens((), self.tools) if config.token_counter == "default" else None
        self._overwritten_set: set[str] = set()
        self.sp = 0  # eino's start: the first assistant message without the processed flag
        self.done = 0  # rounds before this index were cleared by an earlier applied call
        self.log: list[tuple[int, int, str, bool]] = []  # (result, its assistant, file, empty id) as cleared
        self.log_from = 0  # first log entry at or after the start
        self.ow = 0  # log entries before this one had their file rewritten already
        self.empties: list[int] = []  # log positions of results whose call id is empty
        # (from, up to, changes, writes, changed) of the rounds a failed gate left pending
        self._pending: tuple[int, int, dict[int, Message], list[tuple[str, str]], list[int]] | None = None

    def finish(self, result: Any) -> Any:
        """The replay's result as eino leaves it (its state, its files)."""
        return _finish(self, result)

    def _arrive(self, m: Message, i: int) -> Message:
        """The result as the model receives it: truncated by eino's tool wrapper (a
        multi-part result through the enhanced wrapper, as the parts the tool returned)."""
        if m.role != "tool" or self.config.skip_truncation or not self.arrivals:
            return m
        parts = m._raw.get("user_input_multi_content") if m._raw is not None else None
        try:
            if isinstance(parts, list) and parts:
                out = [to_output_part(p if isinstance(p, dict) else {}) for p in parts]
                done = truncate(out, m.tool_call_id, m.tool_name, self.config, self.backend,
                                mode="enhanced", has_backend=self.has_backend)
                new = rebuilt(m, user_input_multi_content=[from_output_part(p) for p in done.result]) \
                    if done.truncated else m
            else:
                done = truncate(m.content, m.tool_call_id, m.tool_name, self.config, self.backend,
                                mode="invokable", has_backend=self.has_backend)
                new = m.with_content(done.result) if done.truncated else m
        except PartError as exc:
            raise ConfigError(f"eino's reduction stopped at message #{i}: {exc}") from None
        if not done.truncated:
            return m
        self.files.update(done.files)
        self.truncated.add(i)
        return new

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        for i in range(len(self.state), length):
            m = self._arrive(self.msgs[i], i)
            self.state.append(m)
            if self.total is not None:
                self.total += reduction_tokens((m,))
            if m is not self.msgs[i]:
                delta[i] = m
        if self.total is None:
            return self._step(length, delta)
        if self.total < self.config.effective_max_tokens_for_clear:
            return delta  # below the trigger: the clear phase would stop at its first step
        return self._fast_step(delta)

    def _step(self, length: int, delta: dict[int, Message | None]) -> dict[int, Message | None]:
        """eino's clear phase as ``clear_step`` runs it (any counter): O(n) per call."""
        step = clear_step(self.state, self.config, backend=self.backend, has_backend=self.has_backend,
                          tools=self.tools)
        if step.error:
            raise ConfigError(f"eino's reduction stopped at message #{length}: {step.error}")
        for j in step.changed:
            delta[j] = step.messages[j]
            self.cleared.add(j)
        self.files.update(step.files)
        for path in step.overwritten:
            self._overwrote(path)
        self.state = list(step.messages)
        return delta

    def _overwrote(self, path: str) -> None:
        if path not in self._overwritten_set:
            self._overwritten_set.add(path)
            self.overwritten.append(path)

    def _fast_step(self, delta: dict[int, Message | None]) -> dict[int, Message | None]:
        """The same clear phase, done once per message over the run.

        eino restarts at the first unflagged assistant message, which after a plain
        reply stays put, so each call clears again rounds an earlier call cleared: their
        content stays the placeholder and their files are rewritten with it (recorded
        the first time, when the original is lost), and only rounds new since the last
        applied call need work. Calls with empty ids get a fresh UUID each time, as in
        eino, so their placeholder (and file) changes at every such call."""
        cfg, st = self.config, self.state
        while self.sp < len(st) and not (st[self.sp].role == "assistant" and not is_flagged(st[self.sp])):
            self.sp += 1
        start, end = self.sp, retention_end(st, cfg.effective_retention)
        if start >= end:
            return delta
        overlay = _Overlay(st)
        writes: list[tuple[str, str]] = []
        ow, rewrites, again = self._again(start, min(self.done, end), overlay, writes)
        changed: list[int] = [self.log[k][0] for k, _ in again]
        first_new, new_writes = len(changed), len(writes)
        # the rounds since the last applied call: worked out again only past where the
        # previous call (whose gate failed) got to, as they have not changed since
        new_from = fresh = max(start, self.done)
        pend = self._pending
        if pend is not None and pend[0] == new_from and pend[1] <= end:
            overlay.changes.update(pend[2])
            writes += pend[3]
            changed += pend[4]
            new_from = pend[1]
        try:
            clear_range(overlay, new_from, end, cfg, self.has_backend, _new_uuid, writes, changed, None)
        except PartError as exc:
            raise ConfigError(f"eino's reduction stopped at message #{len(st)}: {exc}") from None
        # a result can be found twice (duplicate ids: the first match wins for both calls)
        saved = sum(reduction_tokens((st[j],)) - reduction_tokens((overlay[j],)) for j in set(changed))
        if 0 < cfg.clear_at_least_tokens and saved < cfg.clear_at_least_tokens:
            # eino's gate: nothing at all changes, no flags, no files
            mine = {i: m for i, m in overlay.changes.items() if i >= fresh}
            self._pending = (fresh, end, mine, writes[new_writes:], changed[first_new:])
            return delta
        self._pending = None
        for i, m in overlay.changes.items():
            st[i] = m
        self._log(again, changed[first_new:], [p for p, _ in writes[new_writes:]])
        for j in changed:
            delta[j] = st[j]
            self.cleared.add(j)
        for path, content in writes:
            self.files[path] = content
            if self.backend is not None:
                self.backend.write(path, content)
        for path in rewrites:
            self._overwrote(path)
        self.ow, self.done = ow, end
        assert self.total is not None
        self.total -= saved
        return delta

    def _again(self, start: int, limit: int, overlay: _Overlay, writes: list[tuple[str, str]],
               ) -> tuple[int, list[str], list[tuple[int, str]]]:
        """What clearing rounds in [start, limit) again does: rewrite each file with the
        placeholder (once: later rewrites write the same text), and give results of
        calls without an id a fresh UUID path."""
        log, st = self.log, self.state
        while self.log_from < len(log) and log[self.log_from][1] < start:
            self.log_from += 1
        rewrites: list[str] = []
        ow = max(self.ow, self.log_from)
        while ow < len(log) and log[ow][1] < limit:
            j, _, path, empty = log[ow]
            ow += 1
            if self.has_backend and not empty:
                writes.append((path, replace_result(st[j], st[j].content)[1]))
                rewrites.append(path)
        again: list[tuple[int, str]] = []  # (log position, new path)
        if self.has_backend:
            for k in self.empties:
                j, a, _, _ = log[k]
                if start <= a < limit:
                    path = go_path_join(self.config.effective_root_dir, "clear", _new_uuid())
                    overlay[j], content = replace_result(st[j], clear_notice(self.config, path))
                    writes.append((path, content))
                    again.append((k, path))
        return ow, rewrites, again

    def _log(self, again: list[tuple[int, str]], new: list[int], paths: list[str]) -> None:
        """Remember each newly cleared result (and its file) for later calls."""
        st, log = self.state, self.log
        for k, path in again:
            log[k] = (log[k][0], log[k][1], path, True)
        for n, j in enumerate(new):
            a = owner(st, j)
            empty = not next((c.id for c in st[a].tool_calls if c.id == st[j].tool_call_id), "")
            if empty:
                self.empties.append(len(log))
            log.append((j, a, paths[n] if self.has_backend else "", empty))

    def status(self, index: int, changed: bool) -> MessageStatus:
        if self.msgs[index].role != "tool":
            return MessageStatus.KEPT
        if index in self.cleared and changed:
            return MessageStatus.CLEARED
        if index in self.truncated:
            return MessageStatus.OFFLOADED
        return MessageStatus.KEPT


def _new_uuid() -> str:
    return str(uuid.uuid4())


class _Overlay:
    """A list of messages with changes kept aside until committed (eino's gate)."""

    def __init__(self, base: list[Message]) -> None:
        self.base, self.changes = base, {}  # type: ignore[var-annotated]

    def __getitem__(self, i: int) -> Message:
        return self.changes.get(i, self.base[i])

    def __setitem__(self, i: int, m: Message) -> None:
        self.changes[i] = m

    def __len__(self) -> int:
        return len(self.base)


def eino_reduction_go(config: EinoReductionConfig) -> str:
    """eino Go for the reduction middleware (``adk/middlewares/reduction``)."""
    lines = [
        'import "github.com/cloudwego/eino/adk/middlewares/reduction"',
        "",
        "// backend: where truncated and cleared results are saved (required unless SkipTruncation)",
        "mw, err := reduction.New(ctx, &reduction.Config{",
        "\tBackend:                   backend,",
        f"\tSkipTruncation:            {str(config.skip_truncation).lower()},",
        f"\tSkipClear:                 {str(config.skip_clear).lower()},",
        f"\tMaxLengthForTrunc:         {config.max_length_for_trunc},",
        f"\tTruncExcludeTools:         {go_list(config.trunc_exclude_tools)},",
        f"\tMaxTokensForClear:         {config.max_tokens_for_clear},",
        f"\tClearRetentionSuffixLimit: {config.clear_retention_suffix_limit},",
        f"\tClearAtLeastTokens:        {config.clear_at_least_tokens},",
        f"\tClearExcludeTools:         {go_list(config.clear_exclude_tools)},",
        f"\tReadFileToolName:          {go_str(config.read_file_tool_name)},",
        f"\tRootDir:                   {go_str(config.root_dir)},",
        "})",
    ]
    if config.language != "en":
        lines.insert(2, f'adk.SetLanguage({go_str(config.language)}) // notices in {config.language}')
    return "\n".join(lines) + "\n"


def _finish(engine: ReductionEngine, result: Any) -> Any:
    """eino's own state is the run's final history, with the files it saved; say so when
    it overwrote a saved file with the placeholder."""
    from dataclasses import replace

    notes: tuple[str, ...] = ()
    if engine.overwritten:
        notes = (f"eino overwrote {len(engine.overwritten)} saved file(s) with the placeholder: after a plain "
                 "assistant reply it clears already-cleared rounds again and saves what they hold now "
                 "(REDUCTION.md C5), so the original results are lost from storage, e.g. "
                 f"{engine.overwritten[0]}",)
    return replace(result, messages=tuple(engine.state), files=engine.files, notes=notes)


def _engine(messages: Sequence[Message], config: EinoReductionConfig, counter: Any, *,
            backend: StorageBackend | None = None, tools: Sequence[ToolSchema] = (),
            mode: str = "replay", **_: object) -> ReductionEngine:
    if backend is None and not config.skip_truncation:
        raise ConfigError("eino's reduction needs a backend unless skip_truncation is set "
                          "(eino: backend must be set when not skipping truncation)")
    # one before-model step is the clear phase alone; a replay also truncates each
    # result as its tool returns
    return ReductionEngine(tuple(messages), config, backend, tools, backend is not None, arrivals=mode == "replay")


def _framework(config: EinoReductionConfig) -> list[tuple[str, str, str]]:
    return [("eino Go: the reduction middleware", "go", eino_reduction_go(config))]


SPEC = PolicySpec(
    name="eino-reduction",
    config=EinoReductionConfig,
    engine=_engine,
    presets=(Preset(
        "eino-reduction", "eino reduction middleware",
        "eino's current middleware: truncates a large result as the tool returns (head and tail kept, the whole "
        "saved), and clears older rounds once the whole context reaches a limit; what it clears stays cleared.",
        EinoReductionConfig, export=_framework,
        knobs=(Knob("max_tokens_for_clear", "Clear once the context reaches (tokens)", "rd_tokens",
                    "max_tokens_for_clear: the whole conversation plus tool schemas, by eino's reduction counter; "
                    "equality triggers."),
               Knob("clear_retention_suffix_limit", "Rounds kept (retention)", "rounds",
                    "clear_retention_suffix_limit: the latest rounds (assistant messages with tool calls) left "
                    "alone.")),
    ),),
    aliases={"threshold": "max_tokens_for_clear", "keep": "clear_retention_suffix_limit",
             "exclude": "clear_exclude_tools", "at_least": "clear_at_least_tokens"},
    sticky=True,
    describe=lambda c: f"eino-reduction {c.effective_max_tokens_for_clear:,}/{c.effective_retention}",
    exports=("go",),
    needs_backend=lambda config: not config.skip_truncation,
    saves_files=True,
    options=(Option("skip_truncation", "Save files (a backend)", "saves_files",
                    "With a backend eino truncates large results and clears with a notice naming the saved file; "
                    "without one it must skip truncation and clears with a placeholder.", key="opt_backend"),
             Option("max_length_for_trunc", "Truncate results longer than (bytes)", "number", key="opt_trunc",
                    needs_files=True),
             Option("clear_at_least_tokens", "Clear only if it saves at least (tokens; 0: always)", "number",
                    key="opt_least"),
             Option("clear_exclude_tools", "Never clear these tools", "tools", key="opt_exclude")),
    why_nothing=lambda c, sizes: (
        f"the conversation counts {sizes['rd_tokens']:,} tokens by eino's reduction counter, under "
        f"{c.effective_max_tokens_for_clear:,}." if sizes["rd_tokens"] < c.effective_max_tokens_for_clear
        else "the rounds it would clear are inside the retained suffix."),
    sweep_base=lambda c: replace(c, skip_truncation=True),
)
"""eino's reduction middleware, as the registry lists it."""
