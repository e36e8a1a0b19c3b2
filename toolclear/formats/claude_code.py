"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``).

One event per line. ``user`` and ``assistant`` events carry an Anthropic message in
``message``; they are linked by ``uuid`` / ``parentUuid`` (``logicalParentUuid`` across
a compaction). toolclear rebuilds the main conversation the model saw by walking back
from the last main-line message and adding back the results of parallel tool calls,
which sit on side branches of that path (see ``main_line``); subagent lines (``isSidechain: true``) form separate
conversations, one per subagent run. An assistant reply split over several lines (same
``message.id``) becomes one message with all its tool calls.

On export, a cleared result is replaced in its ``tool_result`` block and in the line's
``toolUseResult`` (Claude Code's copy of the same result: its string, or the result
text inside its object, so each field keeps its type), so no copy survives. Every
other line, including unknown event types and lines that are not JSON, is kept
byte for byte.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import Message, Transcript, Usage
from ._base import (
    TEXT_INSIDE,
    Builder,
    FormatReader,
    Origins,
    compaction_usage,
    json_type,
    str_or_none,
    token_count,
)
from ._doc import BadLine, Document
from .chat import Reply, read_anthropic_blocks

__all__ = ["ClaudeCodeFormat", "Lines", "has_usage", "is_message_event", "main_line", "read_usage", "select_lines",
           "sidechains"]

_KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "pr-link",
        "attachment",
        "permission-mode",
        "mode",
        "ai-title",
        "custom-title",
        "tag",
        "agent-name",
    }
)
"""Line types seen in Claude Code logs; others are kept byte for byte and named in a note."""

def is_message_event(rec: Any) -> bool:
    """A user or assistant line of a Claude Code session, whatever its version and
    whatever other line types the file holds."""
    return (
        isinstance(rec, dict)
        and rec.get("type") in ("user", "assistant")
        and ("uuid" in rec or "sessionId" in rec or "parentUuid" in rec)
        and "payload" not in rec
    )


_int = token_count  # one rule for every reader: toolclear.formats._base


def has_usage(rec: dict[str, Any]) -> bool:
    """Whether ``read_usage`` finds a usage on this line."""
    msg = rec.get("message")
    return isinstance(msg, dict) and isinstance(msg.get("usage"), dict)


def read_usage(rec: dict[str, Any]) -> Usage | None:
    """An assistant line's ``message.usage`` (Anthropic's fields) as a ``Usage``."""
    if not has_usage(rec):
        return None
    msg = rec["message"]
    usage = msg["usage"]
    return Usage(
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        cache_write_tokens=_int(usage.get("cache_creation_input_tokens")),
        cache_write_1h_tokens=_int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
        if isinstance(usage.get("cache_creation"), dict) else 0,
        cache_read_tokens=_int(usage.get("cache_read_input_tokens")),
        model=str_or_none(msg.get("model")) or "",
        timestamp=str_or_none(rec.get("timestamp")) or "",
        source="message.usage",
        # ccusage's key: a resumed session repeats the calls it resumed, ids and all
        call_id=f"{msg['id']}:{rec['requestId']}" if isinstance(msg.get("id"), str)
        and isinstance(rec.get("requestId"), str) else "",
        compaction=compaction_usage(usage, str_or_none(msg.get("model")) or ""),
    )


@dataclass
class Lines:
    """The lines of a session worth reading, found in one pass: message lines of the
    main line and of subagents, each line's uuid, the compaction boundaries, and what
    the reader says of the rest."""

    main: list[int] = field(default_factory=list)
    side: list[int] = field(default_factory=list)
    by_uuid: dict[str, int] = field(default_factory=dict)
    compactions: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)


