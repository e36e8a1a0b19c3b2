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
from bisect import bisect_right, insort
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..model import Message, MessageStatus
from . import _checks as checks
from ._engine import Pairing, with_inputs_cleared
from ._spec import Knob, Option, PolicySpec, Preset

__all__ = ["SPEC", "langchain_python", "LANGCHAIN_PLACEHOLDER", "LangChainClearToolUsesConfig", "langchain_tokens"]

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


class LangChainFacts(NamedTuple):
    """What LangChain holds of a message that toolclear's text does not keep, read where
    the message was a LangChain message (``load(format="langchain")``, the live
    adapters); kept in ``Message.meta["langchain"]``."""

    text: str
    """The text toolclear read: the facts about the content hold while the message holds it."""
    chars: int
    """Characters ``count_tokens_approximately`` counts in the content: a string's, or per
    block a text's, a string's, or the ``repr`` of any other block."""
    images: int
    """Image blocks (a flat 85 tokens each)."""
    listed: bool
    """The content is a list of blocks (then LangChain does not count the tool calls)."""
    name: str
    """``message.name`` as LangChain holds it ("" when unset: then it is not counted)."""
    cleared: bool
    """Already cleared by ``ClearToolUsesEdit`` (its ``response_metadata`` marker)."""
    ident: Any
    """What else ``AIMessage`` equality compares (ids, metadata): ``messages.index`` finds
    the first message equal to the one it looks for."""


def content_chars(content: Any) -> tuple[int, int, bool]:
    """(characters, images, is a list) of a LangChain content, as
    ``count_tokens_approximately`` of langchain-core 1.8 counts them."""
    if isinstance(content, str):
        return len(content), 0, False
    if not isinstance(content, list):
        return len(repr(content)), 0, False
    chars = images = 0
    for block in content:
        if isinstance(block, str):
            chars += len(block)
        elif isinstance(block, dict):
            kind = block.get("type", "")
            if kind in ("image", "image_url"):
                images += 1
            elif kind == "text":
                text = block.get("text", "")
                chars += len(text) if isinstance(text, str) else len(repr(text))
            else:
                chars += len(repr(block))
        else:
            chars += len(repr(block))
    return chars, images, True


def langchain_facts(content: Any, text: str, name: Any, response_metadata: Any, ident: Any) -> dict[str, Any]:
    """``Message.meta`` for a message read from LangChain."""
    chars, images, listed = content_chars(content)
    meta = response_metadata if isinstance(response_metadata, Mapping) else {}
    edit = meta.get("context_editing")
    cleared = isinstance(edit, Mapping) and bool(edit.get("cleared"))
    return {"langchain": LangChainFacts(text, chars, images, listed, name if isinstance(name, str) else "",
                                        cleared, ident)}


def _facts(m: Message) -> LangChainFacts | None:
    meta = m.meta
    f = meta.get("langchain") if meta is not None else None
    if f is None or not (f.text is m.content or f.text == m.content):
        return None
    return f


def langchain_name(m: Message) -> str:
    """The name LangChain holds (a tool message read elsewhere: the tool's name)."""
    meta = m.meta
    f = meta.get("langchain") if meta is not None else None
    if f is not None:
        return f.name
    return m.tool_name if m.role == "tool" else m.name


def langchain_tokens(m: Message) -> int:
    """``count_tokens_approximately`` of one message: characters (code points) of the
    content (text blocks, other blocks by their ``repr``), the repr of an assistant's
    tool calls unless its content is a list of blocks, a tool message's call id, the role
    and the name, over 4 rounded up, plus 3, plus 85 per image."""
    memo = m._lc
    if memo is not None:
        return memo
    if m.meta and "stands_for_tokens" in m.meta:  # a simulated summary: the size it stands for
        return int(m.meta["stands_for_tokens"])
    f = _facts(m)
    chars, images, listed = (f.chars, f.images, f.listed) if f is not None else (len(m.content), 0, False)
    if m.role == "assistant" and m.tool_calls and not listed:
        chars += len(repr(langchain_tool_calls(m)))
    if m.role == "tool":
        chars += len(m.tool_call_id)
    chars += len(m.role)
    chars += len(langchain_name(m))
    n = math.ceil(chars / 4) + 3 + 85 * images
    object.__setattr__(m, "_lc", n)
    return n


def _already_cleared(m: Message) -> bool:
    meta = m.meta
    f = meta.get("langchain") if meta is not None else None
    if f is not None and f.cleared:
        return True
    raw = m._raw or {}
    meta = raw.get("response_metadata")
    if not isinstance(meta, Mapping):
        data = raw.get("data")
        meta = data.get("response_metadata") if isinstance(data, Mapping) else None
    edit = meta.get("context_editing") if isinstance(meta, Mapping) else None
    return isinstance(edit, Mapping) and bool(edit.get("cleared"))


