"""Message-list formats: eino, OpenAI Chat Completions, Anthropic Messages.

Each can come as a bare list, a request body with ``messages``, JSON Lines (one message
per line, or one request body per line as in fine-tuning files), a container of runs
(a list of objects each holding a message list, like tau-bench's trajectories), or the
request bodies recorded in an API cassette (VCR YAML or JSON).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript, Usage
from ..policies.langchain import langchain_facts
from ._base import (
    Builder,
    FormatReader,
    as_dict,
    as_list,
    cassette_requests,
    compact_json,
    compaction_usage,
    content_text,
    json_type,
    str_or,
    str_or_none,
    token_count,
    where,
)
from ._doc import BadLine, Document, Path

__all__ = [
    "AnthropicFormat",
    "Conversation",
    "EinoFormat",
    "OpenAIFormat",
    "find_conversations",
]

_RUN_KEYS = ("messages", "traj", "trajectory", "conversation", "conversations", "chat")
_ID_KEYS = ("instance_id", "task_id", "trial", "id", "session_id", "conversation_id")
_EINO_KEYS = frozenset(
    {
        "tool_name",
        "response_meta",
        "reasoning_content",
        "multi_content",
        "user_input_multi_content",
        "assistant_gen_multi_content",
    }
)
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "document"}
)
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_KNOWN_ROLES = frozenset({"system", "user", "assistant", "tool", "developer", "function"})


@dataclass
class Conversation:
    """One message list found in a document, as (path, value) pairs."""

    items: list[tuple[Path, Any]]
    id: str = "0"
    title: str = ""
    container: str = ""
    system: tuple[Path, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def _message_list(value: Any) -> bool:
    return isinstance(value, list) and (not value or _is_message(value[0]))


def _run_key(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in _RUN_KEYS:
            if _message_list(value.get(key)) and value.get(key):
                return key
    return None


def _run_id(run: dict[str, Any], index: int) -> str:
    parts = [
        f"{k}={run[k]}" for k in _ID_KEYS if isinstance(run.get(k), (str, int)) and not isinstance(run.get(k), bool)
    ]
    return ", ".join(parts) if parts else str(index)


def _unique(convs: list[Conversation]) -> list[Conversation]:
    seen: dict[str, int] = {}
    for i, c in enumerate(convs):
        if c.id in seen:
            c.id = f"{c.id} #{i}"
        seen[c.id] = i
    return convs


def _body(path: Path, body: dict[str, Any], **kw: Any) -> Conversation:
    items = [(path + ("messages", i), m) for i, m in enumerate(body["messages"])]
    system = None
    if "system" in body and isinstance(body["system"], (str, list)):
        system = (path + ("system",), body["system"])
    return Conversation(items, system=system, meta=body, **kw)


def find_conversations(doc: Document) -> list[Conversation] | None:
    """Every message list in the document, or None when it holds none (found once per
    document: the sniff of each chat format and the read ask again)."""
    if "conversations" not in doc.derived:
        doc.derived["conversations"] = _find_conversations(doc)
    found: list[Conversation] | None = doc.derived["conversations"]
    return found


def _find_conversations(doc: Document) -> list[Conversation] | None:
    value = doc.value
    if doc.kind == "jsonl":
        records = list(doc.records())
        if not records:
            return None
        if all(_is_message(r) for _, r in records):
            return [Conversation([((i,), r) for i, r in records])]
        if all(isinstance(r, dict) and _message_list(r.get("messages")) for _, r in records):
            return _unique(
                [
                    _body((i,), r, id=_run_id(r, i) if _run_id(r, i) != str(i) else f"line {i + 1}",
                          container="JSON Lines of request bodies")
                    for i, r in records
                ]
            )
        return None
    if doc.kind == "json" and isinstance(value, list):
        if _message_list(value):
            return [Conversation([((i,), m) for i, m in enumerate(value)])]
        if value and all(_run_key(r) for r in value):
            convs = []
            for i, run in enumerate(value):
                key = _run_key(run)
                assert key is not None
                items = [((i, key, j), m) for j, m in enumerate(run[key])]
                convs.append(
                    Conversation(items, id=_run_id(run, i), container=f"list of runs ('{key}')", meta=run)
                )
            return _unique(convs)
        return None
    if isinstance(value, dict):
        if _message_list(value.get("messages")):
            return [_body((), value)]
        if isinstance(value.get("interactions"), list):
            convs = [_body(path, body, id=f"request {path[1]}", container="API cassette (request bodies)")
                     for path, body in cassette_requests(value) if _message_list(body.get("messages"))]
            return _unique(convs) or None
    return None


def _iter_messages(convs: Sequence[Conversation]) -> Iterator[dict[str, Any]]:
    for c in convs:
        for _, m in c.items:
            if isinstance(m, dict):
                yield m


CONVERSE = ("a Bedrock Converse request (toolUse / toolResult content blocks), which toolclear does not read yet: "
            "log the Anthropic Messages request instead (Bedrock's InvokeModel takes one), or the agent's own log")


def _converse(convs: Sequence[Conversation]) -> bool:
    """Bedrock Converse: content blocks keyed by their kind (toolUse, toolResult, text),
    no 'type'. Its system list looks like Anthropic's, its blocks are not: read as
    Anthropic it would yield no tool result at all."""
    return any(isinstance(b, dict) and "type" not in b and ("toolUse" in b or "toolResult" in b)
               for m in _iter_messages(convs) if isinstance(m.get("content"), list) for b in m["content"])


def _anthropic_score(convs: Sequence[Conversation]) -> bool:
    if _converse(convs):
        return False
    for c in convs:
        if c.system is not None:
            return True
        tools = c.meta.get("tools")
        if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
            return True
    for m in _iter_messages(convs):
        if m.get("role") in ("tool", "system", "developer", "function") or "tool_calls" in m:
            return False
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kind = str_or_none(block.get("type"))
                    if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                        return True
                    if kind in _OPENAI_PARTS:
                        return False
    return False


def _eino_score(doc: Document, convs: Sequence[Conversation]) -> bool:
    for m in _iter_messages(convs):
        if _EINO_KEYS & m.keys():
            return True
        if m.get("content") is None or isinstance(m.get("content"), list):
            return False
    return doc.kind == "jsonl" and len(convs) == 1


def _check_bad_lines(doc: Document) -> None:
    for rec in doc.value if doc.kind == "jsonl" else ():
        if isinstance(rec, BadLine):
            raise TranscriptError(rec.error, where=f"line {rec.line}")


def _str_or_empty(doc: Document, m: dict[str, Any], key: str, path: Path) -> str:
    value = m.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise TranscriptError(f"expected a string, got {json_type(value)}", where=where(doc, path + (key,)))


def _arguments(doc: Document, value: Any, path: Path) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return compact_json(value)
    raise TranscriptError(f"expected a string or an object, got {json_type(value)}", where=where(doc, path))


def _openai_calls(doc: Document, m: dict[str, Any], path: Path) -> tuple[ToolCall, ...]:
    raw = m.get("tool_calls")
    calls: list[ToolCall] = []
    if raw is not None:
        if not isinstance(raw, list):
            raise TranscriptError(f"expected a list, got {json_type(raw)}", where=where(doc, path + ("tool_calls",)))
        for j, c in enumerate(raw):
            cpath = path + ("tool_calls", j)
            if not isinstance(c, dict):
                raise TranscriptError(f"expected a tool call object, got {json_type(c)}", where=where(doc, cpath))
            fn = c.get("function") or {}
            if not isinstance(fn, dict):
                raise TranscriptError(f"expected an object, got {json_type(fn)}", where=where(doc, cpath + ("function",)))
            calls.append(ToolCall.of(
                c, _str_or_empty(doc, c, "id", cpath), _str_or_empty(doc, fn, "name", cpath + ("function",)),
                _arguments(doc, fn.get("arguments"), cpath + ("function", "arguments")),
                str_or(c.get("type"), "function")))
    legacy = m.get("function_call")
    if isinstance(legacy, dict):
        calls.append(
            ToolCall(
                id="",
                name=_str_or_empty(doc, legacy, "name", path + ("function_call",)),
                arguments=_arguments(doc, legacy.get("arguments"), path + ("function_call", "arguments")),
            )
        )
    return tuple(calls)


def _role(doc: Document, m: Any, path: Path) -> str:
    if not isinstance(m, dict):
        raise TranscriptError(f"expected a message object, got {json_type(m)}", where=where(doc, path))
    role = m.get("role")
    if not isinstance(role, str):
        if "role" not in m:
            raise TranscriptError("a message has no 'role'", where=where(doc, path))
        raise TranscriptError(f"'role' must be a string, got {json_type(role)}", where=where(doc, path + ("role",)))
    return role


def _note_roles_and_pairs(b: Builder) -> None:
    """Warnings for what is odd but readable: unknown roles, orphan results, reused ids."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, m in enumerate(b.messages):
        if m.role not in _KNOWN_ROLES:
            b.warnings.append(
                f"message {i} has the role '{m.role}'; the policy treats it as an ordinary message"
            )
        for c in m.tool_calls:
            if c.id and c.id in calls:
                b.warnings.append(
                    f"message {i} reuses the tool-call id '{c.id}' of message {calls[c.id]}; "
                    "results are matched to the most recent call"
                )
            if c.id:
                calls[c.id] = i
        if m.role == "tool":
            if not m.tool_call_id and not m.tool_name:
                b.warnings.append(f"message {i} is a tool result with neither a call id nor a tool name")
            elif m.tool_call_id and m.tool_call_id not in calls:
                b.warnings.append(
                    f"message {i} answers the tool call '{m.tool_call_id}', which no earlier message made"
                )
            answered.add(m.tool_call_id)
    unanswered = [cid for cid in calls if cid not in answered]
    if unanswered:
        b.warnings.append(
            f"{len(unanswered)} tool call(s) have no result in the transcript (e.g. '{unanswered[0]}')"
        )


def read_openai(doc: Document, conv: Conversation, b: Builder, *, eino: bool) -> None:
    legacy_noted = False
    for path, m in conv.items:
        role = _role(doc, m, path)
        if eino:
            b.add(Message.from_dict(m, path=where(doc, path)), [path + ("content",)], path)
            continue
        raw_content = m.get("content")
        if isinstance(raw_content, list):
            for j, part in enumerate(raw_content):
                if isinstance(part, dict) and part.get("type") in ("tool_use", "tool_result"):
                    raise TranscriptError(
                        f"a '{part['type']}' block belongs to Anthropic Messages, not to OpenAI Chat "
                        "Completions (try the anthropic format)",
                        where=where(doc, path + ("content", j)),
                    )
        content = content_text(raw_content, doc, path + ("content",))
        calls = _openai_calls(doc, m, path)
        call_id = _str_or_empty(doc, m, "tool_call_id", path)
        name = _str_or_empty(doc, m, "name", path)
        if role == "function":
            role = "tool"
            if not legacy_noted:
                b.notes.append("legacy 'function' messages are read as tool results")
                legacy_noted = True
        tool_name = ""
        if role == "tool":
            tool_name = _str_or_empty(doc, m, "tool_name", path) or name or b.tool_name_for(call_id)
            name = ""
        # a list of parts: what LangChain counts of it (each image a flat cost, other parts
        # by their repr) is not the text read here, so its count is kept beside the text
        meta = (langchain_facts(raw_content, content, m.get("name"), None, None)
                if isinstance(raw_content, list) else None)
        b.add(
            Message(role=role, content=content, tool_calls=calls, tool_call_id=call_id,
                    tool_name=tool_name, name=name, meta=meta),
            [path + ("content",)],
            path,
        )
    _note_roles_and_pairs(b)


