"""The policy lab: any policy, one history or a whole run, side by side.

``apply`` runs one before-model step, ``replay`` every model call of a run, and both
return a ``Result`` whatever the policy; ``compare`` runs several on the same
transcript and tabulates them. Tokens sent are counted with one counter for every
policy (``counter``, eino's estimate unless given), so the numbers compare; each
policy's own trigger still uses its own counter where it has one (LangChain's
approximation, eino's reduction counter).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from ._engine import Engine, assemble
from ._offload import StorageBackend
from ._replay import model_calls
from ._replay import replay as _replay_clear
from .anthropic_edit import AnthropicClearToolUsesConfig, AnthropicEngine
from .clearing import ClearToolResultConfig, reduce_by_tokens
from .counters import TokenCounter, get_counter
from .errors import ConfigError
from .langchain_edit import LangChainClearToolUsesConfig, LangChainEngine
from .masking import MaskingEngine, ObservationMaskingConfig
from .model import Message, MessageStatus
from .reduction import (
    EinoReductionConfig,
    PartError,
    ToolSchema,
    clear_notice,
    clear_range,
    clear_step,
    go_path_join,
    is_flagged,
    owner,
    reduction_tokens,
    replace_result,
    retention_end,
    truncate,
)
from .result import Result, Step

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["POLICIES", "Comparison", "PolicyConfig", "apply", "compare", "policy_name", "replay"]

PolicyConfig = Union[
    ClearToolResultConfig, EinoReductionConfig, AnthropicClearToolUsesConfig,
    LangChainClearToolUsesConfig, ObservationMaskingConfig,
]

POLICIES: dict[str, type] = {
    "eino": ClearToolResultConfig,
    "eino-reduction": EinoReductionConfig,
    "anthropic": AnthropicClearToolUsesConfig,
    "langchain": LangChainClearToolUsesConfig,
    "masking": ObservationMaskingConfig,
}
"""The CLI's and the app's short names for each policy."""


def policy_name(config: Any) -> str:
    for name, cls in POLICIES.items():
        if isinstance(config, cls):
            return name
    raise ConfigError(f"not a policy config: {type(config).__name__}")


class ReductionEngine:
    """eino's reduction middleware as an agent runs it: each tool result truncated as it
    arrives, the clear phase before each call, its output the next call's state."""

    def __init__(self, messages: tuple[Message, ...], config: EinoReductionConfig,
                 backend: StorageBackend | None, tools: Sequence[ToolSchema], has_backend: bool) -> None:
        self.msgs, self.config, self.backend, self.tools = messages, config, backend, tuple(tools)
        self.has_backend = has_backend
        self.state: list[Message] = []
        self.files: dict[str, str] = {}
        self.overwritten: list[str] = []
        self.truncated: set[int] = set()
        self.cleared: set[int] = set()
        # eino's default counter is a sum over messages (and tools): kept running, so calls
        # below the trigger cost nothing
        self.total: int | None = reduction_tokens((), self.tools) if config.token_counter == "default" else None
        self._overwritten_set: set[str] = set()
        self.sp = 0  # eino's start: the first assistant message without the processed flag
        self.done = 0  # rounds before this index were cleared by an earlier applied call
        self.log: list[tuple[int, int, str, bool]] = []  # (result, its assistant, file, empty id) as cleared
        self.log_from = 0  # first log entry at or after the start
        self.ow = 0  # log entries before this one had their file rewritten already
        self.empties: list[int] = []  # log positions of results whose call id is empty
        # (from, up to, changes, writes, changed) of the rounds a failed gate left pending
        self._pending: tuple[int, int, dict[int, Message], list[tuple[str, str]], list[int]] | None = None

    def _arrive(self, m: Message, i: int) -> Message:
        if m.role != "tool" or self.config.skip_truncation:
            return m
        parts = m._raw.get("user_input_multi_content") if m._raw is not None else None
        if isinstance(parts, list) and parts:
            return m  # a multi-part result reaches eino as parts; toolclear keeps it (see README)
        done = truncate(m.content, m.tool_call_id, m.tool_name, self.config, self.backend,
                        mode="invokable", has_backend=self.has_backend)
        if not done.truncated:
            return m
        self.files.update(done.files)
        self.truncated.add(i)
        return m.with_content(done.result)

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        for i in range(len(self.state), length):
            m = self._arrive(self.msgs[i], i)
            self.state.append(m)
            if self.total is not None:
                self.total += reduction_tokens((m,))
            if m is not self.msgs[i]:
                delta[i] = m
        if self.total is None:
            return self._step(length, delta)
        if self.total < self.config.effective_max_tokens_for_clear:
            return delta  # below the trigger: the clear phase would stop at its first step
        return self._fast_step(delta)

    def _step(self, length: int, delta: dict[int, Message | None]) -> dict[int, Message | None]:
        """eino's clear phase as ``clear_step`` runs it (any counter): O(n) per call."""
        step = clear_step(self.state, self.config, backend=self.backend, has_backend=self.has_backend,
                          tools=self.tools)
        if step.error:
            raise ConfigError(f"eino's reduction stopped at message #{length}: {step.error}")
        for j in step.changed:
            delta[j] = step.messages[j]
            self.cleared.add(j)
        self.files.update(step.files)
        for path in step.overwritten:
            self._overwrote(path)
        self.state = list(step.messages)
        return delta

    def _overwrote(self, path: str) -> None:
        if path not in self._overwritten_set:
            self._overwritten_set.add(path)
            self.overwritten.append(path)

    def _fast_step(self, delta: dict[int, Message | None]) -> dict[int, Message | None]:
        """The same clear phase, done once per message over the run.

        eino restarts at the first unflagged assistant message, which after a plain
        reply stays put, so each call clears again rounds an earlier call cleared: their
        content stays the placeholder and their files are rewritten with it (recorded
        the first time, when the original is lost), and only rounds new since the last
        applied call need work. Calls with empty ids get a fresh UUID each time, as in
        eino, so their placeholder (and file) changes at every such call."""
        cfg, st, log = self.config, self.state, self.log
        while self.sp < len(st) and not (st[self.sp].role == "assistant" and not is_flagged(st[self.sp])):
            self.sp += 1
        start, end = self.sp, retention_end(st, cfg.effective_retention)
        if start >= end:
            return delta
        while self.log_from < len(log) and log[self.log_from][1] < start:
            self.log_from += 1
        limit = min(self.done, end)
        overlay = _Overlay(st)
        writes: list[tuple[str, str]] = []
        rewrites: list[str] = []
        ow = max(self.ow, self.log_from)
        while ow < len(log) and log[ow][1] < limit:
            j, _, path, empty = log[ow]
            ow += 1
            if self.has_backend and not empty:
                writes.append((path, replace_result(st[j], st[j].content)[1]))
                rewrites.append(path)
        again: list[tuple[int, str]] = []  # (log position, new path) of empty-id results cleared again
        for k in self.empties:
            j, a, _, _ = log[k]
            if start <= a < limit and self.has_backend:
                path = go_path_join(cfg.effective_root_dir, "clear", _new_uuid())
                overlay[j], content = replace_result(st[j], clear_notice(cfg, path))
                writes.append((path, content))
                again.append((k, path))
        changed: list[int] = [log[k][0] for k, _ in again]
        first_new = len(changed)
        new_writes = len(writes)
        # the rounds since the last applied call: worked out again only past where the
        # previous call (whose gate failed) got to, as they have not changed since
        new_from = max(start, self.done)
        pend = self._pending
        if pend is not None and pend[0] == new_from and pend[1] <= end:
            overlay.changes.update(pend[2])
            writes += pend[3]
            changed += pend[4]
            new_from = pend[1]
        try:
            clear_range(overlay, new_from, end, cfg, self.has_backend, _new_uuid, writes, changed, None)
        except PartError as exc:
            raise ConfigError(f"eino's reduction stopped at message #{len(st)}: {exc}") from None
        # a result can be found twice (duplicate ids: the first match wins for both calls)
        saved = sum(reduction_tokens((st[j],)) - reduction_tokens((overlay[j],)) for j in set(changed))
        if cfg.clear_at_least_tokens > 0 and saved < cfg.clear_at_least_tokens:
            # eino's gate: nothing at all changes, no flags, no files
            mine = {i: m for i, m in overlay.changes.items() if i >= max(start, self.done)}
            self._pending = (max(start, self.done), end, mine, writes[new_writes:], changed[first_new:])
            return delta
        self._pending = None
        for i, m in overlay.changes.items():
            st[i] = m
        for k, path in again:
            log[k] = (log[k][0], log[k][1], path, True)
        new_paths = [p for p, _ in writes[new_writes:]]
        for n, j in enumerate(changed[first_new:]):
            a = owner(st, j)
            empty = not next((c.id for c in st[a].tool_calls if c.id == st[j].tool_call_id), "")
            if empty:
                self.empties.append(len(log))
            log.append((j, a, new_paths[n] if self.has_backend else "", empty))
        for j in changed:
            delta[j] = st[j]
            self.cleared.add(j)
        for path, content in writes:
            self.files[path] = content
            if self.backend is not None:
                self.backend.write(path, content)
        for path in rewrites:
            self._overwrote(path)
        self.ow, self.done = ow, end
        assert self.total is not None
        self.total -= saved
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if self.msgs[index].role != "tool":
            return MessageStatus.KEPT
        if index in self.cleared and changed:
            return MessageStatus.CLEARED
        if index in self.truncated:
            return MessageStatus.OFFLOADED
        return MessageStatus.KEPT


