"""LangChain v1's ``ClearToolUsesEdit`` in ``ContextEditingMiddleware``.

Applied to a deep copy of the request before each model call and never written back,
so every call starts from the full history again. Once LangChain's approximate count
of the messages passes ``trigger``, every tool message but the last ``keep`` becomes
``placeholder`` (with ``clear_tool_inputs``, its call's arguments become ``{}``), in
order, stopping as soon as ``clear_at_least`` tokens have been reclaimed.

Faithful to ``langchain.agents.middleware.context_editing`` of langchain 1.5 and to
``count_tokens_approximately`` of langchain-core 1.8; a differential test runs the
real package on generated conversations and the real transcripts.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from . import checks
from ._engine import Pairing, with_inputs_cleared
from .errors import ConfigError
from .model import Message, MessageStatus

__all__ = ["LANGCHAIN_PLACEHOLDER", "LangChainClearToolUsesConfig", "langchain_tokens"]

LANGCHAIN_PLACEHOLDER = "[cleared]"


@dataclass(frozen=True)
class LangChainClearToolUsesConfig:
    """``ClearToolUsesEdit``: LangChain's own names and defaults."""

    trigger: int = 100_000
    clear_at_least: int = 0
    keep: int = 3
    clear_tool_inputs: bool = False
    exclude_tools: tuple[str, ...] = ()
    placeholder: str = LANGCHAIN_PLACEHOLDER

    def __post_init__(self) -> None:
        # LangChain takes a negative trigger (always fires) and clear_at_least (no minimum)
        # as they are; a negative keep would slice from the front, so it is refused
        for name in ("trigger", "clear_at_least"):
            checks.whole(name, getattr(self, name), minimum=-(2**63))
        checks.whole("keep", self.keep)
        checks.flag("clear_tool_inputs", self.clear_tool_inputs)
        ex = self.exclude_tools
        if isinstance(ex, str) or not all(isinstance(v, str) for v in (ex or ())):
            raise ConfigError(f"exclude_tools: expected a list of tool names, got {ex!r}")
        object.__setattr__(self, "exclude_tools", tuple(ex or ()))
        checks.text("placeholder", self.placeholder)


def _args(arguments: str) -> Any:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def langchain_tool_calls(m: Message) -> list[dict[str, Any]]:
    """The ``AIMessage.tool_calls`` LangChain holds for this message."""
    return [{"name": c.name, "args": _args(c.arguments), "id": c.id, "type": "tool_call"} for c in m.tool_calls]


def langchain_tokens(m: Message) -> int:
    """``count_tokens_approximately`` of one message: characters (code points) of the
    content, the repr of an assistant's tool calls, a tool message's call id, the role
    and the name, over 4 rounded up, plus 3."""
    memo = m._memo.get("langchain")
    if memo is not None:
        return int(memo)
    chars = len(m.content)
    if m.role == "assistant" and m.tool_calls:
        chars += len(repr(langchain_tool_calls(m)))
    if m.role == "tool":
        chars += len(m.tool_call_id)
    chars += len(m.role)
    name = m.tool_name if m.role == "tool" else m.name
    chars += len(name)
    n = math.ceil(chars / 4) + 3
    m._memo["langchain"] = n
    return n


def _already_cleared(m: Message) -> bool:
    raw = m._raw or {}
    meta = raw.get("response_metadata")
    if not isinstance(meta, Mapping):
        data = raw.get("data")
        meta = data.get("response_metadata") if isinstance(data, Mapping) else None
    edit = meta.get("context_editing") if isinstance(meta, Mapping) else None
    return isinstance(edit, Mapping) and bool(edit.get("cleared"))