def _anthropic_block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "compaction" and isinstance(block.get("content"), str):
        return str(block["content"])  # the summary the API wrote in place of what came before
    if isinstance(block, dict) and block.get("type") in ("text", "thinking"):
        for key in ("text", "thinking"):
            if isinstance(block.get(key), str):
                return block[key]
    return compact_json(block)


def read_anthropic(doc: Document, conv: Conversation, b: Builder) -> None:
    if conv.system is not None:
        path, value = conv.system
        b.add(Message(role="system", content=content_text(value, doc, path)), [path], path)
    for path, m in conv.items:
        role = _role(doc, m, path)
        if role not in ("user", "assistant"):
            raise TranscriptError(
                f"Anthropic messages have only 'user' and 'assistant' roles, this one is '{role}' "
                "(is it OpenAI Chat Completions or eino? try that format)",
                where=where(doc, path + ("role",)),
            )
        content = m.get("content")
        cpath = path + ("content",)
        if content is None or isinstance(content, str):
            b.add(Message(role=role, content=content or ""), [cpath], path)
            continue
        if not isinstance(content, list):
            raise TranscriptError(
                f"expected a string or a list of content blocks, got {json_type(content)}",
                where=where(doc, cpath),
            )
        read_anthropic_blocks(doc, role, content, cpath, b, origin=path)
    _note_roles_and_pairs(b)