def select_lines(records: Sequence[Any]) -> Lines:
    """Sort a session's records (parsed lines: None when blank) into ``Lines`` (the
    full read and the sessions listing's usage-only read share it: both see the same lines)."""
    out = Lines()
    warnings = out.warnings
    for i, rec in enumerate(records):
        if rec is None:
            continue
        if isinstance(rec, BadLine):
            warnings.append(f"line {rec.line} is not JSON ({rec.error}); kept as it is")
            continue
        if not isinstance(rec, dict):
            warnings.append(f"line {i + 1} holds {json_type(rec)}, not an event; kept as it is")
            continue
        uid = rec.get("uuid")
        if isinstance(uid, str):
            out.by_uuid[uid] = i
        kind = str_or_none(rec.get("type"))
        if kind not in _KNOWN_TYPES:
            out.unknown[kind if kind is not None else "(no type)"] += 1
        if rec.get("subtype") == "compact_boundary":
            out.compactions.append(i)
        if kind in ("user", "assistant"):
            if not isinstance(rec.get("message"), dict):
                warnings.append(f"line {i + 1}: a {kind} event without a message object; kept as it is")
                continue
            if "content" not in rec["message"]:
                warnings.append(f"line {i + 1}: message has no 'content'; kept as it is")
                continue
            (out.side if rec.get("isSidechain") is True else out.main).append(i)
    return out


class ClaudeCodeFormat(FormatReader):
    name = "claude-code"
    label = "Claude Code session log (JSON Lines)"
    aliases = ("claude", "claudecode", "claude-code-jsonl")
    where_found = "~/.claude/projects/<project>/<session-id>.jsonl (and <session>/subagents/agent-*.jsonl)"
    tool_result = "each 'tool_result' block in a user line's message.content"
    export_changes = ("that block's content and the result text inside the line's toolUseResult "
                      "(every field keeps its type); other lines byte for byte")
    first_is_primary = True
    expects = "JSON Lines of Claude Code events (objects with 'type' user / assistant, 'uuid' and 'message')"

    def sniff(self, doc: Document) -> bool:
        jl = doc.as_jsonl()
        if jl is None:
            return False
        return any(is_message_event(r) for _, r in jl.records())

    def read(self, doc: Document, source: str) -> list[Transcript]:
        jl = doc.as_jsonl()
        assert jl is not None
        sel = select_lines(jl.value)
        warnings, unknown, compactions = sel.warnings, sel.unknown, sel.compactions
        main = main_line(jl.value, sel.main, sel.by_uuid)
        groups = sidechains(jl.value, sel.side, sel.by_uuid)

        session = next(
            (jl.value[i].get("sessionId") for i in main if isinstance(jl.value[i].get("sessionId"), str)),
            None,
        )
        out: list[Transcript] = []
        if main or not groups:
            out.append(self._build(jl, main, source, id=session or "main", title="main conversation",
                                   warnings=warnings, unknown=unknown))
            if compactions:
                marks = _compaction_marks(out[0], compactions)
                out[0] = replace(out[0], marks=marks, messages=_with_compaction_meta(out[0], marks, [
                    jl.value[b] for b in compactions]), notes=out[0].notes + (
                    f"Claude Code compacted this session {len(compactions)} time(s); the messages from before "
                    "each compaction are included, so you see the whole run",))
        for n, lines in enumerate(groups, start=1):
            first = jl.value[lines[0]]
            agent = str_or_none(first.get("agentId"))
            lead = not out
            out.append(
                self._build(jl, lines, source, id=f"sidechain-{n}" + (f"-{agent}" if agent else ""),
                            title=f"subagent run {n}", warnings=warnings if lead else [],
                            unknown=unknown if lead else Counter())
            )
        return out

    def _build(
        self,
        jl: Document,
        lines: list[int],
        source: str,
        *,
        id: str,
        title: str,
        warnings: list[str],
        unknown: Counter[str],
    ) -> Transcript:
        b = Builder(jl)
        b.warnings.extend(warnings)
        by_reply: dict[str, int] = {}
        replies: dict[int, Reply] = {}  # each reply's lines so far, made one message at the end
        usages: dict[int, dict[str, Any]] = {}  # the line whose usage each message takes (read once, at the end)
        merged = 0
        for i in lines:
            rec = jl.value[i]
            msg = rec["message"]
            role = rec["type"]
            content = msg.get("content")
            cpath = (i, "message", "content")
            if isinstance(content, str) or content is None:
                b.add(Message(role=role, content=content or ""), [cpath], (i,))
                continue
            if not isinstance(content, list):
                b.warnings.append(f"line {i + 1}: message content is {json_type(content)}; kept as it is")
                continue
            if role == "assistant":
                reply = msg.get("id")
                part = Reply.read(jl, content, cpath)
                index = by_reply.get(reply) if isinstance(reply, str) else None
                if index is None:
                    index = b.add(part.message(), (), (i,))
                    if isinstance(reply, str):
                        by_reply[reply] = index
                        replies[index] = part
                else:
                    replies[index].extend(part)
                    b.note_calls(part.calls)
                    merged += 1
                if has_usage(rec):  # each line of a split reply repeats it; the last is final
                    usages[index] = rec
                continue
            results = sum(1 for blk in content if isinstance(blk, dict) and blk.get("type") == "tool_result")
            # the result's text inside toolUseResult too: which of its strings hold it is
            # worked out on export (TEXT_INSIDE), from the line and the result read here
            extra_slots = [(i, "toolUseResult", TEXT_INSIDE)] if results == 1 and "toolUseResult" in rec else []
            read_anthropic_blocks(jl, role, content, cpath, b, origin=(i,), extra_slots=extra_slots)
        for index, reply_ in replies.items():
            if reply_.lines > 1:
                line = usages.pop(index, None)
                b.messages[index] = reply_.message(read_usage(line) if line is not None else None)
        for index, line in usages.items():
            usage = read_usage(line)
            if usage is not None:
                b.set_usage(index, usage)
        if merged:
            b.notes.append(f"{merged} assistant lines continuing an earlier reply were merged into it")
        if unknown:
            kinds = ", ".join(f"'{k}' ({n})" for k, n in unknown.most_common(8))
            more = f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""
            b.notes.append(f"{sum(unknown.values())} lines of types toolclear does not know ({kinds}{more}) "
                           "are kept byte for byte")
        b.notes.append("tool results are rewritten in message.content and in toolUseResult on export")
        return b.build(self.name, id=id, source=source, title=title, container="claude-code session")


