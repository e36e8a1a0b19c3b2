"""Google's formats: Gemini API ``contents``, Gemini CLI sessions, Google ADK sessions.

All three carry Gemini ``parts``: ``text``, ``functionCall`` (``function_call`` in the
Python SDK's dumps) and ``functionResponse`` (``function_response``). A function
response answers the call with its ``id`` or, when the model gave none (older Gemini
models), the earliest unanswered call of the same name. Its text is the response's
``output`` / ``result`` / ``content`` string when that is all it holds (only that string
is rewritten, so the response stays an object, as the API requires); otherwise the
compact JSON of the whole response (the model is sent every field), which a new text
replaces as ``{"output": text}``.

* ``gemini-api``: a request body with ``contents`` (and ``systemInstruction``), a bare
  ``contents`` list, or the request bodies of an API cassette.
* ``gemini-cli``: ``~/.gemini/tmp/<project>/chats/session-*.json`` (an object with
  ``sessionId`` and ``messages``) and the newer JSON Lines form, where a message line
  with an id seen before replaces it, ``$rewindTo`` drops the messages from that id on
  (all of them for an unknown id, as Gemini CLI's loader does), ``$set`` lines update
  metadata and ``$set.messages`` replaces the list (one that brings a ``<state_snapshot>``
  summary is a chat compression: what it left out stays read, as sent before it). A ``gemini`` message's ``toolCalls`` hold each
  call's ``result`` (function-response parts) and ``resultDisplay`` (the UI's copy).
* ``google-adk``: a saved ADK session (``events``, each with ``author`` and a Gemini
  ``content``), as ``Session.model_dump`` (snake_case) or its JSON (camelCase).
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterator
from typing import Any

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript, Usage
from ._base import (
    Builder,
    FormatReader,
    Wrap,
    as_list,
    cassette_requests,
    compact_json,
    json_type,
    result_text_paths,
    str_or,
    str_or_none,
    token_count,
    where,
)
from ._doc import BadLine, Document, Path

__all__ = ["GeminiApiFormat", "GeminiCliFormat", "GoogleAdkFormat"]

_CALL_KEYS = ("functionCall", "function_call")
_RESPONSE_KEYS = ("functionResponse", "function_response")
_TEXT_KEYS = ("output", "result", "content", "error")
_SNAPSHOT = "<state_snapshot>"
"""What Gemini CLI's chat compression summary holds (its compression prompt asks for it)."""


def _get(d: dict[str, Any], *keys: str) -> tuple[str, Any] | None:
    """The first of ``keys`` (camelCase / snake_case spellings) present in ``d``."""
    for key in keys:
        if key in d:
            return key, d[key]
    return None


def _is_part_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(p, dict) for p in value)


def _is_content(value: Any) -> bool:
    return isinstance(value, dict) and _is_part_list(value.get("parts"))


def response_text(resp: Any, path: Path) -> tuple[str, list[Path]]:
    """(text, slot) of a function response's ``response``: its one text field, else its
    JSON, which a new text replaces as ``{"output": text}`` (the response stays an object)."""
    if isinstance(resp, str):
        return resp, [path]
    if isinstance(resp, dict) and len(resp) == 1:
        ((key, value),) = resp.items()
        if key in _TEXT_KEYS and isinstance(value, str):
            return value, [path + (key,)]
    # several fields (an output beside a result): the model is sent all of them, so all are
    # counted, and a new text replaces the whole response
    return (compact_json(resp) if resp is not None else ""), [path + (Wrap("output"),)]


class _Pairs:
    """Call ids for calls without one, and the call a response answers."""

    def __init__(self) -> None:
        self.open: dict[str, deque[str]] = defaultdict(deque)
        self.live: dict[str, Counter[str]] = defaultdict(Counter)  # ids still open, per name
        self.gone: dict[str, Counter[str]] = defaultdict(Counter)  # answered by id: skipped when met
        self.count = 0

    def call(self, name: str, cid: str | None) -> str:
        self.count += 1
        call_id = cid or f"{name}#{self.count}"
        self.open[name].append(call_id)
        self.live[name][call_id] += 1
        return call_id

    def answer(self, name: str, cid: str | None) -> str:
        """The call a response answers. Answering by id takes that id's earliest open
        call out of the queue (lazily, so a long run stays linear); answering without an
        id takes the earliest call still open."""
        if cid:
            if self.live[name][cid] > 0:
                self.live[name][cid] -= 1
                self.gone[name][cid] += 1
            return cid
        queue, gone = self.open[name], self.gone[name]
        while queue:
            first = queue.popleft()
            if gone[first] > 0:
                gone[first] -= 1
                continue
            self.live[name][first] -= 1
            return first
        return ""


