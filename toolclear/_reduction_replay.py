"""eino's reduction middleware over a whole run, each round worked once.

Equal to calling ``reduction.clear_step`` before every model call with the state
carried (the tests check it call by call, files included), without redoing the work
eino redoes: see ``ReductionEngine._fast_step``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from ._offload import StorageBackend
from .errors import ConfigError
from .model import Message, MessageStatus
from .reduction import (
    EinoReductionConfig,
    PartError,
    ToolSchema,
    clear_notice,
    clear_range,
    clear_step,
    from_output_part,
    go_path_join,
    is_flagged,
    owner,
    rebuilt,
    reduction_tokens,
    replace_result,
    retention_end,
    to_output_part,
    truncate,
)

__all__ = ["ReductionEngine"]


class ReductionEngine:
    """eino's reduction middleware as an agent runs it: each tool result truncated as it
    arrives, the clear phase before each call, its output the next call's state."""

    def __init__(self, messages: tuple[Message, ...], config: EinoReductionConfig,
                 backend: StorageBackend | None, tools: Sequence[ToolSchema], has_backend: bool,
                 arrivals: bool = True) -> None:
        self.msgs, self.config, self.backend, self.tools = messages, config, backend, tuple(tools)
        self.arrivals = arrivals  # truncate results as they arrive (a replay; not one before-model step)
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
        """The result as the model receives it: truncated by eino's tool wrapper (a
        multi-part result through the enhanced wrapper, as the parts the tool returned)."""
        if m.role != "tool" or self.config.skip_truncation or not self.arrivals:
            return m
        parts = m._raw.get("user_input_multi_content") if m._raw is not None else None
        try:
            if isinstance(parts, list) and parts:
                out = [to_output_part(p if isinstance(p, dict) else {}) for p in parts]
                done = truncate(out, m.tool_call_id, m.tool_name, self.config, self.backend,
                                mode="enhanced", has_backend=self.has_backend)
                new = rebuilt(m, user_input_multi_content=[from_output_part(p) for p in done.result]) \
                    if done.truncated else m
            else:
                done = truncate(m.content, m.tool_call_id, m.tool_name, self.config, self.backend,
                                mode="invokable", has_backend=self.has_backend)
                new = m.with_content(done.result) if done.truncated else m
        except PartError as exc:
            raise ConfigError(f"eino's reduction stopped at message #{i}: {exc}") from None
        if not done.truncated:
            return m
        self.files.update(done.files)
        self.truncated.add(i)
        return new

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
        cfg, st = self.config, self.state
        while self.sp < len(st) and not (st[self.sp].role == "assistant" and not is_flagged(st[self.sp])):
            self.sp += 1
        start, end = self.sp, retention_end(st, cfg.effective_retention)
        if start >= end:
            return delta
        overlay = _Overlay(st)
        writes: list[tuple[str, str]] = []
        ow, rewrites, again = self._again(start, min(self.done, end), overlay, writes)
        changed: list[int] = [self.log[k][0] for k, _ in again]
        first_new, new_writes = len(changed), len(writes)
        # the rounds since the last applied call: worked out again only past where the
        # previous call (whose gate failed) got to, as they have not changed since
        new_from = fresh = max(start, self.done)
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
        if 0 < cfg.clear_at_least_tokens and saved < cfg.clear_at_least_tokens:
            # eino's gate: nothing at all changes, no flags, no files
            mine = {i: m for i, m in overlay.changes.items() if i >= fresh}
            self._pending = (fresh, end, mine, writes[new_writes:], changed[first_new:])
            return delta
        self._pending = None
        for i, m in overlay.changes.items():
            st[i] = m
        self._log(again, changed[first_new:], [p for p, _ in writes[new_writes:]])
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

    def _again(self, start: int, limit: int, overlay: _Overlay, writes: list[tuple[str, str]],
               ) -> tuple[int, list[str], list[tuple[int, str]]]:
        """What clearing rounds in [start, limit) again does: rewrite each file with the
        placeholder (once: later rewrites write the same text), and give results of
        calls without an id a fresh UUID path."""
        log, st = self.log, self.state
        while self.log_from < len(log) and log[self.log_from][1] < start:
            self.log_from += 1
        rewrites: list[str] = []
        ow = max(self.ow, self.log_from)
        while ow < len(log) and log[ow][1] < limit:
            j, _, path, empty = log[ow]
            ow += 1
            if self.has_backend and not empty:
                writes.append((path, replace_result(st[j], st[j].content)[1]))
                rewrites.append(path)
        again: list[tuple[int, str]] = []  # (log position, new path)
        if self.has_backend:
            for k in self.empties:
                j, a, _, _ = log[k]
                if start <= a < limit:
                    path = go_path_join(self.config.effective_root_dir, "clear", _new_uuid())
                    overlay[j], content = replace_result(st[j], clear_notice(self.config, path))
                    writes.append((path, content))
                    again.append((k, path))
        return ow, rewrites, again

    def _log(self, again: list[tuple[int, str]], new: list[int], paths: list[str]) -> None:
        """Remember each newly cleared result (and its file) for later calls."""
        st, log = self.state, self.log
        for k, path in again:
            log[k] = (log[k][0], log[k][1], path, True)
        for n, j in enumerate(new):
            a = owner(st, j)
            empty = not next((c.id for c in st[a].tool_calls if c.id == st[j].tool_call_id), "")
            if empty:
                self.empties.append(len(log))
            log.append((j, a, paths[n] if self.has_backend else "", empty))

    def status(self, index: int, changed: bool) -> MessageStatus:
        if self.msgs[index].role != "tool":
            return MessageStatus.KEPT
        if index in self.cleared and changed:
            return MessageStatus.CLEARED
        if index in self.truncated:
            return MessageStatus.OFFLOADED
        return MessageStatus.KEPT


def _new_uuid() -> str:
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
