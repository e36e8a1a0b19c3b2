"""LangChain's ``SummarizationMiddleware`` (langchain 1.x, ``langchain.agents.middleware``):
before each model call, when a trigger clause is met, every message before a cut-off is
replaced by one summary (``HumanMessage``: "Here is a summary of the conversation to
date: ...") and the rest kept; the summary stays in the agent's state, so later calls
count it and may summarise it again.

Exact, checked against the real package with a fake summarising model
(``tests/policies/test_langchain_summarization.py``): the trigger (clauses of ``tokens``,
``messages``, ``fraction``, AND within a clause, OR across a list, counted with
``count_tokens_approximately`` over the state's messages), the cut-off (``keep``:
``("messages", n)`` moved back to the AI message of a tool result it would orphan;
``("tokens", n)`` / ``("fraction", f)`` by LangChain's own binary search), and what is
kept. Modelled: the summary's size (``summary_tokens``, else the run's own summaries'
ratio or 2 % of what it replaces); LangChain's count scales by a provider's reported
usage and reads the last reply's ``usage_metadata`` when its provider matches the
summariser's: a replay has no provider, so neither applies (as with a fake model). The
system prompt is outside LangChain's state: a transcript's system message is neither
counted nor summarised.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..cost.windows import run_context_window
from ..errors import ConfigError
from ..model import Message
from ._compaction import CompactingEngine, engine_of
from ._spec import Knob, Option, PolicySpec, Preset
from .langchain import langchain_tokens

__all__ = ["SPEC", "LangChainSummarizationConfig", "clauses_of", "keep_of"]

_KINDS = ("tokens", "messages", "fraction")
Clause = tuple[tuple[str, float], ...]


def _pair(kind: Any, value: Any, what: str) -> tuple[str, float]:
    if kind not in _KINDS:
        raise ConfigError(f"{what}: unsupported kind {kind!r}; expected tokens, messages or fraction")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{what}: {kind} must be a number, got {value!r}")
    if kind == "fraction":
        if not 0 < value <= 1:
            raise ConfigError(f"{what}: a fraction must be in (0, 1], got {value}")
    elif not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{what}: {kind} must be a whole number > 0, got {value!r}")
    return (kind, value)


def _json(value: Any, what: str) -> Any:
    """A setting given as LangChain's JSON form (the app's text box, a spec)."""
    import json

    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        raise ConfigError(f"{what}: {value[:60]!r} is not JSON (e.g. [\"tokens\", 4000] or "
                          "{\"tokens\": 4000, \"messages\": 10})") from None


def clauses_of(trigger: Any) -> tuple[Clause, ...]:
    """LangChain's trigger forms as clauses (AND within, OR across): ``("tokens", 4000)``,
    ``{"tokens": 4000, "messages": 10}``, a list of either (or their JSON); None: never."""
    trigger = _json(trigger, "trigger")
    if trigger is None:
        return ()
    if isinstance(trigger, Mapping):
        if not trigger:
            raise ConfigError("trigger: a clause needs at least one of tokens, messages, fraction")
        return (tuple(_pair(k, v, "trigger") for k, v in trigger.items()),)
    if isinstance(trigger, (list, tuple)) and len(trigger) == 2 and isinstance(trigger[0], str):
        return ((_pair(trigger[0], trigger[1], "trigger"),),)
    if isinstance(trigger, (list, tuple)):
        out: list[Clause] = []
        for item in trigger:
            if isinstance(item, (list, tuple)) and item and not isinstance(item[0], str):
                out.append(tuple(_pair(k, v, "trigger") for k, v in item))  # our own form, read back
            else:
                out.extend(clauses_of(item))
        return tuple(out)
    raise ConfigError(f"trigger: expected (kind, value), {{kind: value}} or a list of them, got {trigger!r}")


def keep_of(keep: Any) -> tuple[str, float]:
    keep = _json(keep, "keep")
    if isinstance(keep, (list, tuple)) and len(keep) == 2:
        return _pair(keep[0], keep[1], "keep")
    raise ConfigError(f"keep: expected (kind, value) such as [\"messages\", 20], got {keep!r}")


@dataclass(frozen=True)
class LangChainSummarizationConfig:
    """``SummarizationMiddleware``'s settings, by LangChain's names. ``trigger`` takes
    LangChain's forms (a clause is ``(kind, value)`` or a dict of kinds, AND; a list is
    OR); LangChain's default is None (never), toolclear's ``("tokens", 100000)`` so the
    policy does something. ``max_input_tokens`` is the model profile's (for fractions;
    0: the run's model's window)."""

    trigger: Any = ("tokens", 100_000)
    keep: Any = ("messages", 20)
    trim_tokens_to_summarize: int | None = 4000
    summary_tokens: int = 0
    """The summary's tokens (0: modelled from the run)."""
    max_input_tokens: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "trigger", clauses_of(self.trigger))
        object.__setattr__(self, "keep", keep_of(self.keep))
        for name in ("summary_tokens", "max_input_tokens"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"{name}: expected a whole number >= 0, got {v!r}")
        t = self.trim_tokens_to_summarize
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t <= 0):
            raise ConfigError(f"trim_tokens_to_summarize: expected a whole number > 0 or none, got {t!r}")

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return self.trigger

    def spec_value(self, name: str) -> Any:
        """A setting in LangChain's own form (what ``--policy`` and the export write)."""
        if name == "keep":
            return list(self.keep)
        if name == "trigger":
            forms = [list(c[0]) if len(c) == 1 else dict(c) for c in self.clauses]
            return forms[0] if len(forms) == 1 else [dict(c) for c in self.clauses]
        return None


