"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. What the model saw are the
``response_item`` lines: ``message`` items, ``function_call`` / ``custom_tool_call`` /
``local_shell_call`` items (the calls of one reply are merged into one assistant
message) and their ``*_output`` items (the tool results). ``reasoning`` items are
encrypted and not counted; ``session_meta``, ``turn_context`` and ``event_msg`` lines
are the CLI's own bookkeeping and are kept as they are.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..cost.logfacts import CODEX_SESSION_PREFIXES, codex_kept_users
from ..model import Message, Transcript, Usage
from ._base import Builder, FormatReader, json_type, str_or_none, token_count
from ._doc import BadLine, Document
from .responses import read_item

__all__ = ["CodexFormat"]

# items read as known but not counted: what a search loaded (tool definitions, not a
# tool result to clear), the CLI's undo snapshots, generated images
_NOT_READ = frozenset({"tool_search_call", "tool_search_output", "ghost_snapshot", "image_generation_call",
                       "web_search_call", "compaction"})
_LINE_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


class CodexFormat(FormatReader):
    name = "codex"
    label = "OpenAI Codex CLI rollout (JSON Lines)"
    aliases = ("codex-cli", "codex-rollout")
    where_found = "~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl"
    tool_result = ("each function_call_output / custom_tool_call_output item (tool_search, ghost_snapshot and "
                   "other items are named in a note, not counted)")
    export_changes = "that item's 'output'; every other line byte for byte"
    expects = "JSON Lines of Codex records (objects with 'type' response_item / session_meta / ... and 'payload')"

    def sniff(self, doc: Document) -> bool:
        jl = doc.as_jsonl()
        if jl is None:
            return False
        recs = [r for _, r in jl.records() if isinstance(r, dict)]
        hits = [r for r in recs if str_or_none(r.get("type")) in _LINE_TYPES and isinstance(r.get("payload"), dict)]
        return bool(hits) and len(hits) * 2 >= len(recs)

    def read(self, doc: Document, source: str) -> list[Transcript]:
        jl = doc.as_jsonl()
        assert jl is not None
        b = Builder(jl)
        session = "0"
        skipped_reasoning = 0
        not_read: Counter[str] = Counter()
        usages: dict[int, Usage] = {}
        last_total: Any = None
        model = ""
        for i, rec in enumerate(jl.value):
            if isinstance(rec, BadLine):
                b.warnings.append(f"line {rec.line} is not JSON ({rec.error}); kept as it is")
                continue
            if not isinstance(rec, dict):
                if rec is not None:
                    b.warnings.append(f"line {i + 1} holds {json_type(rec)}, not a record; kept as it is")
                continue
            payload = rec.get("payload")
            if rec.get("type") == "session_meta" and isinstance(payload, dict):
                if isinstance(payload.get("id"), str) and session == "0":
                    session = payload["id"]  # the file's own: a fork repeats its parent's after it
                continue
            if rec.get("type") == "turn_context" and isinstance(payload, dict):
                model = payload["model"] if isinstance(payload.get("model"), str) else model
                continue
            if rec.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "token_count":
                total = self._record_usage(b, rec, payload, usages, last_total, model)
                last_total = total if total is not None else last_total
                continue
            if rec.get("type") == "compacted" and isinstance(payload, dict):
                self._compacted(b, i, payload)
                continue
            if rec.get("type") != "response_item" or not isinstance(payload, dict):
                continue
            kind = read_item(jl, payload, (i, "payload"), b)
            if kind == "reasoning":
                skipped_reasoning += 1
            elif kind is None or kind in _NOT_READ:
                not_read[str_or_none(payload.get("type")) or "(no type)"] += 1
        for index, usage in usages.items():
            b.set_usage(index, usage)
        _note_skipped(b, skipped_reasoning, not_read)
        return [b.build(self.name, id=session, source=source, title="Codex session")]

    @staticmethod
    def _compacted(b: Builder, i: int, payload: dict[str, Any]) -> None:
        """A ``compacted`` line: Codex replaced its history with the initial context, the
        latest user messages (up to 20,000 tokens) and the summary in ``message``. The
        summary is a user message here, its meta naming the messages the compacted history
        kept (the ``replacement_history``'s user messages where the line has one, else the
        ones Codex's rule keeps)."""
        text = payload.get("message")
        if not isinstance(text, str):
            b.warnings.append(f"line {i + 1}: a compacted record without a 'message' string; kept as it is")
            return
        users = [(k, m.content) for k, m in enumerate(b.messages)
                 if m.role == "user" and not (m.meta or {}).get("compaction")]
        history = payload.get("replacement_history")
        if isinstance(history, list):
            texts = {_item_text(item) for item in history if isinstance(item, dict) and item.get("role") == "user"}
            kept = [k for k, text in users if text in texts and not text.startswith(CODEX_SESSION_PREFIXES)]
        else:
            kept = codex_kept_users(users)
        facts = {"trigger": "", "pre_tokens": 0, "summary": True, "kept": tuple(sorted(kept)),
                 "source": "codex compacted"}
        b.add(Message("user", text, meta={"compaction": facts}), [(i, "payload", "message")], (i, "payload"))

    @staticmethod
    def _record_usage(b: Builder, rec: dict[str, Any], payload: dict[str, Any], usages: dict[int, Usage],
                      last_total: Any, model: str = "") -> Any:
        """A ``token_count`` event: the last model call's usage, given to the latest
        assistant message. Codex repeats an event unchanged; a repeat is skipped."""
        info = payload.get("info")
        if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
            return None
        total = info.get("total_token_usage")
        if total == last_total:
            return total
        index = next((k for k in range(len(b.messages) - 1, -1, -1) if b.messages[k].role == "assistant"), None)
        if index is None:
            return total
        last = info["last_token_usage"]
        prompt, cached = _count(last.get("input_tokens")), _count(last.get("cached_input_tokens"))
        usage = Usage(
            input_tokens=max(prompt - cached, 0),  # OpenAI counts cached tokens inside input_tokens
            output_tokens=_count(last.get("output_tokens")),
            cache_read_tokens=min(cached, prompt),
            reasoning_tokens=_count(last.get("reasoning_output_tokens")),
            timestamp=str_or_none(rec.get("timestamp")) or "",
            source="event_msg token_count",
            model=model,
            context_window=_count(info.get("model_context_window")),
        )
        usages[index] = usages[index] + usage if index in usages else usage
        return total


def _note_skipped(b: Builder, reasoning: int, not_read: Counter[str]) -> None:
    if reasoning:
        b.notes.append(f"{reasoning} encrypted reasoning items are not counted (their text is not in the file)")
    if not_read:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(not_read.items()))
        b.notes.append(f"items not counted (kept byte for byte): {kinds}; tool_search_output holds the tool "
                       "definitions a search loaded, ghost_snapshot the CLI's undo snapshot")


_count = token_count  # one rule for every reader: toolclear.formats._base



def _item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""
