"""eino's current reduction middleware (``adk/middlewares/reduction``), faithfully.

Two phases. **Truncation** when a tool returns: a text result longer than
``max_length_for_trunc`` bytes is saved whole to ``{root_dir}/trunc/{call id}`` and
the model sees a ``<persisted-output>`` notice with its head and tail (``truncate``).
**Clear** before each model call: once the whole conversation plus the tool schemas
counts ``max_tokens_for_clear`` tokens, the results of older tool-call rounds become a
placeholder, or, with a backend, a notice naming the file each was saved to
(``clear_step``). The processed flag travels in each assistant message's ``extra``
exactly as eino writes it, so the output of one call is the state of the next.

Every rule, number and string follows eino's own Go code at commit ``ca0441ac``; the
conformance vectors recorded from it (``tests/data/eino_reduction_vectors.jsonl.gz``)
pass. Where eino misbehaves (a re-clear after a plain assistant reply overwrites a
saved file with the placeholder), this does the same and says so in ``overwritten``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import ConfigError
from ..model import Message, MessageStatus
from . import _checks as checks
from ._eino_reduction_parts import (
    _CLEARED,
    PROCESSED_FLAG,
    ClearStep,
    PartError,
    ReductionCounter,
    ToolSchema,
    Truncated,
    _truncate_part_stream,
    _truncate_parts,
    _truncate_stream,
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
    to_output_part,
)
from ._export import go_list, go_str
from ._spec import Knob, Option, PolicySpec, Preset
from .offload import StorageBackend

__all__ = [
    "PROCESSED_FLAG",
    "SPEC",
    "ClearStep",
    "EinoReductionConfig",
    "ReductionEngine",
    "Truncated",
    "clear_step",
    "eino_reduction_go",
    "go_path_join",
    "reduction_tokens",
    "truncate",
]


@dataclass(frozen=True)
class EinoReductionConfig:
    """eino's ``reduction.Config`` with its names in snake_case and its zero values:
    ``0`` (or ``""``) means eino's default, exactly as ``reduction.New`` reads it.

    ``tool_config`` maps a tool name to ``{"skip_truncation": bool, "skip_clear": bool}``.
    ``token_counter`` is ``"default"`` (eino's counter, see ``reduction_tokens``),
    ``"eino_test_bytes"`` (the counter of eino's own unit test), or a callable
    ``(messages, tools) -> int``.
    """

    max_tokens_for_clear: int = 160_000
    clear_retention_suffix_limit: int = 1
    clear_at_least_tokens: int = 0
    clear_exclude_tools: tuple[str, ...] = ()
    max_length_for_trunc: int = 50_000
    trunc_exclude_tools: tuple[str, ...] = ()
    skip_truncation: bool = False
    skip_clear: bool = False
    read_file_tool_name: str = "read_file"
    root_dir: str = "/tmp"
    language: Literal["en", "zh"] = "en"
    token_counter: str | ReductionCounter = "default"
    tool_config: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("max_tokens_for_clear", "clear_retention_suffix_limit", "clear_at_least_tokens",
                     "max_length_for_trunc"):
            # eino reads 0 (and for some fields a negative number) in its own ways, recorded in
            # the vectors (REDUCTION.md): any whole number is taken, as eino takes it
            checks.whole(name, getattr(self, name), minimum=-(2**63))
        for name in ("clear_exclude_tools", "trunc_exclude_tools"):
            value = getattr(self, name)
            if value is None:
                value = ()
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{name}: expected a list of tool names, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in ("skip_truncation", "skip_clear"):
            checks.flag(name, getattr(self, name))
        if self.language not in _CLEARED:
            raise ConfigError(f"language: expected 'en' or 'zh', got {self.language!r}")
        tc = self.tool_config or {}
        if not isinstance(tc, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) and set(v) <= {"skip_truncation", "skip_clear"}
            and all(isinstance(b, bool) for b in v.values()) for k, v in tc.items()
        ):
            raise ConfigError("tool_config: expected {tool name: {'skip_truncation': bool, 'skip_clear': bool}}")
        object.__setattr__(self, "tool_config", {k: dict(v) for k, v in tc.items()})
        if not callable(self.token_counter) and self.token_counter not in ("default", "eino_test_bytes"):
            raise ConfigError(f"token_counter: expected 'default', 'eino_test_bytes' or a callable, "
                              f"got {self.token_counter!r}")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EinoReductionConfig:
        """From eino's fields as the vectors (and a JSON settings file) spell them."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: (v if v is not None else ({} if k == "tool_config" else ()))
                      for k, v in d.items() if k in known})

    # -- what eino actually uses (reduction.go:260-292)
    @property
    def effective_max_tokens_for_clear(self) -> int:
        return self.max_tokens_for_clear or 160_000

    @property
    def effective_retention(self) -> int:
        return self.clear_retention_suffix_limit or 1

    @property
    def effective_max_length_for_trunc(self) -> int:
        return self.max_length_for_trunc or 50_000

    @property
    def effective_root_dir(self) -> str:
        return self.root_dir or "/tmp"

    @property
    def effective_read_tool(self) -> str:
        return self.read_file_tool_name or "read_file"

    @property
    def placeholder(self) -> str:
        """What a cleared result holds without a backend."""
        return _CLEARED[self.language]

    def effective(self) -> dict[str, Any]:
        """The values eino uses, as its ``effective_config`` names them."""
        return {
            "clear_at_least_tokens": self.clear_at_least_tokens,
            "clear_retention_suffix_limit": self.effective_retention,
            "max_length_for_trunc": self.effective_max_length_for_trunc,
            "max_tokens_for_clear": self.effective_max_tokens_for_clear,
            "read_file_tool_name": self.effective_read_tool,
            "root_dir": self.effective_root_dir,
        }

    def clear_disabled(self, tool: str) -> bool:
        """A tool's clear handler is off: its own ``skip_clear``, or the global one
        (an entry with ``skip_clear: false`` does not turn it back on)."""
        return bool(self.tool_config.get(tool, {}).get("skip_clear")) or self.skip_clear

    def trunc_disabled(self, tool: str) -> bool:
        return (self.skip_truncation or bool(self.tool_config.get(tool, {}).get("skip_truncation"))
                or tool in self.trunc_exclude_tools)