def _new_uuid() -> str:
    import uuid

    return str(uuid.uuid4())


class _Overlay:
    """A list of messages with changes kept aside until committed (eino's gate)."""

    def __init__(self, base: list[Message]) -> None:
        self.base, self.changes = base, {}  # type: ignore[var-annotated]

    def __getitem__(self, i: int) -> Message:
        return self.changes.get(i, self.base[i])

    def __setitem__(self, i: int, m: Message) -> None:
        self.changes[i] = m

    def __len__(self) -> int:
        return len(self.base)


def _engine(msgs: tuple[Message, ...], config: Any, counter: TokenCounter, backend: StorageBackend | None,
            tools: Sequence[ToolSchema]) -> Engine:
    if isinstance(config, AnthropicClearToolUsesConfig):
        return AnthropicEngine(msgs, config, counter)
    if isinstance(config, LangChainClearToolUsesConfig):
        return LangChainEngine(msgs, config)
    if isinstance(config, ObservationMaskingConfig):
        return MaskingEngine(msgs, config)
    if isinstance(config, EinoReductionConfig):
        if backend is None and not config.skip_truncation:
            raise ConfigError("eino's reduction needs a backend unless skip_truncation is set "
                              "(eino: backend must be set when not skipping truncation)")
        return ReductionEngine(msgs, config, backend, tools, backend is not None)
    raise ConfigError(f"not a policy config: {type(config).__name__}")


