"""The commands that run a policy on transcripts: reduce, compare, inspect, report,
corpus, sessions and advise."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..cost.billing import Pricing, cost, pricing_of
from ..cost.logfacts import compactions_of
from ..cost.prices import resolve
from ..counters import count_tokens, get_counter
from ..formats import dump_all, load_all, written_as
from ..model import Transcript, main_conversation
from ..policies import spec_for
from ..policies.eino_clear import (
    reduce_by_tokens,
)
from ..policies.offload import LocalDirBackend, ToolResultOffloadingConfig
from ..result import Result
from ..runs.lab import apply, compare, parse_policy, policy_name, recorded, replay, sent_as
from ..runs.report import (
    compaction_lines,
    cost_dict,
    display_text,
    json_bytes,
    recorded_usage,
    report_dict,
    summary_dict,
    table_csv,
    tool_summary,
    usd,
)
from ..runs.verdict import DEFAULT_SPECS, verdict
from .output import (
    _FIRST_FAILURE,
    _FROZEN,
    _NOTED,
    _fmt,
    _Progress,
    _read_input,
    _say_notes,
    _select,
    _write_output,
    _write_table,
    check_outputs,
    terminal_text,
)
from .parser import UsageError, _pricing


def _policy_setup(args: argparse.Namespace) -> tuple[Any, ToolResultOffloadingConfig | None, LocalDirBackend | None]:
    """The policy reduce runs, with its offloading and storage from the options."""
    config = parse_policy(args.policy, threshold=args.threshold, keep=args.keep, placeholder=args.placeholder,
                          exclude=tuple(args.exclude) or None, counter=args.counter)  # where its config names one
    spec = spec_for(config)
    if args.counter is None:  # the counter the policy's config names, where it names one
        args.counter = spec.steps_counter(config) or "eino"
    get_counter(args.counter)  # fail before any work if it cannot load
    offloading = backend = None
    if args.offload_dir is not None:
        if not args.offload_dir.strip():
            raise UsageError("--offload-dir '': give the folder to write the offloaded results in")
        if os.path.exists(args.offload_dir) and not os.path.isdir(args.offload_dir):
            raise UsageError(f"--offload-dir {terminal_text(args.offload_dir)}: not a folder (offloaded results are "
                             "files written inside it)")
        backend = LocalDirBackend(args.offload_dir)
        if spec.offloads:
            offloading = ToolResultOffloadingConfig(
                offloading_token_limit=args.offload_limit,
                read_file_tool_name=args.read_tool,
                token_counter=args.counter,
            )
        elif not spec.saves_files:
            raise UsageError(f"--offload-dir: the {policy_name(config)} policy saves no files")
    elif spec.needs_backend(config):
        raise UsageError(f"the {policy_name(config)} policy saves truncated results: give --offload-dir DIR, or "
                         "add skip_truncation=true to --policy")
    return config, offloading, backend


def _load(source: Any, fmt: str, label: str | None) -> list[Transcript]:
    """The file's conversations, then every live object frozen out of the collector's
    generations until the command ends (``main`` unfreezes): the collections each
    replay's allocations trigger would otherwise walk every loaded message again (about
    2 s of a 27 s inspect of 200,000 messages)."""
    import gc

    transcripts = load_all(source, fmt, name=label)
    if not _FROZEN:
        gc.collect()  # the garbage there is now is collected, not frozen with the rest
        gc.freeze()
        _FROZEN.append(True)
    return transcripts


def _change(saved_percent: float) -> str:
    """A saving as a signed change: a placeholder longer than the results it replaced
    (tiny results) makes the context grow, which "--195.56%" said badly."""
    return f"-{saved_percent}%" if saved_percent >= 0 else f"+{-saved_percent}%, the placeholders are longer"


def _run_pricing(args: argparse.Namespace, pricing: Pricing | None, t: Transcript) -> Pricing | None:
    """The prices of one conversation: the given ones, or with --pricing auto its log's
    model's (a stated default when it names none: the note is printed once)."""
    if getattr(args, "pricing", None) != "auto":
        return pricing
    found, note = pricing_of(t.messages, "auto")
    if note and note not in _NOTED:
        _NOTED.append(note)
    return found




def _run_policy(t: Transcript, config: Any, args: argparse.Namespace, offloading: ToolResultOffloadingConfig | None,
                backend: LocalDirBackend | None) -> Result:
    if spec_for(config).offloads:
        if args.replay:
            return replay(t.messages, config, offloading=offloading, backend=backend)
        return reduce_by_tokens(t.messages, config, offloading=offloading, backend=backend)
    if args.replay:  # calibrated as the app, compare and the corpus calibrate (one rule: lab.sent_as)
        sent = sent_as(t.messages, args.counter) if getattr(args, "calibrate", True) else None
        return replay(t.messages, config, backend=backend, counter=args.counter, calibration=sent)
    return apply(t.messages, config, backend=backend, counter=args.counter)


def _reduce(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    check_outputs([args.input], [("-o", args.output), ("--report", args.report)])
    if args.report and args.output in (None, "-") and args.report == "-":
        raise UsageError("-o and --report cannot both go to standard output")
    source, label = _read_input(args.input)
    transcripts = _load(source, args.format, label)
    chosen = _select(transcripts, args.conversation)
    config, offloading, backend = _policy_setup(args)
    pricing = _pricing(args)
    if pricing is not None or args.pricing == "auto":
        args.replay = True  # money is counted per model call: pricing a run replays it
    costs: list[Any] = []
    pairs, reports = [], []
    tally = Counter[str]()
    for t in chosen:
        result = _run_policy(t, config, args, offloading, backend)
        pairs.append((t, result.messages))
        _tally(tally, result, stderr)
        priced = _run_pricing(args, pricing, t)
        c = cost(result, priced, calibrate=args.calibrate, compactions=[k for k, _ in t.marks]) \
            if priced is not None and result.mode == "replay" else None
        if c is not None:
            costs.append((t, c))
        if args.report:
            one = report_dict(result, t, offloading)
            if c is not None:
                one["cost"] = cost_dict(c)
            reports.append(one)
    data = dump_all(pairs)
    _write_output(args.output, data, stdout)
    if args.report:
        doc = reports[0] if len(reports) == 1 else {"conversations": reports}
        _write_output(args.report, json_bytes(doc), stdout)
    if tally["failures"]:
        first = f" (the first: {terminal_text(_FIRST_FAILURE[0])})" if _FIRST_FAILURE else ""
        print(f"toolclear: warning: {tally['failures']} offload write(s) failed; those results were kept{first}",
              file=stderr)
    for t, c in costs:
        for line in _cost_lines(t, c):
            print(line, file=stderr)
    if args.output:
        parts = [f"{tally['cleared']} {spec_for(config).changed_noun}"]
        if offloading is not None:
            parts.append(f"{tally['offloaded']} offloaded")
        parts.append(f"{_fmt(tally['saved'])} tokens fewer in the final history")
        if args.replay:
            parts.append(f"{tally['breaks']} prompt-cache break(s)")
            others = {k[7:]: n for k, n in tally.items() if k.startswith("needed_") and k != "needed_tool" and n}
            kinds = (" (" + ", ".join([f"{tally.get('needed_tool', 0)} tool result(s)"]
                                      + [f"{n} {k} message(s)" for k, n in sorted(others.items())]) + ")"
                     if others else "")
            parts.append(f"{tally['needed']} changed message(s) needed later{kinds} (re-fetch "
                         f"{_fmt(tally['refetch'])} tokens)" + (
                             f"; in {tally['unjudged']} conversation(s) losses cannot be judged (the log holds no "
                             "text of the agent's replies)" if tally["unjudged"] else ""))
        written = written_as(chosen[0].format) if chosen else ""
        as_what = f" in {written} format ({chosen[0].format} files are not rewritten in place)" \
            if chosen and written != chosen[0].format else ""
        print(
            f"toolclear: {', '.join(parts)} in {len(chosen)} conversation(s); wrote {terminal_text(args.output)}"
            + as_what,
            file=stderr,
        )
    return 0


def _tally(tally: Counter[str], result: Result, stderr: IO[str]) -> None:
    """Add one conversation's numbers to the summary line; say the reference's notes."""
    tally["cleared"] += len(result.cleared_indices)
    summary = summary_dict(result)
    tally["saved"] += summary["tokens_saved"]
    tally["breaks"] += summary.get("cache_breaks", 0)
    if result.mode == "replay":
        from ..runs.losses import losses

        lost = losses(result)
        tally["needed"] += len(lost.needed)
        tally["refetch"] += lost.refetch_tokens
        tally["unjudged"] += not lost.judged
        for kind, n in lost.needed_kinds().items():
            tally[f"needed_{kind}"] = tally.get(f"needed_{kind}", 0) + n
    for note in result.notes:
        print(f"toolclear: note: {terminal_text(note)}", file=stderr)
    if result.offloads:
        failed = [r.error for r in result.offloads if r is not None and r.error]
        tally["failures"] += len(failed)
        if failed and not _FIRST_FAILURE:
            _FIRST_FAILURE.append(failed[0])
        tally["offloaded"] += sum(1 for r in result.offloads if r is not None and r.offloaded)


def _corpus(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from ..corpus.sweeps import grid, load_corpus, sweep_corpus

    if args.output:
        check_outputs(args.paths, [("-o", args.output)])
        if Path(args.output).suffix.lower() not in (".csv", ".parquet", ".json"):
            raise UsageError(f"-o {args.output}: expected a .csv, .parquet or .json file")
    if args.pricing and not args.replay:
        raise UsageError("--pricing needs a replay (drop --no-replay): money is counted per model call")
    pricing = (args.pricing or "auto") if args.replay else None
    if pricing not in (None, "auto"):
        resolve(pricing)  # an unknown preset or model: one line now, not one per run
    if args.engine == "dask" and not args.scheduler:
        raise UsageError("--engine dask needs --scheduler ADDRESS")
    get_counter(args.counter)
    base = parse_policy(args.policy)
    axes = {k: v for k, v in (("threshold", args.threshold), ("keep", args.keep)) if v}
    configs = grid(base, **axes) if axes else [base]
    corpus = load_corpus(args.paths, args.glob, args.format)
    if not corpus.files:
        raise UsageError("no transcript file found in " + ", ".join(terminal_text(p) for p in args.paths))
    bar = _Progress(stderr)
    sweep = sweep_corpus(corpus, configs, pricing=pricing, workers=args.jobs or None, engine=args.engine,
                         mode="replay" if args.replay else "single pass", counter=args.counter,
                         scheduler=args.scheduler, progress=bar, calibrate=bool(args.calibrate))
    bar.done()
    for label, error in sweep.errors:
        print(f"toolclear: skipped {terminal_text(label)}: {terminal_text(error)}", file=stderr)
    if sweep.table.empty:
        raise UsageError("nothing could be read")
    if args.output:
        _write_table(sweep.table, args.output, stdout)
    rec = sweep.recommend(objective=args.objective, max_context=args.max_context, loss_budget=args.loss_budget)
    print(terminal_text(rec.summary), file=stderr)
    if not args.output:
        stdout.write(table_csv(sweep.table))
    return 0


def _cost_lines(t: Transcript, c: Any) -> list[str]:
    """The cost table of one conversation: with the policy, without it, the difference."""
    w, wo = c.totals(), c.totals(True)
    head = f"toolclear: cost of {terminal_text(t.id)} at {terminal_text(c.pricing.name)} ({c.pricing.cache} cache)"
    rows = [("", "uncached", "cache write", "cache read", "output", "dollars")]
    for name, tot in (("with the policy", w), ("without it", wo)):
        rows.append((name, _fmt(int(tot["uncached_tokens"])), _fmt(int(tot["cache_write_tokens"])),
                     _fmt(int(tot["cache_read_tokens"])), _fmt(int(tot["output_tokens"])), usd(tot["dollars"])))
    widths = [max(len(r[k]) for r in rows) for k in range(6)]
    out = [head] + ["  " + "  ".join(v.ljust(wd) if k == 0 else v.rjust(wd) for k, (v, wd) in
                                     enumerate(zip(r, widths))) for r in rows]
    saved = c.dollars_saved
    out.append(f"  {'saves' if saved >= 0 else 'costs'} {usd(abs(saved))}"
               + ("" if saved >= 0 else " more than doing nothing"))
    for note in c.assumptions:
        out.append(f"  note: {terminal_text(note)}")
    return out


def _compare(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    source, label = _read_input(args.input, stderr)
    chosen = _select(_load(source, args.format, label), args.conversation)
    get_counter(args.counter)
    configs = [parse_policy(spec) for spec in (args.policy or DEFAULT_SPECS)]
    mode = "single pass" if args.single_pass else "replay"
    pricing = _pricing(args)
    if (pricing is not None or args.pricing == "auto") and args.single_pass:
        if args.pricing != "auto" or pricing is not None:
            raise UsageError("--pricing needs a replay: drop --single-pass")
        args.pricing = None
    docs, lines = [], []
    for t in chosen:
        priced = _run_pricing(args, pricing, t)
        v = None
        rows: list[dict[str, Any]]
        if priced is not None and mode == "replay":
            v = verdict(t, configs[0], tried=configs[1:], pricing=priced, calibrate=bool(args.calibrate),
                        counter=args.counter)
            rows = [{k: val for k, val in r.items() if k != "spec"} for r in v.rows]
        else:
            rows = compare(t.messages, configs, mode=mode, counter=args.counter, calibrate=bool(args.calibrate),
                           compactions=[k for k, _ in t.marks]).rows
        if args.json:
            docs.append({"conversation": t.id, "source": t.source, "mode": mode, "counter": args.counter,
                         **({"verdict": v.as_dict()} if v is not None else {}), "policies": rows})
            continue
        lines.append(f"{display_text(t.source or label or '-')} · conversation {display_text(t.id)} · "
                     f"{len(t.messages):,} messages · {mode} · tokens counted with {args.counter}")
        if v is not None:
            lines += [f"verdict: {v.headline}", ""]
        recorded = [{k: val for k, val in v.recorded.items() if k != "spec"}] \
            if v is not None and v.recorded is not None else []
        lines += _table_lines(recorded + rows, priced=v is not None)  # the run as recorded first
        lines.append("")
    if args.json:
        stdout.write(json_bytes(docs[0] if len(docs) == 1 else docs))
    else:
        stdout.write(("\n".join(terminal_text(line) for line in lines)).encode("utf-8", "replace"))
    _say_notes(stderr)
    return 0


def _table_lines(rows: Sequence[dict[str, Any]], *, priced: bool) -> list[str]:
    """A comparison's rows as an aligned text table (no pandas: the CLI starts fast)."""
    head: tuple[str, ...] = ("policy",) + (("dollars", "without", "saved $", "re-fetch $", "net saved $")
                                           if priced else ()) + (
        "peak context", "tokens sent", "saved", "saved %", "changed", "needed later", "re-fetch tokens",
        "cache breaks")
    cells = [(str(r["policy"]),) + ((usd(r["dollars"]), usd(r["dollars_without_policy"]), usd(r["dollars_saved"]),
                                     usd(r["refetch_dollars"]), usd(r["net_dollars_saved"])) if priced else ())
             + (_fmt(int(r["peak_context"])), _fmt(int(r["tokens_sent"])), _fmt(int(r["tokens_saved"])),
                f"{r['saved_percent']:.1f}", _fmt(int(r["results_cleared"])), _fmt(int(r["needed_results"])),
                _fmt(int(r["refetch_tokens"])), _fmt(int(r["cache_breaks"])))
             for r in rows]
    widths = [max(len(h), *(len(row[k]) for row in cells)) for k, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) if k == 0 else h.rjust(w) for k, (h, w) in enumerate(zip(head, widths)))]
    out += ["  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths)))
            for row in cells]
    return out


def _tool_table(t: Transcript, counts: Sequence[int]) -> list[str]:
    tools = tool_summary(t.messages, counts)
    out = [f"  tool results: {sum(s.results for s in tools)}, {_fmt(sum(s.tokens for s in tools))} tokens"]
    if tools:
        width = max(12, *(len(s.tool_name or "(unnamed)") for s in tools[:15]))
        out.append(f"    {'tool':<{width}}  {'results':>7}  {'tokens':>10}  {'largest':>9}")
        out += [f"    {(s.tool_name or '(unnamed)'):<{width}}  {s.results:>7}  {_fmt(s.tokens):>10}  {_fmt(s.largest):>9}"
                for s in tools[:15]]
        if len(tools) > 15:
            out.append(f"    ... and {len(tools) - 15} more tools")
    return out


def _policy_lines(t: Transcript, config: Any, counter: str, r: Mapping[str, Any]) -> list[str]:
    """What the policy does with these settings, in one pass and replayed (``r``: the
    replay's ``summary_dict``), and why."""
    spec = spec_for(config)
    single = summary_dict(apply(t.messages, config, counter=counter))
    out = [f"  {spec.label(config)}:"]
    if spec.offloads:  # eino's clear policy: its threshold and protected window, in its own words
        threshold, keep = _fmt(config.tool_result_token_threshold), _fmt(config.keep_recent_tokens)
        tool_total = _fmt(single["total_tool_result_tokens"])
        if single["triggered"] and not single["cleared"]:
            out.append(f"    single pass: triggered (tool results {tool_total} > {threshold}) "
                       f"but every tool result is inside the {keep}-token window; nothing cleared")
        elif single["triggered"]:
            out.append(f"    single pass: clears {single['cleared']} result(s), window starts at message "
                       f"{single['recent_start_index']}; {_fmt(single['tokens_before'])} -> "
                       f"{_fmt(single['tokens_after'])} tokens ({_change(single['saved_percent'])})")
        else:
            out.append(f"    single pass: nothing cleared (tool results {tool_total} <= threshold {threshold})")
    else:
        out.append(f"    single pass: changes {single['cleared']} message(s); {_fmt(single['tokens_before'])} -> "
                   f"{_fmt(single['tokens_after'])} tokens ({_change(single['saved_percent'])})")
    out.append(f"    replay over {r.get('model_calls', 0)} model call(s): changes {r['cleared']} message(s) at some "
               f"call, {r.get('cache_breaks', 0)} prompt-cache break(s); tokens sent "
               f"{_fmt(r.get('tokens_sent_unreduced', 0))} -> {_fmt(r.get('tokens_sent', 0))}")
    return out


def _verdict_lines(t: Transcript, config: Any, args: argparse.Namespace, pricing: Pricing | None
                   ) -> tuple[list[str], Result | None]:
    """The verdict, first: the policy's replay in dollars with the prompt cache."""
    priced = _run_pricing(args, pricing, t)
    if priced is None:
        return [], None
    if not any(m.role == "assistant" for m in t.messages):
        return ["  verdict: none: the run has no model call to price"], None
    v = verdict(t, config, pricing=priced, calibrate=bool(args.calibrate), counter=args.counter)
    assert v.comparison is not None
    return [f"  verdict ({v.pricing}, prompt cache counted): {v.headline}"], v.comparison.results[0]


def _conversation_lines(t: Transcript, args: argparse.Namespace, config: Any, pricing: Pricing | None) -> list[str]:
    counter_name = args.counter
    counts = count_tokens(t.messages, get_counter(counter_name))
    roles = Counter(m.role for m in t.messages)
    out = ["", f"conversation {t.id}" + (f" ({t.title})" if t.title and t.title != t.id else "")]
    said, run = _verdict_lines(t, config, args, pricing)
    out += said
    out += [f"  messages: {len(t.messages)} (" + ", ".join(f"{r} {n}" for r, n in roles.most_common()) + ")",
            f"  tokens ({counter_name}): {_fmt(sum(counts))}"]
    out += _tool_table(t, counts)
    # the replay's summary, then the replay let go before the single pass is made (a
    # 200,000-message run held both at once: its peak)
    replayed = summary_dict(run if run is not None else replay(t.messages, config, counter=counter_name))
    del run
    out += _policy_lines(t, config, counter_name, replayed)
    usage = recorded_usage(t.messages)
    if usage:
        out.append(f"  {usage}")
    if compactions_of(t.messages):  # the run as recorded: what the agent's own compactions did
        out += [f"  {line}" for line in compaction_lines(recorded(t, counter=counter_name))]
    out += [f"  warning: {w}" for w in t.warnings[:5]]
    if len(t.warnings) > 5:
        out.append(f"  ... and {len(t.warnings) - 5} more warnings")
    out += [f"  note: {n}" for n in t.notes]
    return out


def _inspect(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    source, label = _read_input(args.input, stderr)
    transcripts = _select(_load(source, args.format, label), args.conversation)
    config = parse_policy(args.policy, threshold=args.threshold, keep=args.keep, counter=args.counter)
    if args.counter is None:
        args.counter = spec_for(config).steps_counter(config) or "eino"
    get_counter(args.counter)  # fail before any work if it cannot load
    pricing = _pricing(args)
    first = transcripts[0]
    out = [f"{first.source}: {first.format}, {len(transcripts)} conversation(s)"]
    for t in transcripts[:20] if len(transcripts) > 1 else transcripts:
        out += _conversation_lines(t, args, config, pricing)
    if len(transcripts) > 20:
        out.append(f"\n... and {len(transcripts) - 20} more conversations (pick one with --conversation ID)")
    stdout.write(("\n".join(terminal_text(line) for line in out) + "\n").encode("utf-8", "replace"))
    stdout.flush()
    _say_notes(stderr)
    return 0


def _sessions(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from ..corpus.sessions import find_sessions, session_summaries, where_looked
    from ..cost.billing import recorded_total

    agent = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}.get(args.agent or "")
    found = find_sessions(agent=agent)
    if not found:
        raise UsageError("no agent session found on this machine (looked in " + ", ".join(where_looked()) + ")")
    shown = found[:args.limit] if args.limit else found
    summaries = session_summaries(shown, jobs=args.jobs)
    if args.json:
        stdout.write(json_bytes([s.as_dict() for s in summaries]))
        return 0
    head = ("agent", "project", "start", "calls", "peak context", "recorded $", "file")
    rows = [(s.agent, _tail(s.project, 32), s.start[:16].replace("T", " "), _fmt(s.model_calls),
             _fmt(s.peak_context), usd(s.recorded_dollars) if s.recorded_dollars is not None else "-",
             s.path + (f"  (unreadable: {s.error})" if s.error else "")) for s in summaries]
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) if k in (3, 4, 5) else h.ljust(w) for k, (h, w) in enumerate(zip(head, widths)))]
    lines += ["  ".join(c.rjust(w) if k in (3, 4, 5) else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths)))
              for r in rows]
    total = recorded_total(s.call_dollars for s in summaries)
    if total.calls:
        lines.append(f"total recorded: {usd(total.dollars)} over {total.calls:,} model calls of {len(summaries)} "
                     "session(s)" + (f"; {total.shared:,} calls that resumed sessions repeat are counted once"
                                     if total.shared else ""))
    if len(found) > len(shown):
        lines.append(f"... and {len(found) - len(shown):,} older (--limit 0 lists all)")
    stdout.write(("\n".join(terminal_text(line).rstrip() for line in lines) + "\n").encode("utf-8", "replace"))
    return 0