def _parent(rec: dict[str, Any]) -> Any:
    parent = rec.get("parentUuid")
    if parent is None:
        parent = rec.get("logicalParentUuid")
    return parent


def main_line(records: Sequence[Any], main: list[int], by_uuid: dict[str, int]) -> list[int]:
    """The lines the model saw on the way to the last main-line message.

    The log is a tree: each line points to its parent. The path back from the last
    message is the active branch, but parallel tool calls fork it: each result line
    points to the line of *its* call, so the results of the other calls of the same
    reply sit on side branches. Those are added back: every line whose parent is on
    the path and that answers a call on the path, or continues a reply on it (same
    message id), and so on from there. File order is the order the model saw them.
    """
    linked = sum(1 for i in main if str_or_none(_parent(records[i])) in by_uuid)
    if not main or linked * 2 < len(main) - 1:
        return main  # (almost) no links: file order is all there is
    main_set = set(main)
    on_path: set[int] = set()
    i: int | None = main[-1]
    while i is not None and i not in on_path:
        on_path.add(i)
        parent = _parent(records[i])
        nxt = by_uuid.get(parent) if isinstance(parent, str) else None
        if nxt is None and (isinstance(parent, str) or _answers(records[i])):
            # a dangling link (e.g. a compaction whose parent was never written), or a
            # tool result with no parent at all (a result cannot start a conversation):
            # carry on from the last main-line message before this line
            k = bisect_left(main, i) - 1
            while k >= 0 and main[k] in on_path:
                k -= 1
            nxt = main[k] if k >= 0 else None
        i = nxt
    children: dict[int, list[int]] = {}
    # every linked line (a side branch may pass through a non-message line), and every
    # message line, with a uuid or not (a result line written without one still names its parent)
    for j in sorted(set(by_uuid.values()).union(main)):
        parent = _parent(records[j])
        parent_line = by_uuid.get(parent) if isinstance(parent, str) else None
        if parent_line is not None:
            children.setdefault(parent_line, []).append(j)
    calls: set[str] = set()
    replies: set[str] = set()
    for j in on_path:
        _collect(records[j], calls, replies)
    queue = list(on_path)
    passed: set[int] = set()
    while queue:
        k = queue.pop()
        for j in children.get(k, ()):
            if j in on_path or j in passed:
                continue
            if j not in main_set:
                # an attachment, hook or progress line between a call and its result
                # (newer Claude Code links a parallel call's result through one): the
                # branch goes on through it, and what joins is judged as below
                if records[j].get("type") not in ("user", "assistant"):
                    passed.add(j)
                    queue.append(j)
                continue
            if _joins(records[j], calls, replies):
                on_path.add(j)
                _collect(records[j], calls, replies)
                queue.append(j)
    kept = [i for i in main if i in on_path]
    return kept if kept else main


