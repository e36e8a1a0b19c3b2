"""OpenAI's Responses API compaction (``context_management: [{"type": "compaction",
"compact_threshold": N}]``): when a request's input passes the threshold, the server
compacts the conversation: the user's messages stay as they were, every other item
(replies, tool calls and their outputs, reasoning) becomes one opaque ``compaction``
item that later requests send instead.

From the API's documentation (the service is not open source). Exact: the threshold and
what is kept (the user messages, the instructions). Assumed: the call that passes the
threshold is already sent the compacted input. Modelled: the compaction item's size (it
is encrypted; ``summary_tokens``, else the run's own summaries per token replaced, else
2 %).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ._checks import whole
from ._compaction import CompactingEngine, TokenTrigger, engine_of, system_messages
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "OpenAICompactionConfig"]


@dataclass(frozen=True)
class OpenAICompactionConfig:
    """The compaction entry of ``context_management``."""

    compact_threshold: int = 200_000
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("compact_threshold", self.compact_threshold, minimum=1)
        whole("summary_tokens", self.summary_tokens)


def _users(e: CompactingEngine) -> set[int]:
    return system_messages(e) | {i for i in e.visible if e.msgs[i].role == "user" and i not in e.summaries}


def _json(c: OpenAICompactionConfig) -> str:
    return json.dumps({"context_management": [{"type": "compaction", "compact_threshold": c.compact_threshold}]},
                      indent=2)


SPEC = PolicySpec(
    name="openai-compaction",
    config=OpenAICompactionConfig,
    engine=engine_of(lambda c: TokenTrigger(lambda e: c.compact_threshold, _users), "openai-compaction"),
    presets=(Preset("openai-compaction", "OpenAI Responses compaction",
                    "OpenAI's Responses API compaction: past the threshold every item but the user's messages "
                    "becomes one compaction item.", OpenAICompactionConfig,
                    export=lambda c: [("OpenAI Responses API: context_management", "json", _json(c))],
                    knobs=(Knob("compact_threshold", "Compact threshold (input tokens)", "tokens"),
                           Knob("summary_tokens", "Compaction item tokens (0: modelled)", "tokens"))),),
    aliases={"threshold": "compact_threshold", "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    describe=lambda c: f"openai-compaction at {c.compact_threshold:,}",
    changed_noun="item(s) compacted",
    why_nothing=lambda c, sizes: f"no request's input passed {c.compact_threshold:,} tokens.",
)
"""OpenAI's Responses API compaction, as the registry lists it."""
