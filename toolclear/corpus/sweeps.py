"""Tune on all your runs: a corpus of transcripts, every policy config on every run.

``load_corpus`` lists the files (a folder, a zip or tar archive, a list of paths, or one
multi-run file) without reading them; runs are read one file at a time where they are
swept, so a worker holds one file's runs at most. ``sweep_corpus`` runs every config on
every run, serially, on every core (processes) or on a Dask cluster; the rows are the
same whatever the engine. Files that cannot be read are listed with their one-line
error and skipped.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError, ToolclearError
from ._workers import stop_workers
from .archives import DAMAGED, is_archive, list_members, read_member, read_members

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Corpus", "CorpusFile", "CorpusSweep", "Recommendation", "grid", "load_corpus",
           "sweep_corpus"]

SweepEngine = Literal["serial", "process", "dask"]
DEFAULT_LOSS_BUDGET = 5.0
"""``recommend``'s default: at most 5 needed results per 100 model calls over the corpus."""


@dataclass(frozen=True)
class CorpusFile:
    """One file of a corpus: a path, or a member of an archive."""

    label: str
    """Stable name: the path relative to the corpus root, or ``archive!member``."""
    path: str
    member: str | None = None
    index: int = -1
    """A member's place in its archive's order (two members may share a name)."""

    def read(self) -> bytes:
        if self.member is None:
            from ..formats._source import read_source

            _, data = read_source(self.path)
            return data
        return read_member(self.path, self.index, self.label)


@dataclass(frozen=True)
class Corpus:
    """The files of a corpus (read lazily, one at a time) and the format to read them in."""

    files: tuple[CorpusFile, ...]
    format: str = "auto"
    errors: tuple[tuple[str, str], ...] = ()
    """Files that could not even be listed (unreadable archives), with why."""

    def __len__(self) -> int:
        return len(self.files)

    def runs(self) -> Iterator[tuple[str, Any]]:
        """(run id, transcript) of every conversation of every file, one file at a time;
        files that fail to read are skipped (``sweep_corpus`` reports them)."""
        for f, data, error in _contents(self.files):
            if error is not None:
                continue
            try:
                transcripts = _load(f, self.format, data)
            except (ToolclearError, *DAMAGED):
                continue
            for t in transcripts:
                yield f"{f.label}#{t.id}", t


def _load(f: CorpusFile, fmt: str, data: bytes | None = None) -> list[Any]:
    from ..formats import load_all

    return load_all(data if data is not None else f.read(), fmt, name=f.label)


def _contents(files: Sequence[CorpusFile]) -> Iterator[tuple[CorpusFile, bytes | None, str | None]]:
    """Each file with its bytes where they come from an archive (read in one pass per
    archive, in the archive's order), None where a worker reads the file itself; or
    with its error. Files are yielded in the corpus's order."""
    k = 0
    while k < len(files):
        f = files[k]
        if f.member is None:
            yield f, None, None
            k += 1
            continue
        end = k
        while end < len(files) and files[end].member is not None and files[end].path == f.path:
            end += 1
        group = files[k:end]
        by_index = {g.index: g for g in group}
        for index, data, error in read_members(f.path, {g.index: g.label for g in group}):
            yield by_index[index], data, error
        k = end


_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".traj")


def _archive_files(path: Path, pattern: str) -> list[CorpusFile]:
    """The wanted members, in the archive's own order (read in one pass in that order)."""
    return [CorpusFile(f"{path.name}!{m.name}", str(path), m.name, m.position) for m in list_members(path)
            if _wanted(m.name, pattern)]