def _run(messages: Sequence[Message], config: Any, counter: Any, backend: StorageBackend | None,
         tools: Sequence[ToolSchema], mode: str) -> Result:
    msgs = tuple(messages)
    count = get_counter(counter)
    engine = _engine(msgs, config, count, backend, tools)
    calls = model_calls(msgs) if mode == "replay" else [len(msgs)]
    final = None
    files: dict[str, str] = {}
    notes: tuple[str, ...] = ()
    if isinstance(engine, ReductionEngine):
        result = assemble(msgs, engine, config, count, calls, mode=mode, final=None)
        files = engine.files
        if engine.overwritten:
            notes = (f"eino overwrote {len(engine.overwritten)} saved file(s) with the placeholder: after a plain "
                     "assistant reply it clears already-cleared rounds again and saves what they hold now "
                     "(REDUCTION.md C5), so the original results are lost from storage, e.g. "
                     f"{engine.overwritten[0]}",)
        final = tuple(engine.state)
        return _with(result, messages=final, files=files, notes=notes)
    return assemble(msgs, engine, config, count, calls, mode=mode)


def _with(result: Result, **changes: Any) -> Result:
    from dataclasses import replace

    return replace(result, **changes)


def _from_clear(messages: Sequence[Message], config: ClearToolResultConfig, mode: str, **kw: Any) -> Result:
    if mode == "replay":
        return _replay_clear(messages, config, **kw)
    r = reduce_by_tokens(messages, config, **kw)
    total = sum(r.token_counts_original or r.token_counts)
    step = Step(len(r.messages), tuple(r.cleared_indices), sum(r.token_counts_after), total, False,
                r.total_tool_result_tokens, r.triggered, r.recent_start_index if r.triggered else None)
    cleared_at = [None] * len(r.messages)
    for i in r.cleared_indices:
        cleared_at[i] = len(r.messages)  # type: ignore[call-overload]
    return Result(messages=r.messages, steps=(step,), token_counts=r.token_counts, cleared_at=tuple(cleared_at),
                  config=config, offloads=r.offloads, token_counts_original=r.token_counts_original,
                  mode="single pass", _statuses=r.statuses, _counts_after=r.token_counts_after)


