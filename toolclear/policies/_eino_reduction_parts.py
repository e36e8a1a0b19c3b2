"""eino's reduction middleware, its parts: how it counts (its default token estimate of
a message and of the tools), the Go path and JSON forms it writes, the pieces of its
truncation of a tool's result (``eino_reduction.truncate`` puts them together) and its
clear of older rounds (``clear_step``). Follows eino's Go code at commit ``ca0441ac``, as
the family module ``eino_reduction`` does; its conformance vectors cover both."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..model import Message, ShapedRaw, utf8_len
from .offload import StorageBackend

if TYPE_CHECKING:
    from .eino_reduction import EinoReductionConfig

PROCESSED_FLAG = "_reduction_mw_processed"
_CLEAR_WITH_FILE = {
    "en": "<persisted-output>Tool result saved to: {file_path}\nUse {read_tool_name} to view</persisted-output>",
    "zh": "<persisted-output>工具结果已保存至: {file_path}\n使用 {read_tool_name} 进行查看</persisted-output>",
}
_CLEARED = {"en": "[Old tool result content cleared]", "zh": "[工具输出结果已清理]"}

ToolSchema = Mapping[str, Any]
"""A tool as the counter sees it: ``{"name", "desc", "params"?}`` (params never count)."""
ReductionCounter = Callable[[Sequence[Message], Sequence[ToolSchema]], int]

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
def _raw(m: Message, key: str) -> Any:
    return m._raw.get(key) if m._raw is not None else None
def _parts(m: Message, key: str) -> list[Any]:
    value = _raw(m, key)
    return value if isinstance(value, list) else []
def _default_message_tokens(m: Message) -> int:
    """floor(bytes / 4) of role, reasoning, content, the calls of an assistant message
    and every text part (reduction.go:1620-1662), per message."""
    memo = m._red
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
    object.__setattr__(m, "_red", n)
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
def _counter(config: Any) -> ReductionCounter:
    if callable(config.token_counter):
        return config.token_counter
    return _test_bytes if config.token_counter == "eino_test_bytes" else reduction_tokens
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
def _truncate_parts(parts: list[dict[str, Any]], path_for: Callable[[], str], config: Any,
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
def _stream_notice(config: Any, path: str) -> str:
    notify = _STREAM_NOTICE[config.language].format(
        max=config.effective_max_length_for_trunc, file_path=path, read_tool_name=config.effective_read_tool)
    return f"<persisted-output>\n{notify} \n</persisted-output>"
def _truncate_stream(chunks: Iterable[str], path_for: Callable[[], str], config: Any,
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
                          config: Any) -> tuple[list[list[dict[str, Any]]], str | None, str]:
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


_FLAGGED: Mapping[str, Any] = {"extra": {PROCESSED_FLAG: True}}
"""What flagging adds to a message whose source held no ``extra``: one for all (only read)."""


def _flagged(m: Message) -> Message:
    """The message with eino's processed flag in its ``extra`` (other keys kept). Only
    the source dict changes, so the copy is made directly (a replay flags every round)."""
    if _raw(m, "extra") is not None and is_flagged(m):
        return m
    raw: Mapping[str, Any]
    if m._raw is None:  # no source dict, or one that said only what its fields say: no copy
        raw = ShapedRaw(m, _FLAGGED)
    else:
        # only read (to_dict copies again on the way out): the calls' source values shared,
        # not deep-copied for every flagged message of every round
        raw = dict(m._raw)
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