def read_parts(doc: Document, role: str, parts: list[Any], path: Path, b: Builder, pairs: _Pairs,
               *, origin: Path) -> list[int]:
    """One Gemini content's parts as canonical messages: text and calls as one message
    of ``role``, each function response as a tool message; returns their indices."""
    added: list[int] = []
    texts: list[str] = []
    calls: list[ToolCall] = []

    def flush() -> None:
        if texts or calls:
            added.append(b.add(Message(role=role, content="\n".join(texts), tool_calls=tuple(calls)), (), origin))
            texts.clear()
            calls.clear()

    for j, part in enumerate(parts):
        ppath = path + (j,)
        call = _get(part, *_CALL_KEYS)
        response = _get(part, *_RESPONSE_KEYS)
        if call is not None and isinstance(call[1], dict):
            fc = call[1]
            name = str_or_none(fc.get("name")) or ""
            args = fc.get("args")
            calls.append(ToolCall(id=pairs.call(name, str_or_none(fc.get("id"))), name=name,
                                  arguments=compact_json(args if args is not None else {})))
        elif response is not None and isinstance(response[1], dict):
            flush()
            fr = response[1]
            name = str_or_none(fr.get("name")) or ""
            text, slots = response_text(fr.get("response"), ppath + (response[0], "response"))
            call_id = pairs.answer(name, str_or_none(fr.get("id")))
            added.append(b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=name),
                               slots, ppath))
        elif isinstance(part.get("text"), str):
            if part.get("thought") is True:
                continue  # a thought summary: not sent back to the model
            texts.append(part["text"])
        else:
            texts.append(compact_json(part))
    flush()
    return added


_int = token_count  # one rule for every reader: toolclear.formats._base


def _first_int(meta: dict[str, Any], *keys: str) -> int:
    found = _get(meta, *keys)
    return _int(found[1]) if found else 0


def gemini_usage(meta: Any, *, model: str = "", timestamp: str = "", source: str) -> Usage | None:
    """``usageMetadata`` (API, ADK) or a Gemini CLI ``tokens`` summary as a ``Usage``:
    the prompt count includes the cached tokens, which Usage keeps apart."""
    if not isinstance(meta, dict):
        return None
    prompt = _first_int(meta, "promptTokenCount", "prompt_token_count", "input")
    cached = min(_first_int(meta, "cachedContentTokenCount", "cached_content_token_count", "cached"), prompt)
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=_first_int(meta, "candidatesTokenCount", "candidates_token_count", "output"),
        cache_read_tokens=cached,
        reasoning_tokens=_first_int(meta, "thoughtsTokenCount", "thoughts_token_count", "thoughts"),
        model=model,
        timestamp=timestamp,
        source=source,
    )


# ---------------------------------------------------------------- Gemini API

def _bodies(doc: Document) -> Iterator[tuple[Path, dict[str, Any], str]]:
    v = doc.value
    if doc.kind == "jsonl":
        for i, rec in doc.records():
            if isinstance(rec, dict) and isinstance(rec.get("contents"), list):
                yield (i,), rec, f"line {i + 1}"
        return
    if isinstance(v, dict) and isinstance(v.get("contents"), list):
        yield (), v, "0"
    elif isinstance(v, dict) and isinstance(v.get("interactions"), list):
        yield from ((path, body, f"request {path[1]}") for path, body in cassette_requests(v)
                    if isinstance(body.get("contents"), list))
    elif isinstance(v, list) and v and all(_is_content(c) for c in v):
        yield (), {"contents": v}, "0"