def _wanted(name: str, pattern: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    if base.startswith(".") or "__MACOSX" in name:
        return False
    if pattern in ("**/*", "*"):
        return base.lower().endswith(_SUFFIXES)
    return fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(base, pattern)


def _is_archive(path: Path) -> bool:
    if path.suffix.lower() in (".json", ".jsonl", ".yaml", ".yml"):
        return False
    return is_archive(path)


def load_corpus(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], pattern: str = "**/*",
                format: str = "auto") -> Corpus:
    """A corpus from a folder (recursive; ``pattern`` picks the files, by default every
    JSON, JSON Lines, YAML and .traj file), a zip or tar archive, a list of paths, or one
    file of several runs. Nothing is read yet but the listing."""
    sources = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    files: list[CorpusFile] = []
    errors: list[tuple[str, str]] = []
    for src in sources:
        path = Path(src)
        if path.is_dir():
            found = sorted(p for p in path.glob(pattern) if p.is_file() and _inside(p, path, errors))
            for p in found:
                rel = p.relative_to(path).as_posix()
                if _is_archive(p):
                    files += _listing(p, "**/*", errors)
                elif _wanted(rel, pattern):
                    files.append(CorpusFile(f"{path.name}/{rel}", str(p)))
        elif path.is_file() and _is_archive(path):
            files += _listing(path, pattern, errors)
        elif path.is_file():
            files.append(CorpusFile(path.name, str(path)))
        else:
            errors.append((str(path), "no such file or folder"))
    files = [replace(f, label=_printable(f.label)) if _printable(f.label) != f.label else f for f in files]
    errors = [(_printable(a), e) for a, e in errors]
    return Corpus(tuple(_unique_labels(files)), format, tuple(errors))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _printable(text: str) -> str:
    """A label every output can hold: a name that is not UTF-8 on disk (its bytes kept
    as lone surrogates) or holds control characters is shown with escapes; the file is
    still read by its real path."""
    if _encodable(text) and text.isprintable():
        return text
    out = []
    for c in text:
        if c.isprintable() and _encodable(c):
            out.append(c)
        elif "\udc80" <= c <= "\udcff":  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
    return "".join(out)


def _unique_labels(files: Sequence[CorpusFile]) -> list[CorpusFile]:
    """Every label made unique (``run.json``, ``run.json~2``, ...) in linear time: the
    next free number of each label is remembered, not searched for again."""
    taken = {f.label for f in files}
    used: set[str] = set()
    next_n: dict[str, int] = {}
    out = []
    for f in files:
        label = f.label
        if label in used:
            n = next_n.get(f.label, 2)
            while f"{f.label}~{n}" in used or f"{f.label}~{n}" in taken:
                n += 1
            label = f"{f.label}~{n}"
            next_n[f.label] = n + 1
        used.add(label)
        out.append(f if label == f.label else replace(f, label=label))
    return out


def _inside(p: Path, root: Path, errors: list[tuple[str, str]]) -> bool:
    """A file of the folder, or a link to one inside it (followed); a link out of the
    folder is not followed, and is listed as skipped."""
    if not p.is_symlink():
        return True
    try:
        p.resolve(strict=True).relative_to(root.resolve())
        return True
    except (OSError, ValueError, RuntimeError):
        errors.append((f"{root.name}/{p.relative_to(root).as_posix()}",
                       "a link to a file outside the folder: not followed"))
        return False


def _listing(path: Path, pattern: str, errors: list[tuple[str, str]]) -> list[CorpusFile]:
    try:
        return _archive_files(path, pattern)
    except DAMAGED as exc:
        from .archives import BudgetError

        errors.append((str(path), str(exc) if isinstance(exc, BudgetError) else
                       f"cannot read the archive: {type(exc).__name__}: {exc}"))
        return []


# ------------------------------------------------------------------ grids


def grid(config: Any, **axes: Sequence[Any]) -> list[Any]:
    """Every combination of the given values of ``config``'s fields: its own names or
    the short ones ``threshold`` and ``keep`` (``grid(cfg, threshold=[...], keep=[...])``)."""
    from itertools import product

    from ..policies import spec_for

    aliases = spec_for(config).aliases
    known = {f.name for f in fields(config)}
    names = []
    for key in axes:
        name = aliases.get(key, key)
        if name not in known:
            raise ConfigError(f"grid: {type(config).__name__} has no field {key!r}")
        names.append(name)
    return [replace(config, **dict(zip(names, values))) for values in product(*axes.values())]