def apply(
    messages: Sequence[Message],
    config: PolicyConfig | None = None,
    backend: StorageBackend | None = None,
    tools: Sequence[ToolSchema] = (),
    *,
    counter: str | TokenCounter | None = None,
) -> Result:
    """One before-model step of ``config`` on ``messages`` (eino's clear policy when
    None). For eino's reduction the returned messages carry eino's processed flag, so
    they are the state the next call starts from; ``backend`` receives its files."""
    config = config if config is not None else ClearToolResultConfig()
    if isinstance(config, ClearToolResultConfig):
        return _from_clear(messages, config, "single pass", backend=backend)
    return _run(messages, config, counter, backend, tools, "single pass")


def replay(
    messages: Sequence[Message],
    config: PolicyConfig | None = None,
    *,
    backend: StorageBackend | None = None,
    tools: Sequence[ToolSchema] = (),
    counter: str | TokenCounter | None = None,
    offloading: Any = None,
) -> Result:
    """The policy before every model call of a whole run (each assistant message is a
    call, its context the messages before it), then once over the whole history."""
    config = config if config is not None else ClearToolResultConfig()
    if isinstance(config, ClearToolResultConfig):
        return _replay_clear(messages, config, offloading=offloading, backend=backend)
    if offloading is not None:
        raise ConfigError("offloading belongs to eino's clear policy; eino's reduction truncates instead")
    return _run(messages, config, counter, backend, tools, "replay")


@dataclass(frozen=True)
class Comparison:
    """Several policies on one transcript."""

    configs: tuple[Any, ...]
    results: tuple[Result, ...]
    labels: tuple[str, ...]

    @property
    def table(self) -> pd.DataFrame:
        """One row per config: peak context, tokens sent, results cleared, cache breaks."""
        import pandas as pd

        rows = []
        for label, cfg, r in zip(self.labels, self.configs, self.results):
            calls = r.model_call_steps
            sent, unreduced = r.tokens_sent, r.tokens_sent_unreduced
            rows.append({
                "policy": label,
                "kind": policy_name(cfg),
                "model_calls": len(calls),
                "peak_context": max((s.context_tokens for s in calls), default=0),
                "peak_context_unreduced": max((s.context_tokens_unreduced for s in calls), default=0),
                "tokens_sent": sent,
                "tokens_sent_unreduced": unreduced,
                "tokens_saved": unreduced - sent,
                "saved_percent": round(100 * (unreduced - sent) / unreduced, 2) if unreduced else 0.0,
                "results_changed": len(r.cleared_indices),
                "cache_breaks": r.cache_breaks,
                "final_tokens": r.tokens_after,
            })
        return pd.DataFrame(rows)


def _label(config: Any) -> str:
    name = policy_name(config)
    if isinstance(config, ClearToolResultConfig):
        return f"eino {config.tool_result_token_threshold:,}/{config.keep_recent_tokens:,}"
    if isinstance(config, EinoReductionConfig):
        return f"eino-reduction {config.effective_max_tokens_for_clear:,}/{config.effective_retention}"
    if isinstance(config, AnthropicClearToolUsesConfig):
        return f"anthropic {config.trigger_input_tokens:,}/{config.keep_tool_uses}"
    if isinstance(config, LangChainClearToolUsesConfig):
        return f"langchain {config.trigger:,}/{config.keep}"
    if isinstance(config, ObservationMaskingConfig):
        return f"masking last {config.keep_last} {config.unit}"
    return name  # pragma: no cover


def compare(
    messages: Sequence[Message],
    configs: Sequence[PolicyConfig],
    *,
    mode: str = "replay",
    counter: str | TokenCounter | None = None,
    backend_factory: Any = None,
) -> Comparison:
    """Every config on the same transcript, with the same counter (a replay each, or a
    single pass with ``mode="single pass"``). A policy that needs a backend gets a fresh
    ``MemoryBackend`` (or ``backend_factory()``)."""
    from ._offload import MemoryBackend

    msgs = tuple(messages)
    results = []
    for cfg in configs:
        needs = isinstance(cfg, EinoReductionConfig) and not cfg.skip_truncation
        backend = (backend_factory or MemoryBackend)() if needs else None
        if mode == "replay":
            results.append(replay(msgs, cfg, backend=backend, counter=counter))
        else:
            results.append(apply(msgs, cfg, backend=backend, counter=counter))
    labels = [_label(c) for c in configs]
    seen: dict[str, int] = {}
    for k, lab in enumerate(labels):
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1:
            labels[k] = f"{lab} ({seen[lab]})"
    return Comparison(tuple(configs), tuple(results), tuple(labels))