# ------------------------------------------------------------------ the replay
# eino's reduction middleware over a whole run, each round worked once.
# 
# Equal to calling ``reduction.clear_step`` before every model call with the state
# carried (the tests check it call by call, files included), without redoing the work
# eino redoes: see ``ReductionEngine._fast_step``.


def truncate(
    result: Any,
    tool_call_id: str,
    tool_name: str,
    config: EinoReductionConfig | None = None,
    backend: StorageBackend | None = None,
    *,
    mode: Literal["invokable", "enhanced", "stream", "enhanced_stream"] | None = None,
    has_backend: bool | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> Truncated:
    """eino's truncation of one tool result as the tool returns (reduction.go:427-938).

    ``result`` is a string (``invokable``), a list of parts (``enhanced``), or, for
    streams, an iterable of string chunks (``stream``) or of lists of parts
    (``enhanced_stream``); ``mode`` says which when the shape alone cannot. Like
    ``reduction.New``, refuses to run without a backend unless truncation is skipped.
    """
    config = config or EinoReductionConfig()
    files_on = backend is not None if has_backend is None else has_backend
    if not config.skip_truncation and not files_on:
        raise ConfigError("backend must be set when not skipping truncation")
    if mode is None:
        if isinstance(result, str):
            mode = "invokable"
        else:
            result = list(result)
            if result and all(isinstance(c, str) for c in result):
                mode = "stream"
            elif result and all(isinstance(c, (list, tuple)) for c in result):
                mode = "enhanced_stream"
            else:
                mode = "enhanced"
    if config.trunc_disabled(tool_name):
        if mode in ("stream", "enhanced_stream"):
            return Truncated(list(result), False, None, {}, ())
        return Truncated(result, False, None, {}, ())

    def path_for() -> str:
        return go_path_join(config.effective_root_dir, "trunc", tool_call_id or new_id())

    new: Any
    if mode == "invokable":
        parts, path, content = _truncate_parts([{"type": "text", "text": result}], path_for, config)
        new = parts[0]["text"]
    elif mode == "enhanced":
        new, path, content = _truncate_parts([dict(p) for p in result], path_for, config)
    elif mode == "stream":
        new, path, content = _truncate_stream(result, path_for, config)
    else:
        new, path, content = _truncate_part_stream(result, path_for, config)
    if path is None:
        return Truncated(new, False, None, {}, ())
    if backend is not None:
        backend.write(path, content)
    return Truncated(new, True, path, {path: content}, (path,))


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
        self._calling: list[int] = []  # the assistant messages with tool calls in the state, in order
        self._scanned = 0  # the state's messages looked at for them
        self.log: list[tuple[int, int, str, bool]] = []  # (result, its assistant, file, empty id) as cleared
        self.log_from = 0  # first log entry at or after the start
        self.ow = 0  # log entries before this one had their file rewritten already
        self.empties: list[int] = []  # log positions of results whose call id is empty
        # (from, up to, changes, writes, changed) of the rounds a failed gate left pending
        self._pending: tuple[int, int, dict[int, Message], list[tuple[str, str]], list[int]] | None = None

    def finish(self, result: Any) -> Any:
        """The replay's result as eino leaves it (its state, its files)."""
        return _finish(self, result)

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

    def _retention_end(self, st: Sequence[Message], retention: int) -> int:
        """``retention_end(st, retention)`` from the calling messages found so far: the state
        only grows, and a message's role and calls never change in it, so each is looked at
        once (walking back from the end at every call was quadratic on a run whose later
        calls carry no tool calls: 20,000 lines took 5 s)."""
        calling = self._calling
        for i in range(self._scanned, len(st)):
            m = st[i]
            if m.role == "assistant" and m.tool_calls:
                calling.append(i)
        self._scanned = len(st)
        if retention <= 0:
            return len(st)
        return calling[-retention] if len(calling) >= retention else 0

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
        start, end = self.sp, self._retention_end(st, cfg.effective_retention)
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


def eino_reduction_go(config: EinoReductionConfig) -> str:
    """eino Go for the reduction middleware (``adk/middlewares/reduction``)."""
    lines = [
        'import "github.com/cloudwego/eino/adk/middlewares/reduction"',
        "",
        "// backend: where truncated and cleared results are saved (required unless SkipTruncation)",
        "mw, err := reduction.New(ctx, &reduction.Config{",
        "\tBackend:                   backend,",
        f"\tSkipTruncation:            {str(config.skip_truncation).lower()},",
        f"\tSkipClear:                 {str(config.skip_clear).lower()},",
        f"\tMaxLengthForTrunc:         {config.max_length_for_trunc},",
        f"\tTruncExcludeTools:         {go_list(config.trunc_exclude_tools)},",
        f"\tMaxTokensForClear:         {config.max_tokens_for_clear},",
        f"\tClearRetentionSuffixLimit: {config.clear_retention_suffix_limit},",
        f"\tClearAtLeastTokens:        {config.clear_at_least_tokens},",
        f"\tClearExcludeTools:         {go_list(config.clear_exclude_tools)},",
        f"\tReadFileToolName:          {go_str(config.read_file_tool_name)},",
        f"\tRootDir:                   {go_str(config.root_dir)},",
        "})",
    ]
    if config.language != "en":
        lines.insert(2, f'adk.SetLanguage({go_str(config.language)}) // notices in {config.language}')
    return "\n".join(lines) + "\n"


def _finish(engine: ReductionEngine, result: Any) -> Any:
    """eino's own state is the run's final history, with the files it saved; say so when
    it overwrote a saved file with the placeholder."""
    from dataclasses import replace

    notes: tuple[str, ...] = ()
    if engine.overwritten:
        notes = (f"eino overwrote {len(engine.overwritten)} saved file(s) with the placeholder: after a plain "
                 "assistant reply it clears already-cleared rounds again and saves what they hold now "
                 "(REDUCTION.md C5), so the original results are lost from storage, e.g. "
                 f"{engine.overwritten[0]}",)
    return replace(result, messages=tuple(engine.state), files=engine.files, notes=notes)


def _engine(messages: Sequence[Message], config: EinoReductionConfig, counter: Any, *,
            backend: StorageBackend | None = None, tools: Sequence[ToolSchema] = (),
            mode: str = "replay", **_: object) -> ReductionEngine:
    if backend is None and not config.skip_truncation:
        raise ConfigError("eino's reduction needs a backend unless skip_truncation is set "
                          "(eino: backend must be set when not skipping truncation)")
    # one before-model step is the clear phase alone; a replay also truncates each
    # result as its tool returns
    return ReductionEngine(tuple(messages), config, backend, tools, backend is not None, arrivals=mode == "replay")


def _framework(config: EinoReductionConfig) -> list[tuple[str, str, str]]:
    return [("eino Go: the reduction middleware", "go", eino_reduction_go(config))]


SPEC = PolicySpec(
    name="eino-reduction",
    config=EinoReductionConfig,
    engine=_engine,
    presets=(Preset(
        "eino-reduction", "eino reduction middleware",
        "eino's current middleware: truncates a large result as the tool returns (head and tail kept, the whole "
        "saved), and clears older rounds once the whole context reaches a limit; what it clears stays cleared.",
        EinoReductionConfig, export=_framework,
        knobs=(Knob("max_tokens_for_clear", "Clear once the context reaches (tokens)", "rd_tokens",
                    "max_tokens_for_clear: the whole conversation plus tool schemas, by eino's reduction counter; "
                    "equality triggers."),
               Knob("clear_retention_suffix_limit", "Rounds kept (retention)", "rounds",
                    "clear_retention_suffix_limit: the latest rounds (assistant messages with tool calls) left "
                    "alone.")),
    ),),
    aliases={"threshold": "max_tokens_for_clear", "keep": "clear_retention_suffix_limit",
             "exclude": "clear_exclude_tools", "at_least": "clear_at_least_tokens"},
    sticky=True,
    describe=lambda c: f"eino-reduction {c.effective_max_tokens_for_clear:,}/{c.effective_retention}",
    exports=("go",),
    needs_backend=lambda config: not config.skip_truncation,
    saves_files=True,
    options=(Option("skip_truncation", "Save files (a backend)", "saves_files",
                    "With a backend eino truncates large results and clears with a notice naming the saved file; "
                    "without one it must skip truncation and clears with a placeholder.", key="opt_backend"),
             Option("max_length_for_trunc", "Truncate results longer than (bytes)", "number", key="opt_trunc",
                    needs_files=True),
             Option("clear_at_least_tokens", "Clear only if it saves at least (tokens; 0: always)", "number",
                    key="opt_least"),
             Option("clear_exclude_tools", "Never clear these tools", "tools", key="opt_exclude")),
    why_nothing=lambda c, sizes: (
        f"the conversation counts {sizes['rd_tokens']:,} tokens by eino's reduction counter, under "
        f"{c.effective_max_tokens_for_clear:,}." if sizes["rd_tokens"] < c.effective_max_tokens_for_clear
        else "the rounds it would clear are inside the retained suffix."),
    sweep_base=lambda c: replace(c, skip_truncation=True),
)
"""eino's reduction middleware, as the registry lists it."""