# ------------------------------------------------------------------ sweeping

ROW_FIELDS = ("run", "file", "conversation", "config", "policy", "messages", "model_calls", "tool_result_tokens",
              "tokens_sent", "tokens_sent_unreduced", "tokens_saved", "peak_context", "results_cleared",
              "cache_breaks", "needed_results", "lost_references", "refetch_tokens", "pricing", "dollars",
              "dollars_without_policy", "dollars_saved", "refetch_dollars", "net_dollars_saved", "note", "error")


@dataclass(frozen=True)
class SweepSettings:
    """What every task of a sweep shares, sent to each worker once: the corpus's format,
    the configs and their labels, and how each run is replayed and priced."""

    format: str
    configs: tuple[Any, ...]
    labels: tuple[str, ...]
    mode: str
    pricing: Any
    counter: str | None
    calibrate: bool
    """Replay in tokens as sent and price calibrated (``sent_as`` of each run's own usage)."""


def _rows_for_file(f: CorpusFile, data: bytes | None, settings: SweepSettings) -> tuple[list[tuple[Any, ...]], str | None]:
    """Every config on every run of one file (what one worker does); ``data`` is the
    file's bytes when they came out of an archive, else None (the worker reads it).
    Each row is ``toolclear.compare``'s row of that config on that run, priced and
    calibrated as the app, the CLI and ``advise`` do (``pricing_of``, ``sent_as``)."""
    from ..cost.billing import pricing_of
    from ..counters import count_tokens
    from ..runs.lab import compare, policy_name, sent_as

    fmt, configs, labels, mode = settings.format, settings.configs, settings.labels, settings.mode
    pricing, counter, calibrate = settings.pricing, settings.counter, settings.calibrate

    try:
        transcripts = _load(f, fmt, data)
    except ToolclearError as exc:
        return [], str(exc)
    except DAMAGED as exc:
        return [], f"{f.label}: cannot read it: {type(exc).__name__}: {exc}"
    rows: list[tuple[Any, ...]] = []
    for t in transcripts:
        counts = count_tokens(t.messages, counter or "eino")
        tool_tokens = sum(c for m, c in zip(t.messages, counts) if m.role == "tool")
        price_error, note, priced = "", "", None
        if mode == "replay" and pricing is not None:
            try:
                priced, note = pricing_of(t.messages, pricing)
            except ToolclearError as exc:
                price_error = str(exc)
        sent = sent_as(t.messages, counter) if mode == "replay" and calibrate else None
        marks = [k for k, _ in t.marks]
        for cfg, label in zip(configs, labels):
            row: dict[str, Any] = {"run": f"{f.label}#{t.id}", "file": f.label, "conversation": t.id,
                                   "messages": len(t.messages), "tool_result_tokens": tool_tokens,
                                   "error": price_error, "pricing": getattr(priced, "name", None), "note": note}
            if not price_error:
                try:
                    cmp = compare(t.messages, [cfg], mode=mode, counter=counter, pricing=priced, recorded=False,
                                  calibrate=calibrate, compactions=marks, calibration=sent)
                    row.update(cmp.rows[0])
                    said = [n for n in cmp.results[0].notes if not n.startswith("tokens as sent")]
                    if said:  # what the policy did that the user should know (a preset meeting a foreign format)
                        row["note"] = "; ".join(filter(None, [note, *said]))
                except ToolclearError as exc:
                    row["error"] = str(exc)
            row.update(config=label, policy=policy_name(cfg))
            rows.append(tuple(row.get(k) for k in ROW_FIELDS))  # tuples: cheaper to send back and to tabulate
    return rows, None


def _labels(configs: Sequence[Any]) -> list[str]:
    from ..runs.lab import policy_spec

    return [policy_spec(c) for c in configs]


