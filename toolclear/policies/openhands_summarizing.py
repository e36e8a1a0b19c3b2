"""OpenHands' ``LLMSummarizingCondenser`` (openhands/memory/condenser/impl/
llm_summarizing_condenser.py at 76483ad8): when the agent's view holds more than
``max_size`` events, the first ``keep_first`` stay, the latest ``max_size // 2 -
keep_first - 1`` stay, and every event between becomes one summary (with the previous
summary folded in), placed after the first ones.

Exact: the trigger and what is kept, counting each message of the run as one event of
the view (an action or an observation). Modelled: the summary's size. The condenser
turns prompt caching off for its own calls (``caching_prompt = False``), so its
summarization call is priced uncached, each forgotten event cut to
``max_event_length`` characters as OpenHands cuts it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ._checks import whole
from ._compaction import CompactingEngine, engine_of
from ._spec import Knob, Option, PolicySpec, Preset

__all__ = ["SPEC", "OpenHandsSummarizingConfig"]


@dataclass(frozen=True)
class OpenHandsSummarizingConfig:
    """``LLMSummarizingCondenserConfig``'s settings, with OpenHands' defaults."""

    max_size: int = 100
    keep_first: int = 1
    max_event_length: int = 10_000
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("max_size", self.max_size, minimum=1)
        whole("keep_first", self.keep_first)
        whole("max_event_length", self.max_event_length, minimum=1)
        whole("summary_tokens", self.summary_tokens)
        if self.keep_first >= self.max_size // 2:
            raise ConfigError(f"keep_first ({self.keep_first}) must be less than half of max_size ({self.max_size})")


class _Rule:
    def __init__(self, c: OpenHandsSummarizingConfig) -> None:
        self.c = c

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        return len(e.visible) > self.c.max_size

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        c, view = self.c, e.visible
        tail = c.max_size // 2 - c.keep_first - 1
        kept = set(view[: c.keep_first]) | (set(view[len(view) - tail:]) if tail > 0 else set())
        forgotten = [i for i in view if i not in kept]
        # each forgotten event as OpenHands puts it in the prompt: cut to max_event_length characters
        e.read_tokens = sum(min(e.count[i], self.c.max_event_length // 4) for i in forgotten) or 1
        return kept


SPEC = PolicySpec(
    name="openhands-summarizing",
    config=OpenHandsSummarizingConfig,
    engine=engine_of(_Rule, "openhands-summarizing", cached=False),
    presets=(Preset("openhands-summarizing", "OpenHands LLMSummarizingCondenser",
                    "OpenHands' summarizing condenser: past max_size events, all but the first and the latest "
                    "half become one summary.", OpenHandsSummarizingConfig,
                    knobs=(Knob("max_size", "Max events in the view", "messages", "max_size"),)),),
    aliases={"max": "max_size", "first": "keep_first", "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    describe=lambda c: f"openhands-summarizing {c.max_size}/{c.keep_first}",
    changed_noun="event(s) condensed",
    options=(Option("keep_first", "Events kept at the start (less than half of max_size)", "number",
                    key="opt_first"),),
    why_nothing=lambda c, sizes: f"the view never held more than {c.max_size} events ({sizes['messages']} messages).",
)
"""OpenHands' LLMSummarizingCondenser, as the registry lists it."""
