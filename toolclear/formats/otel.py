"""Agent runs kept as OpenTelemetry traces (OTLP JSON).

Teams running agents in production keep their runs as traces; the GenAI semantic
conventions put the messages sent on each model call on its chat span. Three shapes are
read, as their instrumentations write them:

- ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (and ``gen_ai.system_instructions``)
  JSON attributes: messages of typed parts (pydantic-ai, OpenTelemetry's own
  instrumentations in their latest mode);
- the older ``gen_ai.system.message`` / ``user`` / ``assistant`` / ``tool`` span events and
  ``gen_ai.choice`` (content in ``gen_ai.event.content``; Azure AI Inference, Semantic Kernel);
- the same events as one JSON span attribute ``events`` (each with its ``event.name``), as
  pydantic-ai 1.x writes them with ``InstrumentationSettings(version=1)`` (its default
  ``event_mode='attributes'``; ``event_mode='logs'`` sends them as log records, which a
  trace export does not hold);
- OpenInference's flattened ``llm.input_messages.N.message.*`` / ``llm.output_messages``
  (Arize Phoenix's instrumentations).

A file is an OTLP JSON export: one ``{"resourceSpans": [...]}`` object, or JSON Lines of
them as the Collector's file exporter writes. Each conversation is rebuilt from its chat
spans: a call's input holds the history so far, so the last call's input and output is
the conversation; a call whose input does not continue an earlier call's starts another
(a subagent in the same trace). Usage comes from ``gen_ai.usage.*`` (``llm.token_count.*``),
the model from ``gen_ai.response.model`` / ``gen_ai.request.model`` (``llm.model_name``).

A trace is a record of what happened, not a conversation a tool reads back, so it is not
rewritten in place: an export is the conversation as an OpenAI Chat Completions request
body (JSON; JSON Lines of bodies when the file holds several conversations), which
toolclear, eino's and OpenAI's readers all take.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..errors import TranscriptError
from ..model import Transcript, Usage
from ._base import Builder, FormatReader, as_dict, compact_json, json_type, str_or_none, token_count
from ._doc import BadLine, Document, Path, parse
from .chat import Conversation, read_openai

__all__ = ["OtelFormat"]

_ROLE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
_OPENINFERENCE_IN, _OPENINFERENCE_OUT = "llm.input_messages.", "llm.output_messages."


# ------------------------------------------------------------------ OTLP JSON


def _key(d: dict[str, Any], camel: str, snake: str) -> Any:
    """OTLP JSON writes lowerCamelCase keys; protobuf's own JSON may keep snake_case."""
    return d[camel] if camel in d else d.get(snake)


def _any_value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(v, dict):
        return None
    if "stringValue" in v or "string_value" in v:
        return _key(v, "stringValue", "string_value")
    if "intValue" in v or "int_value" in v:
        raw = _key(v, "intValue", "int_value")
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    if "doubleValue" in v or "double_value" in v:
        return _key(v, "doubleValue", "double_value")
    if "boolValue" in v or "bool_value" in v:
        return _key(v, "boolValue", "bool_value")
    if "arrayValue" in v or "array_value" in v:
        values = as_dict(_key(v, "arrayValue", "array_value")).get("values") or []
        return [_any_value(x) for x in values] if isinstance(values, list) else []
    if "kvlistValue" in v or "kvlist_value" in v:
        return _attributes(as_dict(_key(v, "kvlistValue", "kvlist_value")).get("values"))
    if "bytesValue" in v or "bytes_value" in v:
        return _key(v, "bytesValue", "bytes_value")
    return None


def _attributes(kvs: Any) -> dict[str, Any]:
    if not isinstance(kvs, list):
        return {}
    return {kv["key"]: _any_value(kv.get("value")) for kv in kvs if isinstance(kv, dict) and isinstance(kv.get("key"),
                                                                                                          str)}