@dataclass(frozen=True)
class Recommendation:
    """The config to pick, the trade-offs around it, and where it does worst."""

    config: Any
    """The setting to run, or None when no setting does better than no policy."""
    label: str
    objective: str
    summary: str
    """One paragraph saying what was picked and why."""
    frontier: pd.DataFrame = field(repr=False)
    """Configs no other beats on all of saving, cache breaks and peak context."""
    worst_runs: pd.DataFrame = field(repr=False)


@dataclass(frozen=True)
class CorpusSweep:
    """Every config on every run: a tidy table, the files that failed, and what to pick."""

    table: pd.DataFrame
    errors: tuple[tuple[str, str], ...]
    configs: tuple[Any, ...]
    labels: tuple[str, ...]
    mode: str

    def aggregates(self) -> pd.DataFrame:
        """Per config: sum, median, p90 and the worst run of saving, cost and peak context."""
        df = self.table[self.table["error"] == ""]
        metrics = ["tokens_saved", "peak_context", "cache_breaks"] + (
            ["dollars", "dollars_saved"] if df["dollars"].notna().any() else [])
        out = df.groupby("config", sort=False)[metrics].agg(["sum", "median", lambda s: s.quantile(0.9), "min",
                                                             "max"])
        out.columns = [f"{m}_{'p90' if a == '<lambda_0>' else a}" for m, a in out.columns]
        return out.reindex([lab for lab in self.labels if lab in out.index])

    def recommend(self, objective: Literal["cost", "tokens"] = "cost", max_context: int | None = None,
                  loss_budget: float | None = None) -> Recommendation:
        """The cheapest config (dollars, or tokens sent, over every run, each needed result
        re-read once counted in) whose loss stays within ``loss_budget`` needed results per
        100 model calls (default ``DEFAULT_LOSS_BUDGET``; ``float("inf")`` for none) and whose
        p99 run stays under ``max_context`` tokens. When no config within the budget does
        better than no policy at all, the summary says so and what to try."""
        import pandas as pd

        budget = DEFAULT_LOSS_BUDGET if loss_budget is None else loss_budget
        df = self.table[self.table["error"] == ""]
        if df.empty:
            raise ConfigError("nothing could be read: no run to recommend from")
        use_cost = objective == "cost" and df["dollars"].notna().any()
        df = df.assign(_cost=df["dollars"] + df["refetch_dollars"].fillna(0) if use_cost
                       else df["tokens_sent"] + df["refetch_tokens"])
        target = "dollars" if use_cost else "tokens_sent"
        baseline = "dollars_without_policy" if use_cost else "tokens_sent_unreduced"
        per = df.groupby("config", sort=False).agg(
            total=("_cost", "sum"), without=(baseline, "sum"), saved=("tokens_saved", "sum"),
            cleared=("results_cleared", "sum"), breaks=("cache_breaks", "sum"), needed=("needed_results", "sum"),
            calls=("model_calls", "sum"), p99_peak=("peak_context", lambda s: s.quantile(0.99)),
            runs=("run", "count"))
        per["gain"] = per["without"] - per["total"]
        per["needed_per_100_calls"] = (100 * per["needed"] / per["calls"].where(per["calls"] > 0)).fillna(0.0)
        allowed = per[per["needed_per_100_calls"] <= budget]
        if max_context is not None:
            allowed = allowed[allowed["p99_peak"] <= max_context]
        frontier = _frontier(per)
        unit = (lambda v: f"${v:,.2f}") if use_cost else (lambda v: f"{v:,.0f} tokens")
        what = "dollars" if use_cost else "input tokens"
        runs = int(per["runs"].max())
        limits = f"at most {budget:g} needed result(s) per 100 model calls" + (
            f" and a p99 peak under {max_context:,} tokens" if max_context is not None else "")
        saving = allowed[allowed["gain"] > 0]
        if saving.empty:
            over = int((per["needed_per_100_calls"] > budget).sum())
            did = ("changes nothing" if not (per["cleared"] > 0).any() else
                   f"saves nothing within {limits}" if over or max_context is not None else "saves nothing")
            summary = (f"No setting does better than no policy (the runs as recorded, with any compaction the agent "
                       f"made itself): across {_runs(runs)}, every one of the "
                       f"{len(per):,} settings {did} (without a policy: {unit(float(per['without'].max()))}; each "
                       "needed result re-read once is counted against a setting)"
                       + (f"; {over} of them clear more results the agent used later than the loss budget allows"
                          if over else "") + ". Try a lower threshold or trigger, or a smaller keep, so that "
                       "clearing starts earlier; a larger loss budget if re-reads are cheap for your agent; or keep "
                       "running without this policy.")
            return Recommendation(None, "", target, summary, frontier.reset_index(),
                                  pd.DataFrame(columns=["run", "dollars_saved" if use_cost else "tokens_saved"]))
        best = str(saving.sort_values(["total", "needed", "breaks"], kind="stable").index[0])
        idx = self.labels.index(best)
        mine = df[df["config"] == best]
        key = "net_dollars_saved" if use_cost else "tokens_saved"
        changed = mine[(mine["results_cleared"] > 0) | (mine["tokens_saved"] != 0)]
        worst = changed.sort_values(key).head(5)[["run", key, "needed_results", "peak_context", "cache_breaks"]]
        worst_text = (f"it does worst on {worst.iloc[0]['run']} ({unit(worst.iloc[0][key])} saved)"
                      if len(worst) else "it changes no run for the worse")
        b = per.loc[best]
        summary = (f"Across {_runs(runs)}, {best} costs the least within {limits} ({what}, each needed result "
                   f"re-read once counted in): {unit(b['total'])} against {unit(b['without'])} without a policy, "
                   f"saving {unit(b['gain'])}; it clears {int(b['cleared']):,} result(s) of which "
                   f"{int(b['needed']):,} were needed later ({b['needed_per_100_calls']:.1f} per 100 calls), with "
                   f"{int(b['breaks']):,} cache breaks and a p99 peak context of {b['p99_peak']:,.0f} tokens. "
                   f"{len(frontier)} setting(s) are on the frontier of saving, loss, cache breaks and peak "
                   f"context; {worst_text}.")
        return Recommendation(self.configs[idx], best, target, summary, frontier.reset_index(),
                              pd.DataFrame(worst).reset_index(drop=True))


