"""OpenAI Responses API items, and the files that hold them.

The Responses API sends a list of items instead of messages: ``message`` items (or bare
``{role, content}``), ``function_call`` / ``custom_tool_call`` / ``local_shell_call``
items, their ``*_output`` items (the tool results, paired by ``call_id``), and
``reasoning`` items (often encrypted; not counted). Codex CLI rollouts carry the same
items, so ``read_item`` serves both readers.

``openai-responses`` reads: a list of items, a request body with ``input`` (and
``instructions``), JSON Lines of items or of request bodies, the request bodies of an
API cassette, and the OpenAI Agents SDK's saved items: a session's item list, or a
``RunState`` (``originalInput`` then each ``generatedItems[].rawItem``; the Python SDK
writes ``original_input``, ``generated_items[].raw_item``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..errors import TranscriptError
from ..model import Message, ToolCall, Transcript
from ._base import (
    Builder,
    FormatReader,
    cassette_requests,
    compact_json,
    content_text,
    str_or,
    str_or_none,
    where,
)
from ._doc import Document, Path

__all__ = ["CALLS", "OUTPUTS", "OpenAIResponsesFormat", "read_item"]

CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action",
         "shell_call": "action", "apply_patch_call": "operation",
         "program": "code"}  # programmatic tool calling: the program the model wrote
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                     "shell_call_output", "apply_patch_call_output", "program_output",
                     "function_call_result"})  # the last: the JS Agents SDK's RunState
_OTHER = frozenset({"reasoning", "web_search_call", "file_search_call", "computer_call", "computer_call_output",
                    "computer_call_result", "image_generation_call", "code_interpreter_call", "mcp_call",
                    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "item_reference",
                    "compaction", "tool_search_call", "tool_search_output", "hosted_tool_call", "unknown"})
"""Items read past: hosted tools' calls and outputs (the provider runs them; tool search
outputs are tool definitions, which a clear would leave unreplayable), screenshots,
reasoning, compaction."""
_HOSTED = _OTHER - {"reasoning", "item_reference", "compaction", "unknown"}
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "refusal"})


def _is_item(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    kind = str_or_none(value.get("type"))
    if kind in CALLS or kind in OUTPUTS or kind in _OTHER:
        return True
    return (kind == "message" or kind is None) and isinstance(value.get("role"), str) and "content" in value


def _is_responses_item(value: Any) -> bool:
    """An item only the Responses API has (a bare {role, content} is Chat Completions too)."""
    return isinstance(value, dict) and (
        str_or_none(value.get("type")) in CALLS or str_or_none(value.get("type")) in OUTPUTS
        or str_or_none(value.get("type")) in _OTHER
        or (value.get("type") == "message" and isinstance(value.get("role"), str))
        or (isinstance(value.get("content"), list) and any(
            isinstance(p, dict) and p.get("type") in ("input_text", "output_text") for p in value["content"])))


def _output(output: Any, path: Path) -> tuple[str, list[Path], list[Path]]:
    """(text, slot, blanks) of an output: a string, ``{content}``, or a list of parts
    (the first text part takes a new text, the others are emptied; with an image or file
    part among them, the new text replaces the whole list)."""
    if isinstance(output, str):
        return output, [path], []
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"], [path + ("content",)], []
    if isinstance(output, list):
        texts, paths = [], []
        for j, part in enumerate(output):
            if isinstance(part, dict) and str_or_none(part.get("type")) in _TEXT_PARTS and isinstance(
                    part.get("text"), str):
                if part["text"]:
                    texts.append(part["text"])
                paths.append(path + (j, "text"))
            else:
                texts.append(compact_json(part))
        if len(paths) < len(output):
            # an image or file part beside the text: clearing replaces the whole output with
            # the new text (a string output is valid), so nothing counted as cleared stays behind
            return "\n".join(texts), [path], []
        return "\n".join(texts), paths[:1], paths[1:]
    return (compact_json(output) if output is not None else ""), [path], []


def _shell_output(output: Any, path: Path) -> tuple[str, list[Path], list[Path]] | None:
    """A ``shell_call_output``'s list of ``{stdout, stderr, outcome}``: the text is every
    stdout and stderr; a new text goes in the first stdout, the others are emptied (the
    item keeps the shape the SDK replays)."""
    if not isinstance(output, list) or not output or not all(
            isinstance(o, dict) and isinstance(o.get("stdout", ""), str) and isinstance(o.get("stderr", ""), str)
            for o in output):
        return None
    texts = [t for o in output for t in (o.get("stdout", ""), o.get("stderr", "")) if t]
    slots = [path + (j, key) for j, o in enumerate(output) for key in ("stdout", "stderr") if key in o]
    return "\n".join(texts), slots[:1], slots[1:]


def read_item(doc: Document, item: dict[str, Any], path: Path, b: Builder) -> str | None:
    """Add one Responses item to ``b`` (the calls of one reply join one assistant
    message); returns its kind, or None when it is not an item this reads."""
    kind = str_or_none(item.get("type")) or ("message" if isinstance(item.get("role"), str) else None)
    if kind == "message":
        role = str_or(item.get("role"), "user")
        text = content_text(item.get("content"), doc, path + ("content",))
        b.add(Message(role=role, content=text), [path + ("content",)], path)
    elif kind in CALLS:
        raw_args: Any = item.get(CALLS[kind])
        args = raw_args if isinstance(raw_args, str) else compact_json(raw_args) if raw_args is not None else ""
        name = str_or(item.get("name"), kind).replace("_call", "")
        # the Python SDK's call_id, the JS SDK's callId (its id is the item's own fc_... id)
        call_id = item.get("call_id") or item.get("callId") or item.get("id") or ""
        call = ToolCall(id=str(call_id), name=name, arguments=args)
        last = b.messages[-1] if b.messages else None
        if last is not None and last.role == "assistant":
            b.extend_calls(len(b.messages) - 1, [call])
        else:
            b.add(Message(role="assistant", tool_calls=(call,)), (), path)
    elif kind in OUTPUTS:
        call_id = str(item.get("call_id") or item.get("callId") or "")
        output = item.get("output")
        shell = _shell_output(output, path + ("output",)) if kind == "shell_call_output" else None
        if kind == "function_call_result" and isinstance(output, dict) and isinstance(output.get("text"), str):
            # the JS SDK's {type: "text", text}: the text is what the model is sent
            text, slots, blanks = output["text"], [path + ("output", "text")], list[Path]()
        elif shell is not None:
            text, slots, blanks = shell
        elif kind == "program_output" and "output" not in item and isinstance(item.get("result"), str):
            text, slots, blanks = item["result"], [path + ("result",)], []  # the Python SDK's key
        else:
            text, slots, blanks = _output(output, path + ("output",))
        b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=b.tool_name_for(call_id)),
              slots, path, blanks=blanks)
    elif kind not in _OTHER:
        return None
    return kind


ItemList = tuple[str, list[tuple[Path, Any]], str | None, str]
"""(id, items with their paths, instructions, container) of one conversation."""


def _body(body: dict[str, Any], base: Path, ident: str, container: str) -> ItemList:
    items = [(base + ("input", j), x) for j, x in enumerate(body["input"])]
    return ident, items, str_or_none(body.get("instructions")), container


_RUN_STATE_KEYS = (("originalInput", "generatedItems", "rawItem"),  # the JS SDK
                   ("original_input", "generated_items", "raw_item"))  # the Python SDK


def _run_state_keys(v: dict[str, Any]) -> tuple[str, str, str] | None:
    return next((keys for keys in _RUN_STATE_KEYS if isinstance(v.get(keys[1]), list)), None)


def _run_state(v: dict[str, Any]) -> ItemList:
    """An Agents SDK RunState (the JS SDK's camelCase keys or the Python SDK's
    snake_case ones): the original input, then each generated item's raw item."""
    keys = _run_state_keys(v)
    assert keys is not None
    original_key, generated_key, raw_key = keys
    items: list[tuple[Path, Any]] = []
    original = v.get(original_key)
    if isinstance(original, list):
        items += [((original_key, j), x) for j, x in enumerate(original)]
    elif isinstance(original, str):
        items.append(((original_key,), {"role": "user", "content": original}))
    calls: set[str] = set()
    for j, gen in enumerate(v[generated_key]):
        if isinstance(gen, dict) and isinstance(gen.get(raw_key), dict):
            raw = gen[raw_key]
            call_id = str(raw.get("call_id") or raw.get("callId") or "")
            if gen.get("type") == "tool_approval_item" and call_id in calls:
                continue  # the call awaiting approval, already read from its tool_call_item
            if str_or_none(raw.get("type")) in CALLS and call_id:
                calls.add(call_id)
            items.append(((generated_key, j, raw_key), raw))
    return "0", items, None, "Agents SDK run state"