class GeminiApiFormat(FormatReader):
    name = "gemini-api"
    label = "Gemini API contents (request body, contents list, cassette)"
    aliases = ("gemini", "google-genai", "vertex")
    where_found = "generateContent request bodies you log; API cassettes recorded by test suites"
    tool_result = "each functionResponse part; paired by id, else with the earliest open call of that name"
    export_changes = "the response's output / result / content string (the response stays an object)"
    expects = "a request body with 'contents' (Gemini parts), a list of contents, or a cassette of such requests"

    def sniff(self, doc: Document) -> bool:
        for _, body, _ in _bodies(doc):
            contents = body["contents"]
            return bool(contents) and all(_is_content(c) for c in contents)
        return False

    def read(self, doc: Document, source: str) -> list[Transcript]:
        out = []
        for path, body, ident in _bodies(doc):
            bare = isinstance(doc.value, list)
            cpath: Path = () if bare else path + ("contents",)
            b = Builder(doc)
            pairs = _Pairs()
            system = _get(body, "systemInstruction", "system_instruction")
            if system is not None and _is_content(system[1]):
                read_parts(doc, "system", system[1]["parts"], path + (system[0], "parts"), b, pairs,
                           origin=path + (system[0],))
            for k, content in enumerate(body["contents"]):
                if not _is_content(content):
                    raise TranscriptError(f"expected a content with 'parts', got {json_type(content)}",
                                          where=where(doc, cpath + (k,)))
                role = "assistant" if content.get("role") == "model" else "user"
                read_parts(doc, role, content["parts"], cpath + (k, "parts"), b, pairs, origin=cpath + (k,))
            container = "API cassette (request bodies)" if "interactions" in path else (
                "JSON Lines of request bodies" if doc.kind == "jsonl" else "")
            out.append(b.build(self.name, id=ident, source=source, title="Gemini request", container=container))
        return out


# ---------------------------------------------------------------- Gemini CLI

def _cli_messages(doc: Document) -> tuple[list[tuple[Path, dict[str, Any]]], list[tuple[str, list[Path]]], str,
                                         list[str], dict[str, tuple[str, ...]]]:
    """(effective messages with their paths, all copies per message id, session id, notes,
    the chat compressions: summary id -> the ids it kept).

    JSON Lines replay Gemini CLI's own loader (``loadConversationRecord`` in its
    chatRecordingService): a record with a string ``id`` is a message (even one that also
    holds ``$set``), and replaces an earlier one with that id in its place;
    ``$rewindTo`` drops that id and everything after it, and every message when the id
    is unknown; ``$set.messages`` (a checkpoint) replaces the whole list, as does the
    ``messages`` of a metadata line. Linear: a rewind costs what it drops. Every copy of
    a message is remembered so an export clears them all."""
    if doc.kind == "json":
        v = doc.value
        msgs = [(("messages", i), m) for i, m in enumerate(v["messages"]) if isinstance(m, dict)]
        return msgs, [], str_or_none(v.get("sessionId")) or "0", [], {}
    log = _CliLog()
    session = "0"
    for i, rec in doc.records():
        if not isinstance(rec, dict):
            continue
        if isinstance(rec.get("$rewindTo"), str):
            log.rewind(rec["$rewindTo"])
        elif isinstance(rec.get("id"), str):
            log.put(rec["id"], (i,), rec)
        elif isinstance(rec.get("$set"), dict):
            if isinstance(rec["$set"].get("messages"), list):
                log.replace_all(rec["$set"]["messages"], (i, "$set", "messages"))
        elif isinstance(rec.get("sessionId"), str):
            session = rec["sessionId"]
            if isinstance(rec.get("messages"), list):
                log.replace_all(rec["messages"], (i, "messages"))
    notes = [f"{log.unknown} $rewindTo record(s) name a message id the session does not hold: Gemini CLI's own "
             "loader then drops every message before it, and so does this reader"] if log.unknown else []
    return [log.current[k] for k in log.order], list(log.copies.items()), session, notes, log.compactions