@dataclass(slots=True)
class Reply:
    """An Anthropic assistant message's blocks as read: Claude Code writes one reply over
    several lines (a block a line), and the parts add up to the one message the model
    sent, whose text and calls are its blocks' in order."""

    texts: list[str]
    calls: list[ToolCall]
    thinking: list[str]
    said: list[str]  # the texts but the thinking
    compaction: bool = False
    lines: int = 1

    @classmethod
    def read(cls, doc: Document, blocks: list[Any], cpath: Path) -> Reply:
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[str] = []
        said: list[str] = []
        compaction = False
        for j, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append(
                    ToolCall(
                        id=_str_or_empty(doc, block, "id", cpath + (j,)),
                        name=_str_or_empty(doc, block, "name", cpath + (j,)),
                        arguments=_arguments(doc, block.get("input"), cpath + (j, "input")),
                        _raw=block,
                    )
                )
                continue
            texts.append(_anthropic_block_text(block))
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in ("thinking", "redacted_thinking"):
                thinking.append(texts[-1])
            else:
                said.append(texts[-1])
            compaction = compaction or kind == "compaction"
        # one text per line, as the lines are joined
        return cls(["\n".join(texts)], calls, thinking, ["\n".join(said)], compaction)

    def extend(self, more: Reply) -> None:
        """The next line of the same reply."""
        self.texts += more.texts
        self.calls += more.calls
        self.thinking += more.thinking
        self.said += more.said
        self.compaction = self.compaction or more.compaction
        self.lines += 1

    def message(self, usage: Usage | None = None) -> Message:
        """The reply as one message; its meta holds the thinking blocks and the text
        without them (what a clear_thinking edit leaves), and the API's server-side
        compaction (compact_20260112: later requests drop what came before it)."""
        meta: dict[str, Any] | None = None
        if self.thinking:
            meta = {"thinking": tuple(self.thinking), "without_thinking": "\n".join(t for t in self.said if t)}
        if self.compaction:
            meta = {**(meta or {}), "compaction": {"trigger": "auto", "summary": True,
                                                   "source": "anthropic compaction block"}}
        return Message(role="assistant", content="\n".join(t for t in self.texts if t), tool_calls=tuple(self.calls),
                       meta=meta, usage=usage)