def _item_lists(doc: Document) -> Iterator[ItemList]:
    """Every item list in the document."""
    v = doc.value
    if doc.kind == "jsonl":
        recs = list(doc.records())
        if recs and all(_is_item(r) for _, r in recs):
            yield "0", [((i,), r) for i, r in recs], None, ""
        else:
            yield from (_body(r, (i,), f"line {i + 1}", "JSON Lines of request bodies") for i, r in recs
                        if isinstance(r, dict) and isinstance(r.get("input"), list))
    elif isinstance(v, list):
        yield "0", [((j,), x) for j, x in enumerate(v)], None, ""
    elif isinstance(v, dict) and isinstance(v.get("input"), list):
        yield _body(v, (), "0", "")
    elif isinstance(v, dict) and _run_state_keys(v) is not None:
        yield _run_state(v)
    elif isinstance(v, dict) and isinstance(v.get("interactions"), list):
        yield from (_body(body, path, f"request {path[1]}", "API cassette (request bodies)")
                    for path, body in cassette_requests(v) if isinstance(body.get("input"), list))


class OpenAIResponsesFormat(FormatReader):
    name = "openai-responses"
    label = "OpenAI Responses API items (input list, request body, Agents SDK items, cassette)"
    aliases = ("responses", "openai-agents", "agents-sdk")
    where_found = ("Responses request bodies you log; OpenAI Agents SDK sessions and saved RunState; "
                   "API cassettes")
    tool_result = ("each function_call_output / custom_tool_call_output item, and the JS Agents SDK's "
                   "function_call_result (paired by call_id / callId)")
    export_changes = "that item's 'output' (its first text part when it is a list of parts)"
    expects = "a list of Responses items, a request body with 'input', a RunState, or a cassette of such requests"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if isinstance(v, dict) and (keys := _run_state_keys(v)) is not None and (
                "$schemaVersion" in v or keys[0] in v):
            return True  # a RunState, whatever its items (none yet, or kinds newer than this reader)
        for _, items, _, _ in _item_lists(doc):
            values = [x for _, x in items]
            if values and all(_is_item(x) for x in values) and any(_is_responses_item(x) for x in values):
                return True
        return False

    def read(self, doc: Document, source: str) -> list[Transcript]:
        out = []
        for ident, items, instructions, container in _item_lists(doc):
            b = Builder(doc)
            if instructions:
                b.add(Message(role="system", content=instructions), (), ())
            reasoning = 0
            hosted: Counter[str] = Counter()
            for path, item in items:
                if not isinstance(item, dict):
                    raise TranscriptError("expected a Responses item (an object)", where=where(doc, path))
                kind = read_item(doc, item, path, b)
                if kind is None:
                    b.warnings.append(f"{where(doc, path)}: an item of type '{item.get('type')}' is not read")
                elif kind == "reasoning":
                    reasoning += 1
                elif kind in _HOSTED:
                    hosted[kind] += 1
            if reasoning:
                b.notes.append(f"{reasoning} reasoning items are not counted (often encrypted)")
            if hosted:
                b.notes.append(f"{sum(hosted.values())} items of tools the provider runs ("
                               + ", ".join(sorted(hosted)) + ") are not counted or cleared")
            out.append(b.build(self.name, id=ident, source=source, title="Responses conversation",
                               container=container))
        if not out:
            raise TranscriptError(self.expects)
        return out
