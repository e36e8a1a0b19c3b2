"""Anthropic's server-side compaction (``context_management`` edit ``compact_20260112``):
when a request's input exceeds the trigger (``input_tokens``, default 150,000, at least
50,000), the API has the model write a summary, sends the rest of the request after it,
and on later requests drops everything before the compaction block it returned.

From the API's documentation (the service is not open source). Exact: the trigger and
that nothing before the compaction block is kept. Assumed where the documentation is
silent: the call that compacts is sent the compacted context (the summary then the
request's last turn); ``pause_after_compaction`` stops the response after the summary,
which changes when the client resends, not what is sent; ``instructions`` change what
the summary says, not its size here. The summary's size is modelled
(``summary_tokens``, else the run's own summaries per token replaced, else 2 %); the
summarization is billed as an iteration of the same request (``usage.iterations``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import ConfigError
from ._checks import flag, text, whole
from ._compaction import TokenTrigger, engine_of, system_messages
from ._spec import Knob, Option, PolicySpec, Preset

__all__ = ["SPEC", "AnthropicCompactionConfig", "MIN_TRIGGER"]

MIN_TRIGGER = 50_000


@dataclass(frozen=True)
class AnthropicCompactionConfig:
    """``compact_20260112``'s settings, by the API's names."""

    trigger: int = 150_000
    """``trigger: {"type": "input_tokens", "value": ...}``."""
    pause_after_compaction: bool = False
    instructions: str = ""
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("trigger", self.trigger)
        if self.trigger < MIN_TRIGGER:
            raise ConfigError(f"trigger: the API takes at least {MIN_TRIGGER:,} input tokens, got {self.trigger:,}")
        flag("pause_after_compaction", self.pause_after_compaction)
        text("instructions", self.instructions)
        whole("summary_tokens", self.summary_tokens)


def _json(c: AnthropicCompactionConfig) -> str:
    edit: dict[str, object] = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": c.trigger}}
    if c.pause_after_compaction:
        edit["pause_after_compaction"] = True
    if c.instructions:
        edit["instructions"] = c.instructions
    return json.dumps({"context_management": {"edits": [edit]}}, indent=2)


SPEC = PolicySpec(
    name="anthropic-compaction",
    config=AnthropicCompactionConfig,
    engine=engine_of(lambda c: TokenTrigger(lambda e: c.trigger, system_messages), "anthropic-compaction"),
    presets=(Preset("anthropic-compaction", "Anthropic server compaction (compact_20260112)",
                    "Anthropic's server-side compaction: past the trigger the model summarises the conversation "
                    "and later requests start from the summary.", AnthropicCompactionConfig,
                    export=lambda c: [("Anthropic Messages API: context_management", "json", _json(c))],
                    knobs=(Knob("trigger", "Trigger (input tokens)", "tokens",
                                "trigger.value: input tokens above which the API compacts (at least 50,000)."),
                           Knob("summary_tokens", "Summary tokens (0: modelled)", "tokens"))),),
    aliases={"threshold": "trigger", "summary": "summary_tokens", "pause": "pause_after_compaction"},
    sticky=True,
    compacts=True,
    exports=("anthropic-json",),
    describe=lambda c: f"anthropic-compaction at {c.trigger:,}",
    changed_noun="message(s) compacted",
    options=(Option("pause_after_compaction", "Pause after compaction", "toggle", key="opt_pause"),
             Option("instructions", "Summary instructions", "text", key="opt_instr")),
    why_nothing=lambda c, sizes: f"no request's input passed the trigger ({c.trigger:,} tokens).",
)
"""Anthropic's server-side compaction, as the registry lists it."""