class _CliLog:
    """Gemini CLI's messages as its loader keeps them: a map in insertion order, where a
    rewind drops a suffix (so a plain list of the keys and their places stays right)."""

    def __init__(self) -> None:
        self.current: dict[str, tuple[Path, dict[str, Any]]] = {}
        self.order: list[str] = []
        self.pos: dict[str, int] = {}
        self.copies: dict[str, list[Path]] = defaultdict(list)
        self.unknown = 0
        self.compactions: dict[str, tuple[str, ...]] = {}
        """A compaction's summary -> the messages before it the compacted context kept."""
        self.dropped: set[str] = set()

    def put(self, key: str, path: Path, rec: dict[str, Any]) -> None:
        if key not in self.current:
            self.pos[key] = len(self.order)
            self.order.append(key)
        self.current[key] = (path, rec)
        self.copies[key].append(path)

    def rewind(self, key: str) -> None:
        cut = self.pos.get(key)
        self.unknown += cut is None
        for k in self.order[cut or 0:]:
            del self.current[k], self.pos[k]
        del self.order[cut or 0:]

    def replace_all(self, messages: list[Any], base: Path) -> None:
        """A checkpoint. One that brings a new ``<state_snapshot>`` summary and leaves
        messages out is Gemini CLI's chat compression: what it left out stays read (the
        calls before it were sent it) and the compaction is remembered; what earlier
        compactions left out stays too."""
        new = [(m["id"], k, m) for k, m in enumerate(messages) if isinstance(m, dict) and isinstance(m.get("id"), str)]
        ids = {key for key, _, _ in new}
        snapshot = next((key for key, _, m in new if key not in self.current
                         and _SNAPSHOT in _cli_text(m.get("content"))), None)
        gone = [k for k in self.order if k not in ids and k not in self.dropped]
        if snapshot is not None and gone:
            kept = tuple(k for k in self.order if k in ids)
            fresh_before: list[str] = []
            for key, _, _ in new:
                if key == snapshot:
                    break
                if key not in self.current:
                    fresh_before.append(key)
            self.compactions[snapshot] = (kept + tuple(fresh_before))
            self.dropped.update(gone)
            for key, k, m in new:
                self.put(key, (*base, k), m)
            return
        history = [key for key in self.order if key in self.dropped]
        for key in self.order:
            if key not in self.dropped:
                del self.current[key], self.pos[key]
        self.order[:] = history
        self.pos.update((key, n) for n, key in enumerate(history))
        for key, k, m in new:
            self.put(key, (*base, k), m)


def _cli_text(content: Any) -> str:
    """A Gemini CLI message's text: a string (older CLIs) or a list of parts (newer)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and _is_part_list(content):
        return "\n".join(p["text"] if isinstance(p.get("text"), str) else compact_json(p) for p in content)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return "" if content is None else compact_json(content)


def _is_cli_message(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("id"), str) and m.get("type") in (
        "user", "gemini", "info", "error", "warning")


class GeminiCliFormat(FormatReader):
    name = "gemini-cli"
    label = "Gemini CLI session (JSON or JSON Lines)"
    aliases = ("gemini-cli-session",)
    where_found = "~/.gemini/tmp/<project>/chats/session-*.json / .jsonl"
    tool_result = "each toolCalls[] entry of a 'gemini' message: its result (function-response parts)"
    export_changes = "the response's output string and the resultDisplay copy, in every copy of the message"
    expects = "a Gemini CLI session: an object with 'sessionId' and 'messages', or its JSON Lines form"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if doc.kind == "json":
            return (isinstance(v, dict) and isinstance(v.get("sessionId"), str)
                    and isinstance(v.get("messages"), list) and any(_is_cli_message(m) for m in v["messages"]))
        jl = doc.as_jsonl() if doc.kind != "jsonl" else doc
        if jl is None:
            return False
        recs = [r for _, r in jl.records()]
        head = recs[0] if recs else None
        return (isinstance(head, dict) and isinstance(head.get("sessionId"), str) and "projectHash" in head
                and any(_is_cli_message(r) for r in recs))

    def read(self, doc: Document, source: str) -> list[Transcript]:
        if doc.kind == "yaml":
            raise TranscriptError(self.expects)
        messages, copies, session, rewind_notes, compactions = _cli_messages(doc)
        at: dict[str, list[int]] = {}  # message id -> its message and tool results
        copies_of = dict(copies)
        b = Builder(doc)
        b.warnings.extend(rewind_notes)
        if doc.kind == "jsonl":
            for bad in doc.bad_lines:
                b.warnings.append(f"line {bad.line} is not JSON ({bad.error}); kept as it is")
        pairs = _Pairs()
        skipped = 0
        for path, m in messages:
            kind = m.get("type")
            if kind in ("info", "error", "warning"):
                skipped += 1
                continue
            raw_calls = as_list(m.get("toolCalls"))
            calls = [ToolCall(id=pairs.call(str_or(tc.get("name")), str_or_none(tc.get("id"))),
                              name=str_or(tc.get("name")), arguments=compact_json(tc.get("args") or {}))
                     for tc in raw_calls if isinstance(tc, dict)]
            key = str_or(m.get("id"))
            meta = None
            if key in compactions:  # Gemini CLI records neither the trigger nor the tokens before it
                kept = sorted(i for k in compactions[key] for i in at.get(k, ()))
                meta = {"compaction": {"trigger": "", "summary": True, "kept": kept,
                                       "source": "gemini-cli compression"}}
            first = len(b.messages)
            index = b.add(Message(role="assistant" if kind == "gemini" else "user", content=_cli_text(m.get("content")),
                                  tool_calls=tuple(calls), meta=meta), (), path)
            usage = gemini_usage(m.get("tokens"), model=str_or(m.get("model")), timestamp=str_or(m.get("timestamp")),
                                 source="tokens")
            if kind == "gemini" and usage is not None:
                b.set_usage(index, usage)
            copies = copies_of.get(str_or(m.get("id")), [path])
            for k, tc in enumerate(raw_calls):
                if isinstance(tc, dict):
                    self._result(doc, b, pairs, tc, k, path, copies)
            at[key] = list(range(first, len(b.messages)))
        if compactions:
            b.notes.append(f"{len(compactions)} chat compression(s): the messages each left out are read as sent "
                           "before it (toolclear.recorded drops them at the call after it)")
        if skipped:
            b.notes.append(f"{skipped} info / error / warning messages are the CLI's own, not sent to the model")
        if doc.kind == "jsonl":
            b.notes.append("a message rewritten later in the file is read in its last version; "
                           "an export clears every copy")
        return [b.build(self.name, id=session, source=source, title="Gemini CLI session")]

    @staticmethod
    def _result(doc: Document, b: Builder, pairs: _Pairs, tc: dict[str, Any], k: int, path: Path,
                copies: list[Path]) -> None:
        """The tool message of toolCalls[k]: its result's text, with a slot in every copy."""
        name = str_or_none(tc.get("name")) or ""
        result = tc.get("result")
        rel: list[Path] = []
        text = ""
        if isinstance(result, list):
            for j, part in enumerate(result):
                response = _get(part, *_RESPONSE_KEYS) if isinstance(part, dict) else None
                if response is not None and isinstance(response[1], dict):
                    part_text, slots = response_text(response[1].get("response"), ("result", j, response[0], "response"))
                    text = part_text if not text else text + "\n" + part_text
                    rel.extend(slots)
        elif isinstance(result, str):
            text, rel = result, [("result",)]
        elif result is not None:
            text = compact_json(result)
        display = tc.get("resultDisplay")
        if display is not None:
            rel.extend(("resultDisplay",) + p[1:] for p in result_text_paths(display, ("resultDisplay",), text))
        call_id = pairs.answer(name, str_or_none(tc.get("id")))
        slots = [copy + ("toolCalls", k) + r for copy in copies for r in rel
                 if _has_path(doc, copy + ("toolCalls", k) + r)]
        b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=name), slots,
              path + ("toolCalls", k))