def read_anthropic_blocks(
    doc: Document,
    role: str,
    blocks: list[Any],
    cpath: Path,
    b: Builder,
    *,
    origin: Path,
    extra_slots: Sequence[Path] = (),
) -> list[int]:
    """Map one Anthropic message's blocks to canonical messages; returns their indices.

    Each ``tool_result`` block becomes one tool message whose slot is the block's own
    ``content``; the other blocks of a user message form user messages; an assistant
    message becomes one message with its text and its ``tool_use`` blocks as calls.
    """
    added: list[int] = []
    if role == "assistant":
        added.append(b.add(Reply.read(doc, blocks, cpath).message(), (), origin))
        return added
    pending: list[str] = []

    def flush() -> None:
        if pending:
            added.append(b.add(Message(role=role, content="\n".join(pending)), (), origin))
            pending.clear()

    for j, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            flush()
            bpath = cpath + (j,)
            call_id = _str_or_empty(doc, block, "tool_use_id", bpath)
            text = content_text(block.get("content"), doc, bpath + ("content",))
            added.append(
                b.add(
                    Message(role="tool", content=text, tool_call_id=call_id, tool_name=b.tool_name_for(call_id)),
                    [bpath + ("content",), *extra_slots],
                    bpath,
                )
            )
        else:
            pending.append(_anthropic_block_text(block))
    flush()
    return added


def chat_view(doc: Document) -> Document:
    """A file holding one message object on one line is JSON Lines of one message."""
    if doc.kind == "json" and _is_message(doc.value):
        return doc.as_jsonl() or doc
    return doc


def _reply_key(m: Message) -> tuple[str, ...]:
    """What identifies an assistant reply across requests: its tool-call ids, else its text."""
    return tuple(c.id for c in m.tool_calls) if m.tool_calls else ("text", m.content)


_count = token_count  # one rule for every reader: toolclear.formats._base


