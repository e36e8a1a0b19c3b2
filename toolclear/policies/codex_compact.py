"""Codex CLI's auto-compact (openai/codex ``codex-rs/core/src/compact.rs`` at 0100b103):
when the context passes ``model_auto_compact_token_limit`` (by default 90 % of the
model's window), the model writes a summary and the history becomes the initial context,
the latest user messages (newest first, up to 20,000 tokens counted as bytes / 4; Codex
cuts the one that does not fit to what is left) and the summary, as a user message.

Exact: the trigger and which user messages are kept (``collect_user_messages`` leaves out
earlier summaries and the session's AGENTS.md and environment context, which the initial
context sends anyway). Not reproduced: the user message Codex cuts to fit is dropped here
whole. Modelled: the summary's size. Codex with an OpenAI model compacts remotely
(``/responses/compact``): priced as a call that reads the context and writes the summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cost.logfacts import CODEX_USER_MESSAGES_KEPT, codex_kept_users
from ..cost.windows import run_context_window
from ._checks import whole
from ._compaction import CompactingEngine, TokenTrigger, engine_of, system_messages
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "CodexCompactConfig", "USER_MESSAGES_KEPT"]

USER_MESSAGES_KEPT = CODEX_USER_MESSAGES_KEPT
DEFAULT_WINDOW = 272_000


@dataclass(frozen=True)
class CodexCompactConfig:
    """Codex's settings (``config.toml``)."""

    model_auto_compact_token_limit: int = 0
    """The trigger; 0: 90 % of the model's window (as the log records it, else the model's)."""
    summary_tokens: int = 0

    def __post_init__(self) -> None:
        whole("model_auto_compact_token_limit", self.model_auto_compact_token_limit)
        whole("summary_tokens", self.summary_tokens)


def _user_messages(e: CompactingEngine) -> set[int]:
    users = [(i, e.msgs[i].content) for i in e.visible if e.msgs[i].role == "user" and i not in e.summaries]
    return system_messages(e) | set(codex_kept_users(users))


def _rule(config: CodexCompactConfig) -> TokenTrigger:
    found: dict[str, int] = {}

    def limit(e: CompactingEngine) -> int:
        if "t" not in found:
            found["t"] = config.model_auto_compact_token_limit or 9 * (run_context_window(e.msgs) or DEFAULT_WINDOW) // 10
        return found["t"]
    return TokenTrigger(limit, _user_messages, strict=False)


def _toml(c: CodexCompactConfig) -> str:
    return ("# ~/.codex/config.toml\n" + (f"model_auto_compact_token_limit = {c.model_auto_compact_token_limit}\n"
                                          if c.model_auto_compact_token_limit else
                                          "# model_auto_compact_token_limit unset: 90 % of the model's window\n"))


SPEC = PolicySpec(
    name="codex-compact",
    config=CodexCompactConfig,
    engine=engine_of(_rule, "codex-compact"),
    presets=(Preset("codex-compact", "Codex CLI auto-compact",
                    "Codex CLI's auto-compact: past the limit the history becomes the latest user messages (up to "
                    "20,000 tokens) and a summary.", CodexCompactConfig,
                    export=lambda c: [("Codex CLI: config.toml", "toml", _toml(c))],
                    knobs=(Knob("model_auto_compact_token_limit", "Limit (tokens; 0: 90 % of the window)", "tokens",
                                "model_auto_compact_token_limit"),
                           Knob("summary_tokens", "Summary tokens (0: modelled)", "tokens"))),),
    aliases={"limit": "model_auto_compact_token_limit", "threshold": "model_auto_compact_token_limit",
             "summary": "summary_tokens"},
    sticky=True,
    compacts=True,
    exports=("toml",),
    describe=lambda c: (f"codex-compact at {c.model_auto_compact_token_limit:,}" if c.model_auto_compact_token_limit
                        else "codex-compact at 90% of the window"),
    changed_noun="message(s) compacted",
    why_nothing=lambda c, sizes: "the context never passed the auto-compact limit.",
)
"""Codex CLI's auto-compact, as the registry lists it."""