def _runs(n: int) -> str:
    return f"{n:,} run" + ("" if n == 1 else "s")


def _frontier(per: Any) -> Any:
    """The settings no other beats on every axis (more saved, fewer cache breaks, a lower
    p99 peak), with settings of identical outcome shown once and settings that change
    nothing left out: a frontier of trade-offs, not of ties."""
    axes = ["saved", "needed", "breaks", "p99_peak"]
    live = per[(per["cleared"] > 0) | (per["saved"] != 0)]
    distinct = live.drop_duplicates(subset=axes, keep="first")
    rows = list(distinct[axes].itertuples(index=False, name=None))

    def beaten(r: tuple[Any, ...]) -> bool:
        return any(o != r and o[0] >= r[0] and o[1] <= r[1] and o[2] <= r[2] and o[3] <= r[3] for o in rows)

    out = distinct.iloc[[k for k, r in enumerate(rows) if not beaten(r)]]
    return out[["saved", "needed", "needed_per_100_calls", "breaks", "p99_peak", "total", "without", "gain",
                "runs"]].rename(columns={
        "saved": "tokens_saved", "needed": "needed_results", "breaks": "cache_breaks",
        "p99_peak": "p99_peak_context_tokens", "total": "objective_total", "without": "objective_without_policy",
        "gain": "objective_saved"})


_SHARED: SweepSettings | None = None