class LangChainEngine:
    """The clearing order is fixed by the history (tool messages in order, skipping the
    ones LangChain skips) and so is the point where ``clear_at_least`` stops it; a call
    clears that sequence up to its ``keep`` boundary, so each call only adds to the
    previous one's set (trigger: LangChain's count, which only grows)."""

    def __init__(self, messages: tuple[Message, ...], config: LangChainClearToolUsesConfig) -> None:
        self.msgs, self.config = messages, config
        self._pairs: Pairing | None = None  # only the final statuses need it
        self.tools: list[int] = []
        self.ai: list[int | None] = []  # nearest earlier assistant of each tool message
        self.scan, self.last_ai = 0, -1
        self.prefix = [0]
        self.seq: list[tuple[int, dict[int, Message], int]] = []  # (tool index, assistant versions, saved so far)
        self.seq_tools: list[int] = []
        self.done_upto = 0  # tool messages [0, done_upto) are in seq or skipped
        self.inputs: dict[int, set[str]] = {}
        self.stopped = False
        self.applied = 0  # seq[:applied] is in the view

    @property
    def pairs(self) -> Pairing:
        """Each tool message's call, paired when first asked (a live agent's ``msgs`` may
        have grown since)."""
        if self._pairs is None:
            self._pairs = Pairing(self.msgs)
        return self._pairs

    def _skip(self, k: int) -> tuple[int, Any] | None:
        """The tool message's call on its nearest earlier assistant message, or None
        when LangChain skips it."""
        t = self.tools[k]
        m = self.msgs[t]
        a = self.ai[k]
        if a is None or _already_cleared(m):
            return None
        call = next((c for c in self.msgs[a].tool_calls if c.id == m.tool_call_id), None)
        if call is None or (m.tool_name or call.name) in self.config.exclude_tools:
            return None
        return a, call

    def _extend(self, eligible: int) -> None:
        c = self.config
        saved = self.seq[-1][2] if self.seq else 0
        while self.done_upto < eligible and not self.stopped:
            k = self.done_upto
            self.done_upto += 1
            hit = self._skip(k)
            if hit is None:
                continue
            t = self.tools[k]
            m = self.msgs[t]
            saved += langchain_tokens(m) - langchain_tokens(m.replaced(c.placeholder))
            versions: dict[int, Message] = {}
            if c.clear_tool_inputs:
                a, call = hit
                ids = self.inputs.setdefault(a, set())
                before = langchain_tokens(with_inputs_cleared(self.msgs[a], frozenset(ids)))
                ids.add(call.id)
                new = with_inputs_cleared(self.msgs[a], frozenset(ids))
                saved += before - langchain_tokens(new)
                versions[a] = new
            self.seq.append((t, versions, saved))
            self.seq_tools.append(t)
            if c.clear_at_least > 0 and max(0, saved) >= c.clear_at_least:
                self.stopped = True

    def advance(self, length: int) -> dict[int, Message | None]:
        if self.scan < length:
            new = self.msgs[self.scan:length]
            # counts memoised on each message: one dict probe each, a call only when new
            toks = [m._memo.get("langchain") or langchain_tokens(m) for m in new]
            self.prefix += accumulate(toks, initial=self.prefix[-1])
            del self.prefix[-len(toks) - 1]  # accumulate repeats the start
            last_ai, tools, ai = self.last_ai, self.tools, self.ai
            for i, m in enumerate(new, self.scan):
                role = m.role
                if role == "assistant":
                    last_ai = i
                elif role == "tool":
                    tools.append(i)
                    ai.append(last_ai if last_ai >= 0 else None)
            self.last_ai, self.scan = last_ai, length
        c = self.config
        target = 0
        if self.prefix[length] > c.trigger:
            eligible = 0 if c.keep >= len(self.tools) else len(self.tools) - c.keep
            self._extend(eligible)
            target = self._count_upto(eligible)
        delta: dict[int, Message | None] = {}
        if target > self.applied:
            for t, versions, _ in self.seq[self.applied:target]:
                delta[t] = self.msgs[t].replaced(c.placeholder)
                delta.update(versions)
        elif target < self.applied:
            for t, versions, _ in self.seq[target:self.applied]:
                delta[t] = None
                for a in versions:
                    delta[a] = None
        self.applied = target
        return delta

    def _count_upto(self, eligible: int) -> int:
        """How many entries of seq answer one of the first ``eligible`` tool messages."""
        if eligible == 0:
            return 0
        bound = self.tools[eligible - 1]
        return bisect_right(self.seq_tools, bound)

    def status(self, index: int, changed: bool) -> MessageStatus:
        m = self.msgs[index]
        if m.role != "tool":
            return MessageStatus.KEPT
        if changed:
            return MessageStatus.CLEARED
        pair = self.pairs[index]
        if (m.tool_name or (pair[1].name if pair else "")) in self.config.exclude_tools:
            return MessageStatus.EXCLUDED
        if self.config.keep and index in self.tools[-self.config.keep:]:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT
