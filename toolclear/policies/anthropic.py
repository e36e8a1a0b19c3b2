"""Anthropic's server-side context editing, ``clear_tool_uses_20250919``.

Recomputed by the server on the full history at every request (the client keeps
everything), so nothing is sticky: once the prompt passes the trigger, every tool
use but the last ``keep_tool_uses`` has its result replaced (and, with
``clear_tool_inputs``, its input emptied), unless that clears fewer than
``clear_at_least_input_tokens``, in which case nothing is cleared at all.

Only documentation exists for this policy; what it leaves open and what toolclear
assumes is in the README ("Anthropic context editing").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from ..counters import TokenCounter, count_tokens
from ..errors import ConfigError
from ..model import Message, MessageStatus, Slot, memo_put
from . import _checks as checks
from ._engine import Pairing, with_inputs_cleared
from ._spec import Knob, Option, PolicySpec, Preset

__all__ = ["SPEC", "anthropic_json", "ANTHROPIC_PLACEHOLDER", "AnthropicClearToolUsesConfig"]

ANTHROPIC_PLACEHOLDER = "[cleared]"
"""The documentation does not give the server's text; LangChain's mirror of this edit uses this."""


@dataclass(frozen=True)
class AnthropicClearToolUsesConfig:
    """``{"type": "clear_tool_uses_20250919", ...}`` in a request's ``context_management``.

    ``trigger_tool_uses`` set replaces the input-token trigger with a tool-use count.
    ``clear_tool_inputs`` is True (every cleared use), False, or tool names.
    """

    trigger_input_tokens: int = 100_000
    trigger_tool_uses: int | None = None
    keep_tool_uses: int = 3
    clear_at_least_input_tokens: int | None = None
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False
    placeholder: str = ANTHROPIC_PLACEHOLDER

    def __post_init__(self) -> None:
        checks.whole("trigger_input_tokens", self.trigger_input_tokens, none_ok=self.trigger_tool_uses is not None)
        checks.whole("trigger_tool_uses", self.trigger_tool_uses, none_ok=True)
        checks.whole("keep_tool_uses", self.keep_tool_uses)
        checks.whole("clear_at_least_input_tokens", self.clear_at_least_input_tokens, none_ok=True)
        object.__setattr__(self, "exclude_tools", _names("exclude_tools", self.exclude_tools))
        if not isinstance(self.clear_tool_inputs, bool):
            object.__setattr__(self, "clear_tool_inputs", _names("clear_tool_inputs", self.clear_tool_inputs))
        checks.text("placeholder", self.placeholder)

    def clears_input(self, tool: str) -> bool:
        c = self.clear_tool_inputs
        return c if isinstance(c, bool) else tool in c

    def request_json(self) -> dict[str, object]:
        """The edit as the Messages API takes it (``context_management.edits[0]``)."""
        edit: dict[str, object] = {"type": "clear_tool_uses_20250919"}
        if self.trigger_tool_uses is not None:
            edit["trigger"] = {"type": "tool_uses", "value": self.trigger_tool_uses}
        else:
            edit["trigger"] = {"type": "input_tokens", "value": self.trigger_input_tokens}
        edit["keep"] = {"type": "tool_uses", "value": self.keep_tool_uses}
        if self.clear_at_least_input_tokens is not None:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least_input_tokens}
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs:
            edit["clear_tool_inputs"] = (self.clear_tool_inputs if isinstance(self.clear_tool_inputs, bool)
                                         else list(self.clear_tool_inputs))
        return edit


def _names(field: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)) or not all(
            isinstance(v, str) for v in value):
        raise ConfigError(f"{field}: expected a list of tool names, got {value!r}")
    return tuple(value)


def _thinking_tokens(m: Message, counter: TokenCounter) -> int:
    """The tokens of an assistant message's thinking blocks (counted once per message
    and counter: the text is kept on the message as a message of its own)."""
    thinking = (m.meta or {}).get("thinking")
    if not thinking:
        return 0
    alone = m._memo.get(Slot.THINKING)
    if alone is None:
        alone = memo_put(m, Slot.THINKING, Message("assistant", "\n".join(thinking)))
    return count_tokens((alone,), counter)[0]


class AnthropicEngine:
    """Uses are tool results in the order they arrive; the cleared set is always the
    oldest ``uses - keep`` of them (exclusions skipped) or nothing, so each call only
    adds to it (or, if the ``clear_at_least`` gate fails, puts it all back)."""

    def __init__(self, messages: tuple[Message, ...], config: AnthropicClearToolUsesConfig,
                 counter: TokenCounter) -> None:
        self.msgs, self.config, self.counter = messages, config, counter
        self.pairs = Pairing(messages)
        self.counts = list(count_tokens(messages, counter))
        self.prefix = [0]
        for c in self.counts:
            self.prefix.append(self.prefix[-1] + c)
        self.uses: list[int] = []
        self.scan = 0
        self.cum: list[int] = [0]  # tokens saved by clearing the first k uses
        self.inputs: dict[int, set[str]] = {}  # assistant index -> call ids emptied so far (by the first k)
        self.ai_after: list[dict[int, Message]] = [{}]  # assistant versions after k uses
        self.applied = 0
        self.offset: Callable[[int], int] | None = None
        """Tokens the request holds beyond these messages at a call (a calibration)."""
        self.think = [0]  # thinking tokens of the messages before each index
        self.last_user = 0  # the last user turn seen (thinking before it is stripped)

    def _name(self, i: int) -> str:
        name = self.msgs[i].tool_name
        if name:
            return name
        pair = self.pairs[i]
        return pair[1].name if pair else ""

    def _extend(self, k: int) -> None:
        """Work out the saving of clearing uses up to k (each once, in order)."""
        while len(self.cum) <= k:
            u = self.uses[len(self.cum) - 1]
            name = self._name(u)
            saving, versions = 0, {}
            if name not in self.config.exclude_tools:
                m = self.msgs[u]
                saving = self.counts[u] - count_tokens((m.replaced(self.config.placeholder),), self.counter)[0]
                pair = self.pairs[u] if self.config.clears_input(name) else None
                if pair is not None:
                    a, call = pair
                    ids = self.inputs.setdefault(a, set())
                    before = count_tokens((with_inputs_cleared(self.msgs[a], frozenset(ids)),), self.counter)[0]
                    ids.add(call.id)
                    new = with_inputs_cleared(self.msgs[a], frozenset(ids))
                    saving += before - count_tokens((new,), self.counter)[0]
                    versions[a] = new
            self.cum.append(self.cum[-1] + saving)
            self.ai_after.append(versions)

    def _grow(self, length: int) -> None:
        """A live agent's history grew (``msgs`` is its list): count and pair the new messages."""
        have = len(self.counts)
        self.counts += count_tokens(self.msgs[have:length], self.counter)
        for c in self.counts[have:]:
            self.prefix.append(self.prefix[-1] + c)

    def _input_tokens(self, length: int) -> int:
        """What the trigger compares: the request's tokens without the thinking of
        assistant turns before the last user turn (the API keeps only the last turn's
        thinking unless ``clear_thinking`` says otherwise); with a calibration, the prompt
        as recorded (the API's own count, thinking already left out)."""
        if self.offset is not None:
            return self.prefix[length] + self.offset(length)
        return self.prefix[length] - self.think[self.last_user]

    def advance(self, length: int) -> dict[int, Message | None]:
        if length > len(self.counts):
            self._grow(length)
        while self.scan < length:
            m = self.msgs[self.scan]
            if m.role == "tool":
                self.uses.append(self.scan)
            elif m.role == "user":
                self.last_user = self.scan
            self.think.append(self.think[-1] + (_thinking_tokens(m, self.counter) if m.role == "assistant" else 0))
            self.scan += 1
        c = self.config
        fired = (len(self.uses) > c.trigger_tool_uses if c.trigger_tool_uses is not None
                 else self._input_tokens(length) > c.trigger_input_tokens)
        target = max(0, len(self.uses) - c.keep_tool_uses) if fired else 0
        self._extend(target)
        if target and c.clear_at_least_input_tokens is not None and self.cum[target] < c.clear_at_least_input_tokens:
            target = 0
        delta: dict[int, Message | None] = {}
        if target > self.applied:
            for k in range(self.applied, target):
                u = self.uses[k]
                if self._name(u) not in c.exclude_tools:
                    delta[u] = self.msgs[u].replaced(c.placeholder)
                delta.update(self.ai_after[k + 1])
        elif target < self.applied:
            for k in range(target, self.applied):
                delta[self.uses[k]] = None
                for a in self.ai_after[k + 1]:
                    delta[a] = None
        self.applied = target
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if self.msgs[index].role != "tool":
            return MessageStatus.KEPT
        if changed:
            return MessageStatus.CLEARED
        if self._name(index) in self.config.exclude_tools:
            return MessageStatus.EXCLUDED
        if index in self.uses[max(0, len(self.uses) - self.config.keep_tool_uses):]:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT


def anthropic_json(config: AnthropicClearToolUsesConfig) -> str:
    """The Messages API request's ``context_management`` (beta header
    ``anthropic-beta: context-management-2025-06-27``)."""
    return json.dumps({"context_management": {"edits": [config.request_json()]}}, indent=2) + "\n"


def _framework(config: AnthropicClearToolUsesConfig) -> list[tuple[str, str, str]]:
    title = "Anthropic Messages API: the request's context_management"
    if config.placeholder != AnthropicClearToolUsesConfig().placeholder:
        # the API has no placeholder setting: saying so beats a JSON that silently drops it
        title += (f" (the API has no placeholder setting: the server writes its own text, not "
                  f"{config.placeholder[:40]!r}, into cleared results)")
    return [(title, "json", anthropic_json(config))]


SPEC = PolicySpec(
    name="anthropic",
    config=AnthropicClearToolUsesConfig,
    engine=lambda messages, config, counter, **_: AnthropicEngine(messages, config, counter),
    presets=(Preset(
        "anthropic", "Anthropic context editing",
        "The Messages API's server-side clear_tool_uses_20250919: recomputed at every request on the full "
        "history, so nothing stays cleared between calls.",
        AnthropicClearToolUsesConfig, export=_framework,
        knobs=(Knob("trigger_input_tokens", "Trigger: input tokens over", "tokens",
                    "trigger: clearing starts once the prompt holds more input tokens than this."),
               Knob("keep_tool_uses", "Tool uses kept", "uses", "keep: the most recent tool uses whose results stay.")),
    ),),
    aliases={"threshold": "trigger_input_tokens", "trigger": "trigger_input_tokens", "keep": "keep_tool_uses",
             "exclude": "exclude_tools", "at_least": "clear_at_least_input_tokens"},
    describe=lambda c: f"anthropic {c.trigger_input_tokens:,}/{c.keep_tool_uses}",
    exports=("anthropic-json",),
    options=(Option("clear_at_least_input_tokens", "Clear at least (tokens; 0: no minimum)", "number_or_none",
                    "clear_at_least: clearing is not applied at all unless it frees this much.", key="opt_least"),
             Option("exclude_tools", "Never clear these tools", "tools", key="opt_exclude"),
             Option("clear_tool_inputs", "Clear tool inputs too", "toggle", key="opt_inputs")),
    why_nothing=lambda c, sizes: (
        f"the run holds {sizes['tokens']:,} input tokens, not over the trigger {c.trigger_input_tokens:,}."
        if sizes["tokens"] <= c.trigger_input_tokens else
        f"only {sizes['uses']} tool use(s), {c.keep_tool_uses} kept, or the clear_at_least gate failed."),
)
"""Anthropic's context editing, as the registry lists it."""