def _init(shared: SweepSettings) -> None:
    """A worker process's start: the settings every task shares, sent once."""
    global _SHARED
    _SHARED = shared


Item = tuple[CorpusFile, "bytes | None", "str | None"]
FileRows = tuple[list[tuple[Any, ...]], "str | None"]


def _work_batch(items: list[Item], shared: SweepSettings | None = None) -> list[FileRows]:
    """A worker's task: a few files (the settings sent once per worker, or with it)."""
    settings = shared if shared is not None else _SHARED
    assert settings is not None, "a sweep worker started without its settings"
    return [([], error) if error is not None else _rows_for_file(f, data, settings) for f, data, error in items]


def sweep_corpus(
    corpus: Corpus,
    configs: Sequence[Any],
    pricing: Any = None,
    workers: int | None = None,
    engine: SweepEngine = "process",
    *,
    mode: Literal["replay", "single pass"] = "replay",
    counter: str | None = None,
    client: Any = None,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    calibrate: bool = True,
) -> CorpusSweep:
    """Every config on every run of ``corpus``: ``engine="serial"``, ``"process"`` (all
    cores, or ``workers``) or ``"dask"`` (a ``dask.distributed`` ``client``, or a
    ``scheduler`` address). The table is the same whatever the engine and worker count.

    ``pricing``: a ``Pricing``, a preset's name, or ``"auto"``: each run at the preset of
    the model its log names (a run whose model has none is an error row). Each run is
    priced as ``toolclear.cost(replay, pricing, calibrate=calibrate)`` prices it alone,
    so its dollars equal ``compare``'s and ``reduce``'s for the same settings;
    ``calibrate`` (on by default, as in ``compare`` and ``cost``) fits each run on its own
    recorded usage, where its log recorded some: the replay speaks in tokens as the model
    was sent them (tokens sent, peak context, the triggers) and the dollars are calibrated
    (uncalibrated dollars run 2.5-4x under what Claude Code logs record)."""
    import pandas as pd

    configs = list(configs)
    if not configs:
        raise ConfigError("sweep_corpus: no config to run")
    if isinstance(pricing, str) and pricing != "auto":
        from ..cost.billing import PRICING

        pricing = PRICING[pricing]
    labels = _labels(configs)
    shared = SweepSettings(corpus.format, tuple(configs), tuple(labels), mode, pricing, counter, calibrate)
    rows: list[tuple[Any, ...]] = []
    errors = list(corpus.errors)
    total = len(corpus.files)
    done = 0
    for f, (file_rows, error) in _run(_contents(corpus.files), shared, total, engine, workers, client, scheduler):
        done += 1
        if error is not None:
            errors.append((f.label, error))
        rows += file_rows
        if progress is not None:
            progress(done, total)
    table = pd.DataFrame.from_records(rows, columns=list(ROW_FIELDS))
    return CorpusSweep(table, tuple(errors), tuple(configs), tuple(labels), mode)