def _answers(rec: dict[str, Any]) -> bool:
    """A user line holding a tool result."""
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return rec.get("type") == "user" and isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _collect(rec: dict[str, Any], calls: set[str], replies: set[str]) -> None:
    msg = rec.get("message")
    if rec.get("type") != "assistant" or not isinstance(msg, dict):
        return
    reply = str_or_none(msg.get("id"))
    if reply:
        replies.add(reply)
    content = msg.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                cid = str_or_none(block.get("id"))
                if cid:
                    calls.add(cid)


def _joins(rec: dict[str, Any], calls: set[str], replies: set[str]) -> bool:
    """A side-branch line the model saw: a result of a call on the path, or more of a reply on it."""
    msg = rec.get("message")
    if not isinstance(msg, dict):
        return False
    if rec.get("type") == "assistant":
        return str_or_none(msg.get("id")) in replies
    content = msg.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" and str_or_none(b.get("tool_use_id")) in calls
        for b in content
    )


def sidechains(records: Sequence[Any], side: list[int], by_uuid: dict[str, int]) -> list[list[int]]:
    """Subagent lines grouped by the first sidechain line of their chain (linear:
    every line's root is memoised along the path that found it)."""
    groups: dict[int, list[int]] = {}
    root_of: dict[int, int] = {}
    for i in side:
        path: list[int] = []
        seen: set[int] = set()
        j = i
        while j not in root_of:
            path.append(j)
            seen.add(j)
            parent = records[j].get("parentUuid")
            k = by_uuid.get(parent) if isinstance(parent, str) else None
            if k is None or k in seen or records[k].get("isSidechain") is not True:
                root = j
                break
            j = k
        else:
            root = root_of[j]
        for p in path:
            root_of[p] = root
        groups.setdefault(root, []).append(i)
    return [sorted(g) for g in groups.values()]


def _with_compaction_meta(t: Transcript, marks: tuple[tuple[int, str], ...],
                          lines: list[dict[str, Any]]) -> tuple[Message, ...]:
    """The messages, the first after each compaction holding what its boundary line
    recorded (``compactMetadata``: trigger, pre-compaction tokens) in its meta."""
    msgs = list(t.messages)
    by_label = {label: k for k, label in marks}
    for n, rec in enumerate(lines, start=1):
        k = by_label.get(f"compaction {n}")
        if k is None:
            continue
        meta = rec.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        trigger = meta.get("trigger")
        pre = meta.get("preTokens")
        facts = {"trigger": trigger if trigger in ("auto", "manual") else "",
                 "pre_tokens": token_count(pre) if isinstance(pre, (int, float)) and not isinstance(pre, bool) else 0,
                 "source": "claude-code compact_boundary"}
        m = msgs[k]
        msgs[k] = replace(m, meta={**(m.meta or {}), "compaction": facts})
    return tuple(msgs)


def _compaction_marks(t: Transcript, boundaries: list[int]) -> tuple[tuple[int, str], ...]:
    """Each compaction as the index of the first message after its boundary line."""
    origins = t.origins
    if not isinstance(origins, Origins):  # this reader's Builder always makes them
        return ()
    lines = [-1 if (k := origins.line(i)) is None else k for i in range(len(origins))]
    marks = []
    for n, b in enumerate(boundaries, start=1):
        k = bisect_left(lines, b + 1)
        if k < len(lines):
            marks.append((k, f"compaction {n}"))
    return tuple(marks)