def _ident(m: Message) -> Any:
    meta = m.meta
    f = meta.get("langchain") if meta is not None else None
    return f.ident if f is not None else None


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
        self.current: dict[int, tuple[Message, tuple[Any, frozenset[str]]]] = {}
        self.by_key: dict[tuple[Message, tuple[Any, frozenset[str]]], list[int]] = {}
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
        if call is None or (langchain_name(m) or call.name) in self.config.exclude_tools:
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
                j, new = self._clear_inputs(a, call.id)
                saved += langchain_tokens(self._current(j)[0]) - langchain_tokens(new)
                self._put(j, new, self._current(a)[1], call.id)
                versions[j] = new
            self.seq.append((t, versions, saved))
            self.seq_tools.append(t)
            if c.clear_at_least > 0 and max(0, saved) >= c.clear_at_least:
                self.stopped = True

    def _current(self, a: int) -> tuple[Message, tuple[Any, frozenset[str]]]:
        """The assistant message at ``a`` as the edits so far left it, with what else
        LangChain's equality compares (its metadata, the inputs cleared so far)."""
        hit = self.current.get(a)
        return hit if hit is not None else (self.msgs[a], (_ident(self.msgs[a]), frozenset()))

    def _clear_inputs(self, a: int, call_id: str) -> tuple[int, Message]:
        """Where LangChain writes the assistant message with this call's input emptied,
        and that message: ``messages[messages.index(ai_message)] = ...`` puts it at the
        first message *equal* to the current one at ``a`` (an earlier duplicate, if any)."""
        msg, key = self._current(a)
        slots = self.by_key.get((msg, key))
        j = slots[0] if slots else a
        return j, with_inputs_cleared(msg, frozenset((call_id,)))

    def _put(self, j: int, new: Message, key: tuple[Any, frozenset[str]], call_id: str) -> None:
        old, old_key = self._current(j)
        slots = self.by_key.get((old, old_key))
        if slots and j in slots:
            slots.remove(j)
        new_key = (key[0], key[1] | {call_id})
        self.current[j] = (new, new_key)
        insort(self.by_key.setdefault((new, new_key), []), j)

    def advance(self, length: int) -> dict[int, Message | None]:
        if self.scan < length:
            new = self.msgs[self.scan:length]
            # counts memoised on each message: one dict probe each, a call only when new
            toks = [m._lc or langchain_tokens(m) for m in new]
            self.prefix += accumulate(toks, initial=self.prefix[-1])
            del self.prefix[-len(toks) - 1]  # accumulate repeats the start
            last_ai, tools, ai = self.last_ai, self.tools, self.ai
            for i, m in enumerate(new, self.scan):
                role = m.role
                if role == "assistant":
                    last_ai = i
                    if self.config.clear_tool_inputs:
                        self.by_key.setdefault((m, (_ident(m), frozenset())), []).append(i)
                elif role == "tool":
                    tools.append(i)
                    ai.append(last_ai if last_ai >= 0 else None)
            self.last_ai, self.scan = last_ai, length
        c = self.config
        target = 0
        if self.prefix[length] > c.trigger:  # its own count of the messages, calibrated or not
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
        if (langchain_name(m) or (pair[1].name if pair else "")) in self.config.exclude_tools:
            return MessageStatus.EXCLUDED
        if self.config.keep and index in self.tools[-self.config.keep:]:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT


def langchain_python(config: LangChainClearToolUsesConfig) -> str:
    return (
        "from langchain.agents import create_agent\n"
        "from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware\n"
        "\n"
        "context_editing = ContextEditingMiddleware(edits=[ClearToolUsesEdit(\n"
        f"    trigger={config.trigger},\n"
        f"    clear_at_least={config.clear_at_least},\n"
        f"    keep={config.keep},\n"
        f"    clear_tool_inputs={config.clear_tool_inputs},\n"
        f"    exclude_tools={tuple(config.exclude_tools)!r},\n"
        f"    placeholder={config.placeholder!r},\n"
        ")])\n"
        "agent = create_agent(model, tools, middleware=[context_editing])\n"
    )


def _framework(config: LangChainClearToolUsesConfig) -> list[tuple[str, str, str]]:
    return [("LangChain v1: ContextEditingMiddleware", "python", langchain_python(config))]


SPEC = PolicySpec(
    name="langchain",
    config=LangChainClearToolUsesConfig,
    engine=lambda messages, config, counter, **_: LangChainEngine(messages, config),
    presets=(Preset(
        "langchain", "LangChain ClearToolUsesEdit",
        "LangChain v1's ContextEditingMiddleware: edits a copy of each request; counts with LangChain's "
        "approximation.",
        LangChainClearToolUsesConfig, export=_framework,
        knobs=(Knob("trigger", "Trigger: LangChain's count over", "lc_tokens",
                    "trigger: by count_tokens_approximately (characters / 4 + 3 per message)."),
               Knob("keep", "Tool results kept", "uses", "keep: the most recent tool messages left alone.")),
    ),),
    aliases={"threshold": "trigger", "exclude": "exclude_tools", "at_least": "clear_at_least"},
    describe=lambda c: f"langchain {c.trigger:,}/{c.keep}",
    exports=("python",),
    options=(Option("clear_at_least", "Clear at least (tokens; 0: no minimum)", "number",
                    "clear_at_least: clearing stops once this much is freed.", key="opt_least"),
             Option("exclude_tools", "Never clear these tools", "tools", key="opt_exclude"),
             Option("clear_tool_inputs", "Clear tool inputs too", "toggle", key="opt_inputs"),
             Option("placeholder", "Placeholder", "text", key="opt_ph")),
    why_nothing=lambda c, sizes: (
        f"LangChain counts {sizes['lc_tokens']:,} tokens, not over the trigger {c.trigger:,}."
        if sizes["lc_tokens"] <= c.trigger else f"only {sizes['uses']} tool result(s), {c.keep} kept."),
)
"""LangChain's ClearToolUsesEdit, as the registry lists it."""