def _batches(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    batch: list[Item] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _in_order(submit: Callable[[list[Item]], Any], result: Callable[[Any], list[FileRows]],
              batches: Iterable[list[Item]], window: int) -> Iterator[tuple[CorpusFile, FileRows]]:
    """Each batch submitted as the one before the window's end is collected: at most
    ``window`` batches (and their archive bytes) in flight, results in the files' order."""
    from collections import deque

    flight: deque[tuple[list[Item], Any]] = deque()
    for batch in batches:
        flight.append((batch, submit(batch)))
        if len(flight) >= window:
            sent, fut = flight.popleft()
            yield from zip((f for f, _, _ in sent), result(fut))
    while flight:
        sent, fut = flight.popleft()
        yield from zip((f for f, _, _ in sent), result(fut))


def _run(items: Iterable[Item], shared: SweepSettings, total: int, engine: SweepEngine, workers: int | None,
         client: Any, scheduler: str | None) -> Iterator[tuple[CorpusFile, FileRows]]:
    """(file, its rows or error) in the order of the files, whatever order they finish in."""
    if engine not in ("serial", "process", "dask"):
        raise ConfigError(f"engine: expected serial, process or dask, got {engine!r}")
    if engine == "serial" or (engine == "process" and (workers == 1 or total <= 1)):
        for batch in _batches(items, 1):
            yield from zip((f for f, _, _ in batch), _work_batch(batch, shared))
        return
    if engine == "process":
        yield from _run_processes(items, shared, total, workers)
        return
    yield from _run_dask(items, shared, client, scheduler)


def _run_processes(items: Iterable[Item], shared: SweepSettings, total: int, workers: int | None
                   ) -> Iterator[tuple[CorpusFile, FileRows]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads (Streamlit)
    n = max(1, min(workers or os.cpu_count() or 1, os.cpu_count() or 1, total))
    size = max(1, min(16, total // (8 * n)))  # a few files per task: fewer messages, still balanced
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init, initargs=(shared,))
    try:
        # the settings go to each worker once
        yield from _in_order(lambda b: pool.submit(_work_batch, b), lambda fut: fut.result(),
                             _batches(items, size), 4 * n)
        pool.shutdown(wait=True)
    except BaseException as exc:
        stop_workers(pool)  # Ctrl-C, SIGTERM, a dead worker: no worker outlives the sweep
        if not isinstance(exc, BrokenProcessPool):
            raise
        raise ConfigError(
            "sweep_corpus: a worker process died. A script that sweeps with engine='process' must run it under "
            "`if __name__ == \"__main__\":` (each worker starts by importing the script again); otherwise a "
            "worker ran out of memory: use engine='serial' or fewer workers") from None


DASK_TIMEOUT = 30
"""Seconds to reach a Dask scheduler before giving up."""


def _connect(client_cls: Any, scheduler: str) -> Any:
    """A Client of ``scheduler``, or a one-line error within DASK_TIMEOUT: dask's own
    timeout does not cover a server that accepts the connection and never answers, so
    the connection is made in a thread the sweep does not wait on past the deadline."""
    import threading

    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_cls(scheduler, timeout=DASK_TIMEOUT)
        except BaseException as exc:  # reported below, in one line
            box["error"] = exc

    thread = threading.Thread(target=connect, name="toolclear-dask-connect", daemon=True)
    thread.start()
    thread.join(DASK_TIMEOUT + 1)
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    if exc is None or isinstance(exc, (TimeoutError, OSError)) and "timed out" in str(exc).lower():
        why = f"{type(exc).__name__}: {exc}" if exc is not None else "no answer"
        raise ConfigError(f"dask scheduler {scheduler!r}: cannot connect within {DASK_TIMEOUT} s ({why})")
    # it failed at once (an address dask cannot parse, a refused connection): say that, not a wait
    raise ConfigError(f"dask scheduler {scheduler!r}: cannot connect: {type(exc).__name__}: "
                      f"{' '.join(str(exc).split())}")


def _run_dask(items: Iterable[Item], shared: SweepSettings, client: Any, scheduler: str | None
              ) -> Iterator[tuple[CorpusFile, FileRows]]:
    try:
        from dask.distributed import Client  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ConfigError("engine='dask' needs dask.distributed: pip install 'toolclear[dask]'") from None
    own = None
    if client is None:
        if scheduler is None:
            raise ConfigError("engine='dask' needs client= (a dask.distributed.Client) or scheduler= (an address)")
        own = client = _connect(Client, scheduler)
    try:
        # the settings (configs, pricing, calibration) go to every worker once, not with each task
        (settings,) = client.scatter([shared], broadcast=True, hash=False)
        yield from _in_order(lambda b: client.submit(_work_batch, b, settings, pure=False), lambda fut: fut.result(),
                             _batches(items, 4), 8 * max(1, len(client.scheduler_info().get("workers", {})) or 1))
    finally:
        if own is not None:
            own.close()