class _Rule:
    """LangChain's decisions over the engine's visible messages (its state)."""

    def __init__(self, config: LangChainSummarizationConfig) -> None:
        self.c = config
        self.limit: int | None = config.max_input_tokens or None
        self.known = bool(config.max_input_tokens)
        # the state's size and tokens, kept as messages arrive (LangChain counts the whole
        # state before every call; recounting it here made a long run quadratic)
        self._epoch, self._seen, self._states, self._total = -1, 0, 0, 0

    def _size(self, e: CompactingEngine) -> tuple[int, int]:
        """The state's messages and LangChain tokens: a compaction starts the count again."""
        if self._epoch != len(e.compactions):
            self._epoch, self._seen, self._states, self._total = len(e.compactions), 0, 0, 0
        vis = e.visible
        for i in vis[self._seen:]:
            if e.msgs[i].role != "system":
                self._states += 1
                self._total += langchain_tokens(e.summary_of(i))
        self._seen = len(vis)
        return self._states, self._total

    def _state(self, e: CompactingEngine) -> list[int]:
        return [i for i in e.visible if e.msgs[i].role != "system"]

    def _max_input(self, e: CompactingEngine) -> int | None:
        if not self.known:
            self.limit, self.known = run_context_window(e.msgs), True
        return self.limit

    def fires(self, e: CompactingEngine, length: int, sent: int) -> bool:
        states, total = self._size(e)
        for clause in self.c.clauses:
            met = True
            for kind, value in clause:
                if kind == "messages" and states < value:
                    met = False
                elif kind == "tokens" and total < value:
                    met = False
                elif kind == "fraction":
                    limit = self._max_input(e)
                    threshold = max(1, int(limit * value)) if limit is not None else None
                    if threshold is None or total < threshold:
                        met = False
                if not met:
                    break
            if met:
                return True
        return False

    def keep(self, e: CompactingEngine, length: int) -> set[int]:
        state = self._state(e)
        msgs = [e.summary_of(i) for i in state]
        cut = self._cutoff(e, msgs)
        if cut <= 0:
            return set(e.visible)
        kept = set(state[cut:]) | {i for i in e.visible if e.msgs[i].role == "system"}
        trim = self.c.trim_tokens_to_summarize
        if trim is not None:
            if not _starts_on_human(msgs[:cut], trim):
                e.fixed_text = TOO_LONG_TOKENS  # LangChain's own text, no model call
            e.read_tokens = min(trim, sum(e.count[i] for i in state[:cut]))
        return kept

    def _cutoff(self, e: CompactingEngine, msgs: list[Message]) -> int:
        kind, value = self.c.keep
        if kind in ("tokens", "fraction"):
            found = self._token_cutoff(e, msgs)
            if found is not None:
                return found
            return _safe_cutoff(msgs, 20)
        return _safe_cutoff(msgs, int(value))

    def _token_cutoff(self, e: CompactingEngine, msgs: list[Message]) -> int | None:
        if not msgs:
            return 0
        kind, value = self.c.keep
        if kind == "fraction":
            limit = self._max_input(e)
            if limit is None:
                return None
            target = int(limit * value)
        else:
            target = int(value)
        target = max(1, target)
        counts = [langchain_tokens(m) for m in msgs]
        if sum(counts) <= target:
            return 0
        suffix = [0] * (len(counts) + 1)
        for i in range(len(counts) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + counts[i]
        left, right = 0, len(msgs)
        candidate = len(msgs)
        for _ in range(len(msgs).bit_length() + 1):
            if left >= right:
                break
            mid = (left + right) // 2
            if suffix[mid] <= target:
                candidate, right = mid, mid
            else:
                left = mid + 1
        if candidate == len(msgs):
            candidate = left
        if candidate >= len(msgs):
            if len(msgs) == 1:
                return 0
            candidate = len(msgs) - 1
        return _safe_point(msgs, candidate)


TOO_LONG = "Previous conversation was too long to summarize."
"""What LangChain writes in place of a summary when what it would summarise, trimmed to
``trim_tokens_to_summarize``, holds no human message to start on (``trim_messages``
with ``start_on="human"`` comes back empty): a long tool loop is summarised to this."""
TOO_LONG_TOKENS = langchain_tokens(Message("user", f"Here is a summary of the conversation to date:\n\n{TOO_LONG}"))


def _starts_on_human(msgs: list[Message], limit: int) -> bool:
    """Whether LangChain's ``trim_messages(strategy="last", start_on="human",
    allow_partial=True, max_tokens=limit)`` keeps anything of ``msgs``: a human message
    among the latest that fit whole, or the one before them, cut to its last lines."""
    total, k = 0, len(msgs)
    counts = [langchain_tokens(m) for m in msgs]
    if sum(counts) <= limit:
        return any(m.role == "user" for m in msgs)
    while k > 0 and total + counts[k - 1] <= limit:
        k -= 1
        total += counts[k]
    if any(m.role == "user" for m in msgs[k:]):
        return True
    if k == 0:
        return False
    partial = msgs[k - 1]
    if partial.role != "user" or not partial.content or (partial.meta and "stands_for_tokens" in partial.meta):
        return False
    last = partial.content.split("\n")[-1]
    return total + langchain_tokens(partial.with_content(last)) <= limit


def _safe_cutoff(msgs: list[Message], keep: int) -> int:
    if len(msgs) <= keep:
        return 0
    return _safe_point(msgs, len(msgs) - keep)


def _safe_point(msgs: list[Message], cut: int) -> int:
    """LangChain's ``_find_safe_cutoff_point``: a cut-off on a tool message moves back to
    the AI message that made the call (or, with none, past the tool messages)."""
    if cut >= len(msgs) or msgs[cut].role != "tool":
        return cut
    ids: set[str] = set()
    idx = cut
    while idx < len(msgs) and msgs[idx].role == "tool":
        if msgs[idx].tool_call_id:
            ids.add(msgs[idx].tool_call_id)
        idx += 1
    for i in range(cut - 1, -1, -1):
        m = msgs[i]
        if m.role == "assistant" and m.tool_calls and ids & {c.id for c in m.tool_calls if c.id}:
            return i
    return idx


def _python(config: LangChainSummarizationConfig) -> str:
    native = config.spec_value("trigger")
    trigger = repr(tuple(native)) if isinstance(native, list) and native and isinstance(native[0], str) else repr(native)
    return ("from langchain.agents import create_agent\n"
            "from langchain.agents.middleware import SummarizationMiddleware\n\n"
            "agent = create_agent(\n    model,\n    tools=tools,\n    middleware=[SummarizationMiddleware(\n"
            f"        model=model,\n        trigger={trigger},\n        keep={config.keep!r},\n"
            f"        trim_tokens_to_summarize={config.trim_tokens_to_summarize!r},\n    )],\n)\n")


def _describe(c: LangChainSummarizationConfig) -> str:
    parts = [" & ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in clause) for clause in c.clauses]
    return f"langchain-summarization at {' or '.join(parts) or 'never'}, keep {c.keep[0]} {c.keep[1]:,}"


SPEC = PolicySpec(
    name="langchain-summarization",
    config=LangChainSummarizationConfig,
    engine=engine_of(_Rule, "langchain-summarization"),
    presets=(Preset("langchain-summarization", "LangChain SummarizationMiddleware",
                    "LangChain's SummarizationMiddleware: when the trigger is met, every message before the kept "
                    "tail becomes one summary, kept in the agent's state.", LangChainSummarizationConfig,
                    export=lambda c: [("LangChain v1: SummarizationMiddleware", "python", _python(c))],
                    knobs=(Knob("summary_tokens", "Summary tokens (0: modelled)", "tokens",
                                "The summary's size; 0 reads it from the run's own compactions."),)),),
    aliases={"summary": "summary_tokens", "trim": "trim_tokens_to_summarize"},
    sticky=True,
    compacts=True,
    exports=("python",),
    describe=_describe,
    changed_noun="message(s) summarised",
    options=(Option("trigger", "trigger (LangChain's form: [kind, n], {kind: n, ...} for AND, a list for OR)",
                    "json", key="opt_trigger"),
             Option("keep", "keep (LangChain's form: [\"messages\", 20] or [\"tokens\", n])", "json",
                    key="opt_keep"),
             Option("trim_tokens_to_summarize", "Tokens the summary call reads", "number_or_none"),),
    why_nothing=lambda c, sizes: f"the trigger ({_describe(c)}) was never met.",
)
"""LangChain's SummarizationMiddleware, as the registry lists it."""
