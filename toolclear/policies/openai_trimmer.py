"""The OpenAI Agents SDK's ``ToolOutputTrimmer`` (``agents.extensions``, openai-agents
>= 0.24): a ``call_model_input_filter`` that, before every model call, replaces each
tool output older than the last ``recent_turns`` user messages and longer than
``max_output_chars`` characters with a preview of its first ``preview_chars``.

What it reproduces, from the reference's source (``agents/extensions/tool_output_trimmer.py``,
openai-agents 0.24.0), checked against the package itself (tests/policies/test_openai_trimmer.py):
- the boundary is the ``recent_turns``-th user message from the end; with fewer user
  messages nothing is old, and that message and everything after it are never trimmed;
- a string output is a candidate when ``len(output) > max_output_chars`` (characters), and
  becomes ``[Trimmed: <tool> output — <n> chars → <preview_chars> char preview]\\n<preview>...``,
  ``<tool>`` its call's name (``unknown_tool`` when no call names it); an output the
  summary would not shorten is left as it is;
- ``trimmable_tools`` (None: every tool) by the call's name; an output whose call is
  unknown is then never trimmed;
- the filter works on the full history before every call and keeps nothing (not sticky).

What it leaves out: structured outputs (lists of input_text / input_image parts) and
``tool_search_output`` items; toolclear's messages hold text, so it trims text outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..model import Message, MessageStatus
from ._checks import whole
from ._engine import Pairing
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "ToolOutputTrimmerConfig", "trimmed_text"]


@dataclass(frozen=True)
class ToolOutputTrimmerConfig:
    """``ToolOutputTrimmer``'s settings, with its defaults."""

    recent_turns: int = 2
    max_output_chars: int = 500
    preview_chars: int = 200
    trimmable_tools: tuple[str, ...] | None = None
    """Only these tools' outputs are trimmed; None: every tool's."""

    def __post_init__(self) -> None:
        # the reference refuses these in its own __post_init__, with the same bounds
        whole("recent_turns", self.recent_turns, minimum=1)
        whole("max_output_chars", self.max_output_chars, minimum=1)
        whole("preview_chars", self.preview_chars)
        if isinstance(self.trimmable_tools, str):
            object.__setattr__(self, "trimmable_tools", (self.trimmable_tools,))
        elif self.trimmable_tools is not None:
            if not all(isinstance(t, str) for t in self.trimmable_tools):
                raise ConfigError("trimmable_tools: expected tool names")
            object.__setattr__(self, "trimmable_tools", tuple(self.trimmable_tools))


def trimmed_text(output: str, tool: str, config: ToolOutputTrimmerConfig) -> str | None:
    """What the reference sends in place of ``output``, or None when it keeps it."""
    if len(output) <= config.max_output_chars:
        return None
    summary = (f"[Trimmed: {tool or 'unknown_tool'} output — {len(output)} chars → "
               f"{config.preview_chars} char preview]\n{output[:config.preview_chars]}...")
    return summary if len(summary) < len(output) else None


class TrimmerEngine:
    """Advanced over each call's prefix: the boundary only moves forward as user
    messages arrive, so each call trims the outputs it passed and nothing comes back."""

    def __init__(self, messages: tuple[Message, ...], config: ToolOutputTrimmerConfig) -> None:
        self.msgs, self.config = messages, config
        self.pairs = Pairing(messages)
        self.users: list[int] = []
        self.scan = 0
        self.done = 0  # messages before this index have been judged
        self.trimmed: set[int] = set()
        self.allowed = frozenset(config.trimmable_tools) if config.trimmable_tools is not None else None

    def _name(self, i: int) -> str:
        pair = self.pairs[i]
        return pair[1].name if pair is not None else ""

    def advance(self, length: int) -> dict[int, Message | None]:
        msgs, c = self.msgs, self.config
        while self.scan < length:
            if msgs[self.scan].role == "user":
                self.users.append(self.scan)
            self.scan += 1
        boundary = self.users[-c.recent_turns] if len(self.users) >= c.recent_turns else 0
        delta: dict[int, Message | None] = {}
        for i in range(self.done, boundary):
            m = msgs[i]
            if m.role != "tool":
                continue
            name = self._name(i)
            if self.allowed is not None and name not in self.allowed:
                continue
            text = trimmed_text(m.content, name, c)
            if text is not None:
                delta[i] = m.replaced(text)
                self.trimmed.add(i)
        self.done = max(self.done, boundary)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.CLEARED
        if self.msgs[index].role == "tool" and index >= self.done:
            return MessageStatus.PROTECTED
        return MessageStatus.KEPT


def _engine(messages: Any, config: ToolOutputTrimmerConfig, counter: Any, **_: Any) -> TrimmerEngine:
    return TrimmerEngine(tuple(messages), config)


def _python(config: ToolOutputTrimmerConfig) -> list[tuple[str, str, str]]:
    tools = "None" if config.trimmable_tools is None else "{" + ", ".join(repr(t) for t in config.trimmable_tools) + "}"
    code = "\n".join([
        "from agents import RunConfig",
        "from agents.extensions import ToolOutputTrimmer",
        "",
        "run_config = RunConfig(",
        "    call_model_input_filter=ToolOutputTrimmer(",
        f"        recent_turns={config.recent_turns},",
        f"        max_output_chars={config.max_output_chars},",
        f"        preview_chars={config.preview_chars},",
        f"        trimmable_tools={tools},",
        "    ),",
        ")",
    ]) + "\n"
    return [("OpenAI Agents SDK (openai-agents >= 0.24)", "python", code)]


def _why_nothing(config: ToolOutputTrimmerConfig, sizes: Any) -> str:
    return (f"no tool output older than the last {config.recent_turns} user message(s) is longer than "
            f"{config.max_output_chars:,} characters" + (" among the trimmable tools" if config.trimmable_tools else "")
            + ".")


SPEC = PolicySpec(
    name="openai-trimmer",
    config=ToolOutputTrimmerConfig,
    engine=_engine,
    presets=(Preset("openai-trimmer", "OpenAI Agents SDK ToolOutputTrimmer",
                    "agents.extensions.ToolOutputTrimmer: tool outputs older than the last user turns and longer "
                    "than the limit become a short preview, before every call; nothing stays trimmed.",
                    ToolOutputTrimmerConfig,
                    knobs=(Knob("recent_turns", "Recent turns kept whole", "steps",
                                "recent_turns: the last this many user messages and all after them are never "
                                "trimmed."),
                           Knob("max_output_chars", "Longer than (characters)", "tokens",
                                "max_output_chars: outputs longer than this are trimmed to a preview.")),
                    export=_python),),
    aliases={"keep": "recent_turns", "threshold": "max_output_chars", "preview": "preview_chars",
             "tools": "trimmable_tools"},
    describe=lambda c: f"openai-trimmer {c.recent_turns} turns/{c.max_output_chars:,} chars",
    exports=("python",),
    changed_noun="tool output(s) trimmed",
    why_nothing=_why_nothing,
)
"""The OpenAI Agents SDK's ToolOutputTrimmer, as the registry lists it."""