def _response_usage(body: dict[str, Any]) -> tuple[tuple[tuple[str, ...], ...], Usage] | None:
    """(the keys of the reply, usage) of a recorded Anthropic or Chat Completions response body."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return None
    model = str_or_none(body.get("model")) or ""
    if isinstance(body.get("content"), list):  # Anthropic Messages
        blocks = [b for b in body["content"] if isinstance(b, dict)]
        ids = tuple(str(b.get("id")) for b in blocks if b.get("type") == "tool_use")
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
        keys = [ids or ("text", text)]
        if not ids and any(b.get("type") in ("compaction", "thinking") for b in blocks):
            # the reply as a later request holds it with its summary and thinking read as text
            keys.append(("text", "\n".join(_anthropic_block_text(b) for b in blocks if b.get("type") != "tool_use")))
        return tuple(keys), Usage(
            input_tokens=_count(usage.get("input_tokens")), output_tokens=_count(usage.get("output_tokens")),
            cache_write_tokens=_count(usage.get("cache_creation_input_tokens")),
            cache_write_1h_tokens=_count(usage["cache_creation"].get("ephemeral_1h_input_tokens"))
            if isinstance(usage.get("cache_creation"), dict) else 0,
            cache_read_tokens=_count(usage.get("cache_read_input_tokens")), model=model,
            source="cassette response usage", compaction=compaction_usage(usage, model))
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):  # Chat Completions
        msg = as_dict(choices[0].get("message"))
        calls = as_list(msg.get("tool_calls"))
        ids = tuple(str(c.get("id")) for c in calls if isinstance(c, dict))
        details = as_dict(usage.get("prompt_tokens_details"))
        prompt, cached = _count(usage.get("prompt_tokens")), _count(details.get("cached_tokens"))
        return ((ids or ("text", str_or_none(msg.get("content")) or "")),), Usage(
            input_tokens=max(prompt - cached, 0), output_tokens=_count(usage.get("completion_tokens")),
            cache_read_tokens=min(cached, prompt), model=model, source="cassette response usage")
    return None


def _cassette_usage(doc: Document) -> dict[tuple[str, ...], Usage]:
    """The usage each recorded response reports, by the reply it produced: a later
    request of the cassette carries that reply as an assistant message."""
    v = doc.value
    out: dict[tuple[str, ...], Usage] = {}
    if doc.kind == "jsonl" or not isinstance(v, dict) or not isinstance(v.get("interactions"), list):
        return out
    for it in v["interactions"]:
        response = it.get("response") if isinstance(it, dict) else None
        body = response.get("parsed_body") if isinstance(response, dict) else None
        found = _response_usage(body) if isinstance(body, dict) else None
        if found is not None:
            for key in found[0]:
                out[key] = found[1]
    return out


class _ChatFamily(FormatReader):
    """Shared reading of every container shape for one message format."""

    def conversations(self, doc: Document) -> list[Conversation] | None:
        return find_conversations(chat_view(doc))

    def convert(self, doc: Document, conv: Conversation, b: Builder) -> None:
        raise NotImplementedError

    def read(self, doc: Document, source: str) -> list[Transcript]:
        doc = chat_view(doc)
        _check_bad_lines(doc)
        convs = self.conversations(doc)
        if convs is None:
            raise TranscriptError(self.expected(doc))
        if _converse(convs):  # read as Anthropic or OpenAI it would hold no tool result: refused, never empty
            raise TranscriptError(CONVERSE)
        recorded = _cassette_usage(doc)
        out = []
        for conv in convs:
            b = Builder(doc)
            self.convert(doc, conv, b)
            for index, m in enumerate(b.messages):
                key = _reply_key(m)
                if m.role == "assistant" and key in recorded:
                    b.set_usage(index, recorded[key])
            out.append(b.build(self.name, id=conv.id, source=source, title=conv.title, container=conv.container))
        return out

    def expected(self, doc: Document) -> str:
        got = json_type(doc.value) if doc.kind != "jsonl" else "JSON Lines without messages"
        return (
            f"expected a list of messages (objects with 'role'), an object with 'messages', "
            f"or a list of runs holding messages; got {got}"
        )


class EinoFormat(_ChatFamily):
    name = "eino"
    label = "eino schema.Message (JSON list, {messages}, or JSON Lines)"
    where_found = "what your eino agent stores: e.g. memory/*.jsonl of schema.Message"
    tool_result = "a message with role 'tool' (its tool_name, or '' when omitted)"
    export_changes = "the 'content' of each cleared tool message"

    def sniff(self, doc: Document) -> bool:
        convs = self.conversations(doc)
        return convs is not None and bool(convs) and not _anthropic_score(convs) and _eino_score(
            chat_view(doc), convs)

    def convert(self, doc: Document, conv: Conversation, b: Builder) -> None:
        read_openai(doc, conv, b, eino=True)


class OpenAIFormat(_ChatFamily):
    name = "openai"
    label = "OpenAI Chat Completions (messages list or request body)"
    aliases = ("openai-chat", "chat-completions")
    where_found = "request bodies you log, fine-tuning JSONL, benchmark trajectories (tau-bench)"
    tool_result = "a message with role 'tool' (tool name from its matching tool call)"
    export_changes = "the 'content' of each cleared tool message (a list of parts becomes a string)"

    def sniff(self, doc: Document) -> bool:
        convs = self.conversations(doc)
        return convs is not None and bool(convs) and not _anthropic_score(convs)

    def convert(self, doc: Document, conv: Conversation, b: Builder) -> None:
        read_openai(doc, conv, b, eino=False)


class AnthropicFormat(_ChatFamily):
    name = "anthropic"
    label = "Anthropic Messages (messages list or request body)"
    aliases = ("anthropic-messages", "claude-api")
    where_found = ("request bodies you log; API cassettes (VCR YAML) recorded by test suites (parsed_body, or "
                   "the body as the JSON text vcrpy keeps)")
    tool_result = "each 'tool_result' content block (tool name from the matching 'tool_use')"
    export_changes = "the 'content' of each cleared tool_result block, and nothing else"

    def sniff(self, doc: Document) -> bool:
        convs = self.conversations(doc)
        return convs is not None and bool(convs) and _anthropic_score(convs)

    def convert(self, doc: Document, conv: Conversation, b: Builder) -> None:
        read_anthropic(doc, conv, b)
