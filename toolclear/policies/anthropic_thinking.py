"""The Messages API's ``clear_thinking_20251015`` context edit (beta
``context-management-2025-06-27``): before every request the server removes the thinking
blocks of all but the most recent ``keep`` assistant turns (``{"type": "thinking_turns",
"value": N}``, 1 by default; ``"all"`` keeps them all), alone or together with
``clear_tool_uses_20250919`` in one ``context_management`` request, where the API wants
the thinking edit first and applies the edits in that order.

The API is documented, not open source: what its documentation leaves open, assumed here:
- a turn is an assistant message that holds thinking (in a tool loop each model reply is
  one), and the last ``keep`` of them keep their thinking;
- nothing is kept between requests (each is edited afresh from the full history);
- with ``trigger_input_tokens`` set, ``clear_tool_uses`` (toolclear's ``anthropic``
  policy, the same engine) runs after it, its trigger counting the request as the
  thinking edit left it;
- a redacted thinking block counts as thinking.

The exported ``context_management`` body is checked against the Anthropic SDK's own
types. A transcript cannot take a thinking clear back in its own format (the blocks
would have to go, with their signatures): export the request settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ConfigError
from ..model import Message, MessageStatus
from ._checks import whole
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "AnthropicThinkingConfig", "context_management"]


@dataclass(frozen=True)
class AnthropicThinkingConfig:
    """``clear_thinking_20251015``'s ``keep``, and optionally ``clear_tool_uses`` beside it."""

    keep_thinking_turns: int | None = 1
    """The most recent assistant turns whose thinking stays; None: ``"all"``."""
    trigger_input_tokens: int | None = None
    """With a value, ``clear_tool_uses_20250919`` runs after it with this trigger."""
    keep_tool_uses: int = 3

    def __post_init__(self) -> None:
        if self.keep_thinking_turns is not None:
            whole("keep_thinking_turns", self.keep_thinking_turns, minimum=1)
        if self.trigger_input_tokens is not None:
            whole("trigger_input_tokens", self.trigger_input_tokens)
        whole("keep_tool_uses", self.keep_tool_uses)

    def tool_uses(self) -> Any:
        """The clear_tool_uses config run after it, or None."""
        if self.trigger_input_tokens is None:
            return None
        from . import preset_named  # the registry: the same engine as the 'anthropic' policy

        _, preset = preset_named("anthropic")
        return replace(preset.make(), trigger_input_tokens=self.trigger_input_tokens,
                       keep_tool_uses=self.keep_tool_uses)


def context_management(config: AnthropicThinkingConfig) -> dict[str, Any]:
    """The request's ``context_management``: the thinking edit first, as the API requires."""
    keep: Any = "all" if config.keep_thinking_turns is None else {"type": "thinking_turns",
                                                                   "value": config.keep_thinking_turns}
    edits: list[dict[str, Any]] = [{"type": "clear_thinking_20251015", "keep": keep}]
    tools = config.tool_uses()
    if tools is not None:
        edits.append(tools.request_json())
    return {"edits": edits}


class ThinkingEngine:
    """Recomputed at each request: the thinking of every assistant turn but the last
    ``keep`` is removed; the tool-use edit, when set, advances beside it."""

    def __init__(self, messages: Sequence[Message], config: AnthropicThinkingConfig, counter: Any,
                 **kw: Any) -> None:
        self.msgs, self.config = messages, config
        tools = config.tool_uses()
        if tools is not None:
            from . import spec_for

            self.tools: Any = spec_for(tools).engine(messages, tools, counter, **kw)
        else:
            self.tools = None
        self.turns: list[int] = []  # assistant messages with thinking, in order
        self.scan = 0
        self.cleared = 0  # the first this many turns are shown without their thinking

    def advance(self, length: int) -> dict[int, Message | None]:
        msgs = self.msgs
        while self.scan < length:
            meta = msgs[self.scan].meta
            if msgs[self.scan].role == "assistant" and meta is not None and meta.get("thinking"):
                self.turns.append(self.scan)
            self.scan += 1
        keep = self.config.keep_thinking_turns
        target = max(0, len(self.turns) - keep) if keep is not None else 0
        delta: dict[int, Message | None] = {}
        for k in range(self.cleared, target):  # only grows: a turn once old stays old
            i = self.turns[k]
            m = msgs[i]
            delta[i] = m.replaced(str((m.meta or {}).get("without_thinking", m.content)))
        self.cleared = max(self.cleared, target)
        if self.tools is not None:
            for i, new in self.tools.advance(length).items():
                if i in delta or (i in self.turns[:self.cleared] and new is not None):
                    raise ConfigError("clear_tool_inputs with clear_thinking is not modelled")
                delta[i] = new
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if self.tools is not None and self.msgs[index].role == "tool":
            return self.tools.status(index, changed)
        return MessageStatus.CLEARED if changed else MessageStatus.KEPT


def _engine(messages: Any, config: AnthropicThinkingConfig, counter: Any, **kw: Any) -> ThinkingEngine:
    return ThinkingEngine(messages, config, counter, **kw)


def _json(config: AnthropicThinkingConfig) -> list[tuple[str, str, str]]:
    body = json.dumps({"context_management": context_management(config)}, indent=2) + "\n"
    return [("Anthropic Messages API: the request's context_management (beta context-management-2025-06-27)",
             "json", body)]


SPEC = PolicySpec(
    name="anthropic-thinking",
    config=AnthropicThinkingConfig,
    engine=_engine,
    presets=(Preset("anthropic-thinking", "Anthropic clear_thinking",
                    "The Messages API's clear_thinking_20251015: the thinking of all but the last keep assistant "
                    "turns is removed before every request (with a trigger, clear_tool_uses runs after it in the "
                    "same request); nothing stays between requests.", AnthropicThinkingConfig,
                    knobs=(Knob("keep_thinking_turns", "Thinking turns kept", "uses",
                                "keep: the most recent assistant turns whose thinking stays."),),
                    export=_json),),
    aliases={"keep": "keep_thinking_turns", "turns": "keep_thinking_turns", "trigger": "trigger_input_tokens",
             "threshold": "trigger_input_tokens", "keep_tools": "keep_tool_uses"},
    describe=lambda c: "anthropic-thinking keep " + ("all" if c.keep_thinking_turns is None
                                                      else str(c.keep_thinking_turns))
    + (f" + tool uses {c.trigger_input_tokens:,}/{c.keep_tool_uses}" if c.trigger_input_tokens is not None else ""),
    exports=("anthropic-json",),
    changed_noun="message(s) with thinking or results cleared",
    why_nothing=lambda c, sizes: "no assistant turn older than the kept ones holds thinking.",
)
"""Anthropic's clear_thinking edit, as the registry lists it."""