def _resource_spans(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        rs = _key(value, "resourceSpans", "resource_spans")
        return rs if isinstance(rs, list) else None
    return None


def _span_records(doc: Document) -> Iterator[tuple[Path, Any]]:
    """(path, export request) of every OTLP export in the file."""
    if doc.kind == "jsonl":
        yield from (((i,), r) for i, r in doc.records())
    else:
        yield (), doc.value


def _hex_id(raw: Any) -> str:
    """A trace id in OTLP JSON's hex, whether written as hex or protobuf JSON's base64."""
    if not isinstance(raw, str):
        return ""
    if len(raw) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in raw):
        return raw.lower()
    raw = raw.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate is no id: U+FFFD, as Go reads it
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


# ------------------------------------------------------------------ one chat span


@dataclass
class _Call:
    """One model call read from a chat span: its input and output as Chat Completions
    messages, and what it cost."""

    trace: str
    start: int
    where: str
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    usage: Usage | None
    model: str
    agent: str = ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else compact_json(value) if value is not None else ""


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else compact_json(value if value is not None else {})


def _call(id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {"id": _text(id), "type": "function", "function": {"name": _text(name), "arguments": _arguments(arguments)}}


def _media_part(part: dict[str, Any]) -> dict[str, Any] | None:
    """An image part in Chat Completions' shape (so it is counted as an image)."""
    mime = str_or_none(part.get("mime_type")) or ""
    modality = str_or_none(part.get("modality")) or ""
    if not (mime.startswith("image/") or modality == "image"):
        return None
    if isinstance(part.get("content"), str):  # a blob: base64 data
        return {"type": "image_url", "image_url": {"url": f"data:{mime or 'image/png'};base64,{part['content']}"}}
    if isinstance(part.get("uri"), str):
        return {"type": "image_url", "image_url": {"url": part["uri"]}}
    return None


def _from_parts(messages: Any) -> list[dict[str, Any]]:
    """GenAI semantic-convention messages (``{role, parts: [...]}``) as Chat Completions
    messages: text parts joined, tool calls as ``tool_calls``, each tool-call response
    its own ``tool`` message (pydantic-ai puts them in a user message, ``result``; the
    convention's ``tool`` role with ``response``)."""
    out: list[dict[str, Any]] = []
    if not isinstance(messages, list):
        return out
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = str_or_none(m.get("role")) or "user"
        texts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for part in m.get("parts") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append({"type": "text", "text": _text(part.get("content"))})
            elif kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                result = next((part[k] for k in ("response", "result", "content") if k in part), "")
                out.append({"role": "tool", "tool_call_id": _text(part.get("id")), "content": _text(result)})
            elif (media := _media_part(part)) is not None:
                texts.append(media)
        if texts or calls or role in ("system", "assistant") and not out:
            msg: dict[str, Any] = {"role": role if role != "tool" else "user"}
            if all(t["type"] == "text" for t in texts):
                msg["content"] = "\n".join(t["text"] for t in texts) if texts or not calls else None
            else:
                msg["content"] = texts
            if calls:
                msg["role"] = "assistant"
                msg["tool_calls"] = calls
            out.append(msg)
    return out


def _system_instructions(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    parts = _loads(attrs.get("gen_ai.system_instructions"))
    if isinstance(parts, list):
        text = "\n".join(_text(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type") == "text")
        return [{"role": "system", "content": text}] if text else []
    if isinstance(parts, str) and parts:
        return [{"role": "system", "content": parts}]
    return []


def _from_event(role: str, body: Any) -> dict[str, Any]:
    """One ``gen_ai.*.message`` event (or a ``gen_ai.choice``'s message) as a Chat
    Completions message."""
    body = body if isinstance(body, dict) else {"content": body}
    msg: dict[str, Any] = {"role": role, "content": _text(body.get("content")) if body.get("content") is not None
                           else (None if body.get("tool_calls") else "")}
    if role == "assistant" and isinstance(body.get("tool_calls"), list):
        msg["tool_calls"] = [_call(c.get("id"), (c.get("function") or {}).get("name", c.get("name")),
                                   (c.get("function") or {}).get("arguments", c.get("arguments")))
                             for c in body["tool_calls"] if isinstance(c, dict)]
    if role == "tool":
        msg["tool_call_id"] = _text(body.get("tool_call_id", body.get("id")))
    return msg


def _from_events(events: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for e in events if isinstance(events, list) else ():
        if not isinstance(e, dict):
            continue
        name = e.get("name")
        attrs = e["body"] if isinstance(e.get("body"), dict) else _attributes(e.get("attributes"))
        body = _loads(attrs["gen_ai.event.content"]) if "gen_ai.event.content" in attrs else attrs
        if name in _ROLE_EVENTS:
            inputs.append(_from_event(_ROLE_EVENTS[name], body))
        elif name == "gen_ai.choice":
            message = body.get("message") if isinstance(body, dict) and isinstance(body.get("message"), dict) else body
            outputs.append(_from_event("assistant", message))
    return inputs, outputs


def _attribute_events(attrs: dict[str, Any]) -> list[dict[str, Any]] | None:
    """pydantic-ai's ``events`` span attribute (version 1 instrumentation): the span
    events as a JSON list of flat objects, each naming itself in ``event.name``; shaped as
    span events, or None when the span has no such attribute."""
    raw = _loads(attrs.get("events"))
    if not isinstance(raw, list) or not any(isinstance(e, dict) and (
            e.get("event.name") in _ROLE_EVENTS or e.get("event.name") == "gen_ai.choice") for e in raw):
        return None
    return [{"name": e.get("event.name"), "body": {k: v for k, v in e.items() if k != "event.name"}}
            for e in raw if isinstance(e, dict)]


def _nested(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened ``prefix.N.message.a.b`` keys as a list of nested dicts."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix):].partition(".")
        if not index.isdigit():
            continue
        node = rows.setdefault(int(index), {})
        parts = rest.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
        node[parts[-1]] = value
    return [rows[i] for i in sorted(rows)]


def _indexed(d: Any) -> list[Any]:
    return [d[k] for k in sorted(d, key=int) if k.isdigit()] if isinstance(d, dict) else []


def _from_openinference(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        m: dict[str, Any] = as_dict(row.get("message"))
        role = str_or_none(m.get("role")) or "user"
        msg: dict[str, Any] = {"role": role}
        if "content" in m:
            msg["content"] = _text(m["content"])
        else:
            texts = [(c.get("message_content") or {}) for c in _indexed(m.get("contents"))]
            msg["content"] = "\n".join(_text(t.get("text")) for t in texts if t.get("type", "text") == "text")
        calls = [c.get("tool_call") or {} for c in _indexed(m.get("tool_calls"))]
        if calls:
            msg["tool_calls"] = [_call(c.get("id"), (c.get("function") or {}).get("name"),
                                       (c.get("function") or {}).get("arguments")) for c in calls]
            if not msg["content"]:
                msg["content"] = None
        if role == "tool":
            msg["tool_call_id"] = _text(m.get("tool_call_id"))
        if isinstance(m.get("name"), str) and role != "tool":
            msg["name"] = m["name"]
        out.append(msg)
    return out


_int = token_count  # one rule for every reader: toolclear.formats._base


def _usage(attrs: dict[str, Any], model: str, start: int) -> Usage | None:
    """A call's usage. The conventions count cached tokens inside ``input_tokens``; they
    come off it here (toolclear's ``input_tokens`` is the uncached prompt)."""
    prompt = _int(attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens",
                                                                    attrs.get("llm.token_count.prompt"))))
    output = _int(attrs.get("gen_ai.usage.output_tokens", attrs.get("gen_ai.usage.completion_tokens",
                                                                     attrs.get("llm.token_count.completion"))))
    read = _int(attrs.get("gen_ai.usage.cache_read.input_tokens",
                          attrs.get("gen_ai.usage.cache_read_input_tokens",
                                    attrs.get("llm.token_count.prompt_details.cache_read"))))
    write = _int(attrs.get("gen_ai.usage.cache_creation.input_tokens",
                           attrs.get("gen_ai.usage.cache_creation_input_tokens",
                                     attrs.get("llm.token_count.prompt_details.cache_write"))))
    if not (prompt or output):
        return None
    read, write = min(read, prompt), min(write, max(prompt - read, 0))
    when = datetime.fromtimestamp(start / 1e9, tz=timezone.utc).isoformat().replace("+00:00", "Z") if start else ""
    source = "llm.token_count" if "llm.token_count.prompt" in attrs else "gen_ai.usage"
    return Usage(input_tokens=prompt - read - write, output_tokens=output, cache_read_tokens=read,
                 cache_write_tokens=write, model=model, timestamp=when, source=source)


def _read_span(span: dict[str, Any], where: str) -> _Call | None:
    """A chat span's call, or None for any other span (tools, agent runs, HTTP)."""
    attrs = _attributes(span.get("attributes"))
    start = _int(_to_int(_key(span, "startTimeUnixNano", "start_time_unix_nano")))
    trace = _hex_id(_key(span, "traceId", "trace_id"))
    model = str_or_none(attrs.get("gen_ai.response.model")) or str_or_none(attrs.get("gen_ai.request.model")) or \
        str_or_none(attrs.get("llm.model_name")) or ""
    agent = str_or_none(attrs.get("gen_ai.agent.name")) or ""
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        inputs = _system_instructions(attrs) + _from_parts(_loads(attrs.get("gen_ai.input.messages")))
        outputs = _from_parts(_loads(attrs.get("gen_ai.output.messages")))
    elif any(k.startswith((_OPENINFERENCE_IN, _OPENINFERENCE_OUT)) for k in attrs):
        inputs = _from_openinference(_nested(attrs, _OPENINFERENCE_IN))
        outputs = _from_openinference(_nested(attrs, _OPENINFERENCE_OUT))
    elif (flat := _attribute_events(attrs)) is not None:
        inputs, outputs = _from_events(flat)
    elif any(isinstance(e, dict) and (e.get("name") in _ROLE_EVENTS or e.get("name") == "gen_ai.choice")
             for e in span.get("events") or ()):
        inputs, outputs = _from_events(span.get("events"))
    elif attrs.get("gen_ai.operation.name") in ("chat", "text_completion", "generate_content") or \
            attrs.get("openinference.span.kind") == "LLM":
        return _Call(trace, start, where, [], [], _usage(attrs, model, start), model, agent)
    else:
        return None
    return _Call(trace, start, where, inputs, outputs, _usage(attrs, model, start), model, agent)


def _to_int(value: Any) -> Any:
    """A time in nanoseconds since the epoch as OTLP JSON writes it (a string or a
    number); 0 (no time) for anything past 64 bits, infinite, NaN or not a number."""
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return n if 0 <= n < 1 << 63 else 0


# ------------------------------------------------------------------ conversations


def _calls(doc: Document) -> tuple[list[_Call], int, list[str]]:
    """Every model call in the export, how many other spans it holds, and what was
    skipped (each named by its line)."""
    calls: list[_Call] = []
    warnings: list[str] = []
    other = 0
    for base, request in _span_records(doc):
        here = f"line {base[0] + 1}" if base else "$"
        if isinstance(request, BadLine):
            warnings.append(f"line {request.line} is not JSON ({request.error}); skipped")
            continue
        resource_spans = _resource_spans(request)
        if resource_spans is None:
            warnings.append(f"{here}: {json_type(request)} without 'resourceSpans'; skipped")
            continue
        for i, rs in enumerate(resource_spans):
            scopes = as_dict(rs).get("scopeSpans", as_dict(rs).get("scope_spans"))
            if scopes is None:  # exports before OTLP 0.19
                scopes = as_dict(rs).get("instrumentationLibrarySpans")
            for j, scope in enumerate(scopes if isinstance(scopes, list) else ()):
                spans = as_dict(scope).get("spans")
                for k, span in enumerate(spans if isinstance(spans, list) else ()):
                    call = _read_span(span, f"{here}: resourceSpans[{i}].scopeSpans[{j}].spans[{k}]") if isinstance(
                        span, dict) else None
                    if call is None:
                        other += 1
                    else:
                        calls.append(call)
    return calls, other, warnings


def _shape(m: dict[str, Any]) -> tuple[Any, ...]:
    """What two records of one message share across calls."""
    calls = tuple(c.get("id") for c in m.get("tool_calls") or ())
    return m.get("role"), m.get("tool_call_id"), calls, _text(m.get("content"))


@dataclass
class _Run:
    calls: list[_Call] = field(default_factory=list)
    rewritten: int = 0
    """Calls whose input did not hold the history before them (the agent changed it)."""
    shapes: list[tuple[Any, ...]] = field(default_factory=list)
    """The shapes of its history (its last call's input and output), worked out once."""
    head: list[tuple[Any, ...]] = field(default_factory=list)
    """The shapes of its first call's first two messages (system prompt, first request)."""
    index: int = 0
    key: tuple[int, int] = (0, 0)
    """Its history's length and hash: where ``_runs`` indexes it."""

    @property
    def history(self) -> list[dict[str, Any]]:
        last = self.calls[-1]
        return last.inputs + last.outputs


def _chain(shapes: list[tuple[Any, ...]]) -> list[int]:
    """The hash of every prefix of ``shapes`` (``out[k]``: of the first k), one pass."""
    out, h = [0], 0
    for s in shapes:
        h = hash((h, s))
        out.append(h)
    return out


def _runs(calls: list[_Call]) -> list[_Run]:
    """Chat calls grouped into conversations, in start order: each call joins the
    conversation whose history its input continues (one of its own trace first: an agent
    loop without a parent span puts each call in a trace of its own), else starts one.

    Linear in the messages: each message's shape is worked out once, each run is indexed
    by the hash of its history, and a call looks up each prefix of its input in that index
    (a candidate is then compared whole, at C speed), where comparing every call with every
    run's rebuilt history was quadratic (3,000 spans of one trace: 42 s)."""
    runs: list[_Run] = []
    by_history: dict[tuple[int, int], list[int]] = {}  # (length, hash) -> indices of runs with that history
    by_start: dict[tuple[str, tuple[Any, ...]], list[int]] = {}  # (trace of its last call, head) -> runs
    for call in sorted(calls, key=lambda c: c.start):
        shapes = [_shape(m) for m in call.inputs]
        target = None
        if call.inputs:
            prefix = _chain(shapes)
            going = sorted({k for n in range(len(shapes) + 1) for k in by_history.get((n, prefix[n]), ())
                            if runs[k].shapes == shapes[:n]}, reverse=True)
            target = next((runs[k] for k in going if runs[k].calls[-1].trace == call.trace),
                          runs[going[0]] if going else None)
            if target is None:  # the same run with its history changed (its own clearing, a compaction)
                found = max((k for n in (0, 1, 2) if len(shapes) >= n
                             for k in by_start.get((call.trace, tuple(shapes[:n])), ()) if len(runs[k].head) == n),
                            default=None)
                target = runs[found] if found is not None else None
                if target is not None:
                    target.rewritten += 1
        if target is None:
            target = _Run(head=shapes[:2], index=len(runs))
            runs.append(target)
        else:
            by_history[target.key].remove(target.index)
            by_start[(target.calls[-1].trace, tuple(target.head))].remove(target.index)
        by_start.setdefault((call.trace, tuple(target.head)), []).append(target.index)
        target.calls.append(call)
        target.shapes = shapes + [_shape(m) for m in call.outputs]
        target.key = (len(target.shapes), _chain(target.shapes)[-1])
        by_history.setdefault(target.key, []).append(target.index)
    return runs


def _indented(value: Any, doc: Document) -> str | None:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` written by orjson in a
    twentieth of the time (the stdlib's indented writer is pure Python): the same text,
    but for floats under 1e-4, written in decimals (the same values). None where orjson
    would write another value or refuse: a file with a NaN or Infinity (orjson writes
    null), an integer past 64 bits, a key that is not a string, a lone surrogate."""
    if doc.non_finite:
        return None
    try:
        import orjson
    except ImportError:  # the stdlib writes it
        return None
    try:
        return str(orjson.dumps(value, option=orjson.OPT_INDENT_2), "utf-8") + "\n"
    except (TypeError, ValueError):
        return None


class OtelFormat(FormatReader):
    name = "otel"
    label = "OpenTelemetry GenAI traces (OTLP JSON)"
    aliases = ("opentelemetry", "otlp", "otlp-json", "traces")
    where_found = ("an OTLP JSON export of your agent's traces (a collector's file exporter, Logfire / Langfuse / "
                   "Phoenix exports): gen_ai.input.messages, gen_ai.*.message events, OpenInference llm.*_messages")
    tool_result = "each tool message of a conversation rebuilt from its chat spans (the last call's input)"
    export_changes = ("traces are not rewritten in place: the conversation is written as an OpenAI Chat "
                      "request body with the cleared results (JSON Lines of bodies for a JSON Lines file, a list "
                      "of bodies for several conversations)")
    expects = "an OTLP JSON export: an object with 'resourceSpans', or JSON Lines of them"
    writes_as = "openai"

    def sniff(self, doc: Document) -> bool:
        return any(_resource_spans(v) is not None for _, v in _span_records(doc))

    def read(self, doc: Document, source: str) -> list[Transcript]:
        calls, other, warnings = _calls(doc)
        bare = [c for c in calls if not c.inputs and not c.outputs]
        runs = _runs([c for c in calls if c.inputs or c.outputs])
        if not runs:
            raise TranscriptError(
                f"no model call's messages in this OTLP export ({len(bare)} model-call spans without them, "
                f"{other} other spans): record them with your instrumentation's content capture "
                "(gen_ai.input.messages, gen_ai.*.message events or llm.input_messages)")
        if bare:
            warnings.append(f"{len(bare)} model-call spans record no messages (content capture off?); skipped")
        bodies = [{"model": next((c.model for c in reversed(r.calls) if c.model), ""),
                   "metadata": {"otel_trace_id": r.calls[0].trace}, "messages": r.history} for r in runs]
        # the export keeps the file's kind: JSON Lines of bodies for JSON Lines; else one
        # body, or a list of them (several conversations)
        def dumped(ascii: bool) -> str:
            if doc.kind == "jsonl":
                return "".join(json.dumps(b, ensure_ascii=ascii) + "\n" for b in bodies)
            value = bodies[0] if len(bodies) == 1 else bodies
            return (None if ascii else _indented(value, doc)) or json.dumps(value, indent=2, ensure_ascii=ascii) + "\n"

        try:
            data = dumped(False).encode()
        except UnicodeEncodeError:  # a lone surrogate in a message: kept, as the JSON escape it came as
            data = dumped(True).encode()
        out_doc = parse(data)
        out: list[Transcript] = []
        per_trace = Counter(r.calls[0].trace for r in runs)  # runs of each trace: numbered when several
        seen: Counter[str] = Counter()
        for n, (run, body) in enumerate(zip(runs, bodies)):
            base_path: Path = (n,) if out_doc.kind == "jsonl" or len(bodies) > 1 else ()
            conv = Conversation([(base_path + ("messages", j), m) for j, m in enumerate(body["messages"])])
            b = Builder(out_doc)
            read_openai(out_doc, conv, b, eino=False)
            if not out:
                b.warnings.extend(warnings)
            self._usage(b, run)
            trace = run.calls[0].trace
            traces = len({c.trace for c in run.calls})
            b.notes.append(f"rebuilt from {len(run.calls)} chat span(s) of "
                           + (f"trace {trace[:16] or '?'}" if traces == 1 else f"{traces} traces")
                           + " (the last call's input and output); exports write it as an OpenAI Chat request "
                           "body, the trace itself is not rewritten")
            if run.rewritten:
                b.notes.append(f"{run.rewritten} call(s) of this trace were sent a history the agent had changed "
                               "(its own clearing or a compaction): the conversation is what the last call was sent")
            if other and not out:
                b.notes.append(f"{other} other spans (agent runs, tool executions, HTTP) are not model calls; "
                               "the conversation holds what they did")
            agent = next((c.agent for c in run.calls if c.agent), "")
            seen[trace] += 1
            ident = (trace or f"conversation {n + 1}") + (f"/{seen[trace]}" if per_trace[trace] > 1 else "")
            out.append(b.build(self.name, id=ident, source=source, title=agent or f"trace {trace[:8]}",
                               container="OpenTelemetry trace"))
        return out

    @staticmethod
    def _usage(b: Builder, run: _Run) -> None:
        """Each call's usage on the reply it produced: the message right after its input."""
        for call in run.calls:
            index = len(call.inputs)
            if call.usage is not None and index < len(b.messages) and b.messages[index].role == "assistant":
                b.set_usage(index, call.usage)
