"""eino's summarization middleware (cloudwego/eino ``adk/middlewares/summarization`` at
07f7482b, v0.8): before each model call, when the messages number more than
``ContextMessages`` (if set) or the tokens exceed ``ContextTokens``, the model writes a
summary and the history becomes the system messages and that one summary (the user's
messages are written into it, up to a budget).

Exact: the trigger, with eino's quirk: a ``Trigger`` that sets only ``ContextMessages``
leaves ``ContextTokens`` at 0, and "tokens > 0" fires at every call (with no
``Trigger`` the token threshold is 160,000); and that nothing but the system messages
and the summary is kept. Assumed: eino's default counter takes the last reply's
reported total tokens and adds about bytes / 4 for each message after it; a replay
stands its own tokens as sent for that (the log's figure is of the run as recorded, not
as compacted). Modelled: the summary's size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ._checks import flag, whole
from ._compaction import CompactingEngine, engine_of, system_messages
from ._spec import Knob, PolicySpec, Preset

__all__ = ["DEFAULT_CONTEXT_TOKENS", "SPEC", "EinoSummarizationConfig"]

DEFAULT_CONTEXT_TOKENS = 160_000


@dataclass(frozen=True)
class EinoSummarizationConfig:
    """``summarization.Config``'s ``Trigger`` (``TriggerCondition``), by eino's names."""

    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    context_messages: int = 0
    trigger_set: bool = True
    """A ``Trigger`` is given (False: nil, eino's 160,000-token default whatever the fields)."""
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("context_tokens", self.context_tokens)
        whole("context_messages", self.context_messages)
        flag("trigger_set", self.trigger_set)
        whole("summary_tokens", self.summary_tokens)
        if self.trigger_set and self.context_tokens == 0 and self.context_messages == 0:
            raise ConfigError("at least one of context_tokens or context_messages must be set (eino's own check)")


class _Rule:
    def __init__(self, c: EinoSummarizationConfig) -> None:
        self.c = c

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        c = self.c
        if c.trigger_set and c.context_messages > 0 and len(e.visible) > c.context_messages:
            return True
        threshold = c.context_tokens if c.trigger_set else DEFAULT_CONTEXT_TOKENS
        return sent > threshold

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        leading = set()
        for i in e.visible:  # splitSystemAndContextMsgs: the system messages at the start
            if e.msgs[i].role != "system":
                break
            leading.add(i)
        return leading & system_messages(e)


def _go(c: EinoSummarizationConfig) -> str:
    trigger = ("" if not c.trigger_set else
               f"\tTrigger: &summarization.TriggerCondition{{ContextTokens: {c.context_tokens}, "
               f"ContextMessages: {c.context_messages}}},\n")
    return ("mw, err := summarization.New(ctx, &summarization.Config{\n\tModel: chatModel,\n" + trigger + "})\n")


SPEC = PolicySpec(
    name="eino-summarization",
    config=EinoSummarizationConfig,
    engine=engine_of(_Rule, "eino-summarization"),
    presets=(Preset("eino-summarization", "eino summarization middleware",
                    "eino's summarization middleware (v0.8): past the trigger the history becomes the system "
                    "messages and one summary.", EinoSummarizationConfig,
                    export=lambda c: [("eino: adk/middlewares/summarization", "go", _go(c))],
                    knobs=(Knob("context_tokens", "ContextTokens", "tokens", "Trigger.ContextTokens"),
                           Knob("context_messages", "ContextMessages (0: unset)", "messages",
                                "Trigger.ContextMessages"))),),
    aliases={"tokens": "context_tokens", "threshold": "context_tokens", "messages": "context_messages",
             "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    exports=("go",),
    describe=lambda c: f"eino-summarization {c.context_tokens:,}/{c.context_messages}",
    changed_noun="message(s) summarised",
    why_nothing=lambda c, sizes: "the trigger was never met.",
)
"""eino's summarization middleware, as the registry lists it."""