def _tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _advise(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from ..corpus.advice import advise
    from ..corpus.sessions import where_looked

    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    found = advise(recent=args.recent or 10, engine="process" if jobs > 1 else "serial", workers=jobs)
    if not found:
        raise UsageError("no agent session found on this machine (looked in " + ", ".join(where_looked()) + ")")
    if args.json:
        stdout.write(json_bytes([a.as_dict() for a in found]))
        return 0
    lines = []
    for a in found:
        rate = f"{100 * a.cache_hit_rate:.0f} %" if a.cache_hit_rate is not None else "-"
        lines += [f"{a.agent}: {len(a.sessions)} recent session(s)",
                  f"  context: peak {_fmt(a.peak_context)} tokens, {a.compactions} compaction(s), cache hit rate "
                  f"{rate}, recorded {usd(a.recorded_dollars) if a.recorded_dollars is not None else '-'}"
                  + (f" ({a.shared_calls:,} calls repeated by resumed sessions counted once)" if a.shared_calls
                     else "")]
        if a.pays:
            lines.append(f"  a policy pays: {a.best} saves {usd(a.dollars_saved)} over these sessions (net of "
                         f"re-fetching), {a.needed} changed result(s) needed later")
        else:
            lines.append("  no policy pays once the prompt cache is counted: keep running without one")
        lines.append(f"  {a.summary}")
        if a.snippet is not None:
            lines += [f"  {a.snippet[0]}:", *("    " + ln for ln in a.snippet[2].splitlines())]
        for f, e in a.errors[:5]:
            lines.append(f"  skipped {f}: {e}")
        lines.append("")
    stdout.write(("\n".join(terminal_text(line) for line in lines)).encode("utf-8", "replace"))
    return 0


def _report(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    import importlib.util

    if importlib.util.find_spec("plotly") is None:
        raise UsageError("the HTML report draws its charts with plotly: pip install 'toolclear[app]'")
    from ..inspector.html_report import html_report

    if args.output:
        check_outputs([args.input or ""], [("-o", args.output)])
    source, label = _read_input(args.input, stderr)
    t = main_conversation(_select(_load(source, args.format, label), args.conversation))
    config = parse_policy(args.policy, counter=args.counter)
    if args.counter is None:
        args.counter = spec_for(config).steps_counter(config) or "eino"
    priced = _run_pricing(args, _pricing(args), t)
    if priced is None:
        raise UsageError("the report is in dollars: drop --pricing none")
    v = verdict(t, config, pricing=priced, calibrate=bool(args.calibrate), counter=args.counter)
    _write_output(args.output, html_report(t, v), stdout)
    if args.output:
        print(f"toolclear: wrote {terminal_text(args.output)}", file=stderr)
    _say_notes(stderr)
    return 0