def _has_path(doc: Document, path: Path) -> bool:
    node: Any = doc.value
    for key in path:
        if isinstance(key, Wrap):  # the value here is replaced whole: it only has to exist
            return not isinstance(node, BadLine)
        if isinstance(node, dict) and isinstance(key, str) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return False
    return not isinstance(node, BadLine)


# ---------------------------------------------------------------- Google ADK

class GoogleAdkFormat(FormatReader):
    name = "google-adk"
    label = "Google ADK session (events with Gemini content)"
    aliases = ("adk",)
    where_found = "Session.model_dump() / model_dump_json() of an ADK session service; adk web exports"
    tool_result = "each function_response part of an event's content"
    export_changes = "the response's output / result / content string"
    expects = "an ADK session: an object with 'events', each with 'author' and a 'content' of Gemini parts"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        events = v.get("events") if isinstance(v, dict) and doc.kind == "json" else None
        return (isinstance(events, list) and bool(events)
                and all(isinstance(e, dict) and "author" in e for e in events)
                and any(_is_content(e.get("content")) for e in events))

    def read(self, doc: Document, source: str) -> list[Transcript]:
        v = doc.value
        b = Builder(doc)
        pairs = _Pairs()
        for i, e in enumerate(v["events"]):
            content = e.get("content")
            if not _is_content(content):
                continue
            author = str_or_none(e.get("author")) or ""
            role = "user" if content.get("role") == "user" or author == "user" else "assistant"
            added = read_parts(doc, role, content["parts"], ("events", i, "content", "parts"), b, pairs,
                               origin=("events", i))
            meta = _get(e, "usageMetadata", "usage_metadata")
            usage = gemini_usage(meta[1] if meta else None, model=str_or_none(e.get("model_version")) or "",
                                 source="usageMetadata")
            first = next((k for k in added if b.messages[k].role == "assistant"), None)
            if usage is not None and first is not None:
                b.set_usage(first, usage)
        ident = str_or_none(v.get("id")) or "0"
        return [b.build(self.name, id=ident, source=source, title="ADK session")]
