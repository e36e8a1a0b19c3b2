"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``).

One event per line. ``user`` and ``assistant`` events carry an Anthropic message in
``message``; they are linked by ``uuid`` / ``parentUuid`` (``logicalParentUuid`` across
a compaction). toolclear rebuilds the main conversation the model saw by walking back
from the last main-line message; subagent lines (``isSidechain: true``) form separate
conversations, one per subagent run. An assistant reply split over several lines (same
``message.id``) becomes one message with all its tool calls.

On export, a cleared result is replaced in its ``tool_result`` block and in the line's
``toolUseResult`` (Claude Code's copy of the same result), so no copy survives. Every
other line, including unknown event types and lines that are not JSON, is kept
byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..model import Message, Transcript
from ._base import Builder, FormatReader, json_type, str_or_none
from ._doc import BadLine, Document
from .chat import read_anthropic_blocks

__all__ = ["ClaudeCodeFormat"]

_EVENT_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "pr-link",
    }
)


def _is_event(rec: Any) -> bool:
    return isinstance(rec, dict) and str_or_none(rec.get("type")) in _EVENT_TYPES and "payload" not in rec


def _message_event(rec: Any) -> bool:
    return (
        isinstance(rec, dict)
        and rec.get("type") in ("user", "assistant")
        and isinstance(rec.get("message"), dict)
    )


class ClaudeCodeFormat(FormatReader):
    name = "claude-code"
    label = "Claude Code session log (JSON Lines)"
    aliases = ("claude", "claudecode", "claude-code-jsonl")
    where_found = "~/.claude/projects/<project>/<session-id>.jsonl"
    tool_result = "each 'tool_result' block in a user line's message.content"
    export_changes = "that block's content and the line's toolUseResult; other lines byte for byte"
    first_is_primary = True
    expects = "JSON Lines of Claude Code events (objects with 'type' user / assistant / ..., 'uuid' and 'message')"

    def sniff(self, doc: Document) -> bool:
        jl = doc.as_jsonl()
        if jl is None:
            return False
        events = [r for _, r in jl.records() if isinstance(r, dict)]
        if not events:
            return False
        claude = [r for r in events if _is_event(r)]
        return bool(claude) and any(
            _message_event(r) or "sessionId" in r or "leafUuid" in r for r in claude
        ) and len(claude) * 2 >= len(events)

    def read(self, doc: Document, source: str) -> list[Transcript]:
        jl = doc.as_jsonl()
        assert jl is not None
        warnings: list[str] = []
        by_uuid: dict[str, int] = {}
        main: list[int] = []
        side: list[int] = []
        unknown = compactions = 0
        for i, rec in enumerate(jl.value):
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
                by_uuid[uid] = i
            if str_or_none(rec.get("type")) not in _EVENT_TYPES:
                unknown += 1
            if rec.get("subtype") == "compact_boundary":
                compactions += 1
            if rec.get("type") in ("user", "assistant"):
                if not isinstance(rec.get("message"), dict):
                    warnings.append(
                        f"line {i + 1}: a {rec.get('type')} event without a message object; kept as it is"
                    )
                    continue
                msg = rec["message"]
                if "content" not in msg:
                    warnings.append(f"line {i + 1}: message has no 'content'; kept as it is")
                    continue
                (side if rec.get("isSidechain") is True else main).append(i)

        main = self._active_branch(jl, main, by_uuid)
        groups = self._sidechains(jl, side, by_uuid)

        session = next(
            (jl.value[i].get("sessionId") for i in main if isinstance(jl.value[i].get("sessionId"), str)),
            None,
        )
        out = [self._build(jl, main, source, id=session or "main", title="main conversation",
                           warnings=warnings, unknown=unknown)]
        if compactions:
            out[0] = replace(out[0], notes=out[0].notes + (
                f"Claude Code compacted this session {compactions} time(s); the messages from before "
                "each compaction are included, so you see the whole run",))
        for n, lines in enumerate(groups, start=1):
            first = jl.value[lines[0]]
            agent = first.get("agentId") if isinstance(first.get("agentId"), str) else None
            out.append(
                self._build(jl, lines, source, id=f"sidechain-{n}" + (f"-{agent}" if agent else ""),
                            title=f"subagent run {n}", warnings=[], unknown=0)
            )
        return out

    @staticmethod
    def _parent(rec: dict[str, Any]) -> Any:
        parent = rec.get("parentUuid")
        if parent is None:
            parent = rec.get("logicalParentUuid")
        return parent

    def _active_branch(self, jl: Document, main: list[int], by_uuid: dict[str, int]) -> list[int]:
        """The lines on the path from the last main-line message back to the root."""
        linked = sum(1 for i in main if str_or_none(self._parent(jl.value[i])) in by_uuid)
        if not main or linked * 2 < len(main) - 1:
            return main  # (almost) no links: file order is all there is
        on_path: set[int] = set()
        i: int | None = main[-1]
        while i is not None and i not in on_path:
            on_path.add(i)
            parent = self._parent(jl.value[i])
            nxt = by_uuid.get(parent) if isinstance(parent, str) else None
            if nxt is None and isinstance(parent, str):
                # a dangling link (e.g. a compaction whose parent was never written):
                # carry on from the last main-line message before this line
                before = [line for line in main if line < i and line not in on_path]
                nxt = before[-1] if before else None
            i = nxt
        kept = [i for i in main if i in on_path]
        return kept if kept else main

    def _sidechains(self, jl: Document, side: list[int], by_uuid: dict[str, int]) -> list[list[int]]:
        groups: dict[int, list[int]] = {}
        root_of: dict[int, int] = {}
        for i in side:
            j, seen = i, set()
            while True:
                seen.add(j)
                parent = jl.value[j].get("parentUuid")
                k = by_uuid.get(parent) if isinstance(parent, str) else None
                if k is None or k in seen or jl.value[k].get("isSidechain") is not True:
                    break
                if k in root_of:
                    j = root_of[k]
                    break
                j = k
            root_of[i] = j
            groups.setdefault(j, []).append(i)
        return list(groups.values())

    def _build(
        self,
        jl: Document,
        lines: list[int],
        source: str,
        *,
        id: str,
        title: str,
        warnings: list[str],
        unknown: int,
    ) -> Transcript:
        b = Builder(jl)
        b.warnings.extend(warnings)
        by_reply: dict[str, int] = {}
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
            reply = msg.get("id") if role == "assistant" else None
            if isinstance(reply, str) and reply in by_reply:
                index = by_reply[reply]
                extra = Builder(jl)
                read_anthropic_blocks(jl, role, content, cpath, extra, origin=(i,))
                part = extra.messages[0]
                b.extend_calls(index, part.tool_calls, part.content)
                merged += 1
                continue
            results = sum(1 for blk in content if isinstance(blk, dict) and blk.get("type") == "tool_result")
            extra_slots = [(i, "toolUseResult")] if results == 1 and "toolUseResult" in rec else []
            added = read_anthropic_blocks(jl, role, content, cpath, b, origin=(i,), extra_slots=extra_slots)
            if isinstance(reply, str) and added:
                by_reply[reply] = added[0]
        if merged:
            b.notes.append(f"{merged} assistant lines continuing an earlier reply were merged into it")
        if unknown:
            b.notes.append(f"{unknown} lines of event types toolclear does not know are kept as they are")
        b.notes.append("tool results are rewritten in message.content and in toolUseResult on export")
        return b.build(self.name, id=id, source=source, title=title, container="claude-code session")
