"""All of toolclear's speed and memory figures, printed as one table.

    .venv/bin/python benchmarks/run.py              # everything (15-20 minutes on 2 cores)
    .venv/bin/python benchmarks/run.py --no-browser --no-memory --no-bad

Core on a generated 100,000-message run; loading the real corpus; the inspector's work
on a 10,000-message transcript (split into parse, count, core, chart build) and a slider
move end to end in a real browser; peak memory of loading a 200 MB JSON Lines file; every bad input in its own process
(<= 5 s and 512 MB each, ``bad_inputs.py``).
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import toolclear as tc  # noqa: E402
from toolclear import Message, ToolCall  # noqa: E402
from toolclear.inspector import charts  # noqa: E402
from toolclear.runs import report, sweep  # noqa: E402
from toolclear.runs.numbers import grid_values  # noqa: E402

Row = tuple[str, str, str]


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def interleaved(a: Callable[[], Any], b: Callable[[], Any], repeat: int = 7) -> tuple[float, float]:
    """Median seconds of ``a`` and of ``b``, run in turn (a, b, a, b, ...) after a full
    collection each: a drift of the machine or of the heap touches both alike, so their
    ratio is what the code costs."""
    ta, tb = [], []
    for _ in range(repeat):
        for fn, times in ((a, ta), (b, tb)):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def generated_run(n: int, seed: int = 0) -> tuple[Message, ...]:
    rng = random.Random(seed)
    out: list[Message] = []
    for i in range(n):
        r = i % 4
        if r == 0:
            out.append(Message("user", "u" * rng.randint(10, 200)))
        elif r == 1:
            out.append(Message("assistant", "a" * rng.randint(0, 100),
                               tool_calls=(ToolCall(f"c{i}", "read_file", '{"path": "x.py"}'),)))
        elif r == 2:
            out.append(Message("tool", "t" * rng.randint(100, 8000), tool_call_id=f"c{i - 1}",
                               tool_name=rng.choice(["read_file", "grep", "bash"])))
        else:
            out.append(Message("assistant", "b" * rng.randint(10, 300)))
    return tuple(out)


def core_100k() -> list[Row]:
    msgs = generated_run(100_000)
    rows: list[Row] = []
    t, _ = timed(lambda: tc.count_tokens(msgs))
    rows.append(("count 100,000 messages (eino, first time)", ms(t), ""))
    t, _ = timed(lambda: tc.reduce_by_tokens(msgs))
    rows.append(("reduce_by_tokens, first call (index + cleared copies)", ms(t), ""))
    rng = random.Random(1)
    configs = [tc.ClearToolResultConfig(keep_recent_tokens=rng.randint(10_000, 2_000_000)) for _ in range(25)]
    times = []
    lazy = []
    for c in configs:
        t0 = time.perf_counter()
        r = tc.reduce_by_tokens(msgs, c)
        t1 = time.perf_counter()
        _ = (r.statuses, r.token_counts_after)  # worked out on first use
        lazy.append(time.perf_counter() - t1)
        times.append(t1 - t0)
    reduce_s = statistics.median(times)
    rows.append(("reduce_by_tokens, counts cached, new settings (median of 25)", ms(reduce_s), "<= 20 ms"))
    rows.append(("  + per-message statuses and counts after (lazy)", ms(statistics.median(lazy)), ""))
    rp_times = []
    for c in configs[:5]:
        t0 = time.perf_counter()
        tc.replay(msgs, c)
        rp_times.append(time.perf_counter() - t0)
    replay_s = statistics.median(rp_times)
    rows.append(("replay, 50,001 model calls (median of 5)", ms(replay_s), ""))
    rows.append(("replay / reduce_by_tokens", f"{replay_s / reduce_s:.1f} x", "<= 50 x"))
    rows += policies_100k(msgs, replay_s)
    return rows


def policies_100k(msgs: tuple[Message, ...], floor: float) -> list[Row]:
    """Replay of every policy on the same 100,000 messages, against eino's clear policy
    (the floor, measured above in the same run): each stays O(n) after counting."""
    rows: list[Row] = []
    configs = [
        ("eino reduction (no backend)", tc.EinoReductionConfig(skip_truncation=True), None),
        ("eino reduction (backend, truncation)", tc.EinoReductionConfig(), tc.MemoryBackend),
        ("eino reduction (clear_at_least gate)", tc.EinoReductionConfig(clear_at_least_tokens=30_000,
                                                                        skip_truncation=True), None),
        ("Anthropic clear_tool_uses", tc.AnthropicClearToolUsesConfig(), None),
        ("Anthropic, clear_at_least + inputs", tc.AnthropicClearToolUsesConfig(
            clear_at_least_input_tokens=50_000, clear_tool_inputs=True), None),
        ("LangChain ClearToolUsesEdit", tc.LangChainClearToolUsesConfig(), None),
        ("LangChain, clear_at_least + inputs", tc.LangChainClearToolUsesConfig(clear_at_least=50_000,
                                                                               clear_tool_inputs=True), None),
        ("masking, OpenHands preset", tc.ObservationMaskingConfig.openhands(), None),
        ("masking, SWE-agent preset", tc.ObservationMaskingConfig.swe_agent(), None),
        ("OpenAI Agents SDK ToolOutputTrimmer", tc.parse_policy("openai-trimmer"), None),
        ("SWE-agent RemoveRegex", tc.parse_policy("swe-agent-remove-regex"), None),
        ("SWE-agent ClosedWindowHistoryProcessor", tc.parse_policy("swe-agent-closed-window"), None),
        ("Claude Code microcompact (10 min gap)", tc.parse_policy("claude-code-microcompact:gap=10"), None),
        ("Deep Agents eviction (limit 500)", tc.parse_policy("deepagents-evict:limit=500"), None),
        ("Anthropic clear_thinking + clear_tool_uses", tc.parse_policy("anthropic-thinking:keep=1,trigger=100000"),
         None),
        ("cache-aware over Anthropic", tc.parse_policy("cache-aware:base=anthropic"), None),
        ("cache-aware over eino, no clear_at_least", tc.parse_policy("cache-aware:base=eino,clear_at_least=0"), None),
    ]
    for name, config, backend in configs:
        t, _ = timed(lambda c=config, b=backend: tc.replay(msgs, c, backend=b() if b else None))
        rows.append((f"replay 100,000 messages: {name}", ms(t), f"{t / floor:.1f} x eino's clear policy"))
    rows += costing(msgs)
    return rows


def costing(msgs: tuple[Message, ...]) -> list[Row]:
    """Pricing a 50,000-call replay (with and without the policy) against the replay
    itself. Both read what is per transcript (the replay its token counts and index,
    pricing where the log compacted and which calls recorded usage) once and keep it;
    the last row is the first pricing of a transcript, that read included."""
    from toolclear.cost import logfacts

    rows: list[Row] = []
    first: tuple[float, Any] | None = None
    for name, config in (("eino clear", tc.ClearToolResultConfig()),
                         ("Anthropic clear_tool_uses", tc.AnthropicClearToolUsesConfig()),
                         ("masking, SWE-agent", tc.ObservationMaskingConfig.swe_agent())):
        # the replay's fastest of three runs: the ratio errs against pricing
        t_replay = min(timed(lambda c=config: tc.replay(msgs, c))[0] for _ in range(3))
        rp = tc.replay(msgs, config)
        first = first or (t_replay, rp)
        for preset in ("claude-sonnet-4-5", "gpt-5"):
            t_cost, _ = timed(lambda r=rp, p=preset: tc.cost(r, p), repeat=5)
            rows.append((f"cost of a {len(rp.model_call_steps):,}-call replay: {name}, {preset}", ms(t_cost),
                         f"{100 * t_cost / t_replay:.0f} % of that replay (<= 10 %)"))
    assert first is not None
    logfacts._log_facts_kept.clear()
    t_first, _ = timed(lambda: tc.cost(first[1], "claude-sonnet-4-5"))
    rows.append(("  eino clear, the first pricing of a transcript (reads compactions, usage)", ms(t_first),
                 f"{100 * t_first / first[0]:.0f} % of that replay, once"))
    rows += calibrating()
    rows += media_costing()
    return rows


def media_costing() -> list[Row]:
    """cost() of a run with screenshots, 4x longer with the same share of images: the
    corrections are summed once per run (a loop over every image for every call was
    quadratic: 8.8x for 4x)."""
    sys.path.insert(0, str(ROOT))
    from tests.cost.test_media import encoded

    image = encoded(600, 400, "PNG", noise=True)

    def run(rounds: int, images: int) -> tuple[Message, ...]:
        body: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for k in range(rounds):
            content: Any = "text result " * 30
            if k % (rounds // images) == 1:
                content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}}]
            body += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "shot", "input": {}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]}]
        return tuple(tc.load(text=json.dumps({"messages": body}), format="anthropic").messages)

    times = []
    for rounds, images in ((12_500, 12), (50_000, 50)):
        rp = tc.replay(run(rounds, images), tc.AnthropicClearToolUsesConfig(trigger_input_tokens=50_000))
        tc.cost(rp, "claude-sonnet-4-5")
        times.append(min(timed(lambda r=rp: tc.cost(r, "claude-sonnet-4-5"))[0] for _ in range(5)))
    return [("cost() with images: 25,000 messages (12) -> 100,000 (50)", f"{ms(times[0])} -> {ms(times[1])}",
             f"{times[1] / times[0]:.1f} x (<= 5.5 x)")]


def _forget_transcripts() -> None:
    """Drop what pricing and calibration keep per transcript (not the token counts)."""
    from toolclear.cost import billing, calibration, logfacts, media, per_run

    for kept in (logfacts._log_facts_kept, logfacts._log_arrays_kept, logfacts._one_hour_kept, logfacts._resets_kept,
                 calibration._calibrations, media._facts_kept, billing._fit_kept, per_run._after_cuts_kept, per_run._merged_kept,
                 billing._extras_kept, billing._summarizations_kept):
        kept.clear()


def calibrating() -> list[Row]:
    """Calibration and calibrated pricing of 100,000 resampled real messages that keep
    their recorded usage (with Claude Code's compactions and cache resets), against a
    replay of them: warm, as a sweep or the app runs them (the token counts known, each
    replay priced once, fresh), and the first time for the transcript (read once)."""
    msgs = real_run(100_000, usage=True)
    config = tc.ClearToolResultConfig()
    t_cold_replay, _ = timed(lambda: tc.replay(msgs, config))  # the first: it counts every message
    t_replay = min(timed(lambda: tc.replay(msgs, config))[0] for _ in range(3))
    rp = tc.replay(msgs, config)
    calls = len(rp.model_call_steps)

    def first_calibration() -> Any:
        _forget_transcripts()
        return tc.calibrate(msgs)
    t_first, cal = timed(first_calibration, repeat=3)

    def recalibration() -> Any:
        from toolclear.cost import calibration

        calibration._calibrations.clear()  # the calibration itself, the transcript already read
        return tc.calibrate(msgs)
    t_recompute, _ = timed(recalibration, repeat=5)
    t_again, _ = timed(lambda: tc.calibrate(msgs), repeat=5)
    rows: list[Row] = [
        (f"calibrate a {calls:,}-call real run{'' if cal.fitted else ' (not fitted)'}, first time (reads it)",
         ms(t_first),
         f"{100 * t_first / t_cold_replay:.0f} % of the transcript's first replay ({ms(t_cold_replay)}), once"),
        ("  calibrate it, the transcript already read", ms(t_recompute),
         f"{100 * t_recompute / t_replay:.0f} % of its replay (<= 10 %)"),
        ("  calibrate it again (kept per transcript: every further setting)", ms(t_again),
         f"{100 * t_again / t_replay:.1f} % of its replay")]
    fresh = iter([tc.replay(msgs, config) for _ in range(5)])
    t_both, priced = timed(lambda: tc.cost(next(fresh), "claude-sonnet-4-5", calibrate=True), repeat=5)
    cuts = sum("compaction" in a for a in priced.assumptions)
    rows.append((f"  cost of a fresh replay, calibrate=True ({'with' if cuts else 'no'} compactions, the fit "
                 "included)", ms(t_both), f"{100 * t_both / t_replay:.0f} % of its replay (<= 10 %)"))
    one = tc.replay(msgs, config)
    _forget_transcripts()
    t_cold, _ = timed(lambda: tc.cost(one, "claude-sonnet-4-5", calibrate=True))
    rows.append(("  the same, the first pricing of the transcript (reads its usage)", ms(t_cold),
                 f"{100 * t_cold / t_cold_replay:.0f} % of the transcript's first replay"))
    return rows


def real_run(n: int, usage: bool = False) -> tuple[Message, ...]:
    """n messages resampled from the real Claude Code sessions of the test corpus, each
    copy of a call with its own id (so pairing stays right) and its own line number in
    every text, so no text repeats (no cache does the work); ``usage`` keeps each call's
    recorded usage (the calibration's input)."""
    src: list[Message] = []
    for path in sorted((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("entire-cli*.jsonl")):
        src += tc.load_all(path)[0].messages
    out: list[Message] = []
    k = 0
    while len(out) < n:
        for m in src:
            k += 1
            tag = f"\n(copy {k})"
            if m.role == "tool":
                out.append(Message("tool", m.content + tag, tool_call_id=f"{m.tool_call_id}-{k}",
                                   tool_name=m.tool_name))
            elif m.role == "assistant" and m.tool_calls:
                out.append(Message("assistant", m.content + tag, tool_calls=tuple(
                    ToolCall(f"{c.id}-{k - 1 - i}", c.name, c.arguments) for i, c in enumerate(m.tool_calls)),
                    usage=m.usage if usage else None))
            else:
                out.append(Message(m.role, m.content + tag, usage=m.usage if usage and m.role == "assistant" else None))
    return tuple(out[:n])


def losses_100k() -> list[Row]:
    """What a policy loses, against the replay it reads: warm (a second setting on the same
    run, as a sweep runs it: the replay reads cached token counts, the losses cached terms)
    against the replay, and cold (every text scanned once for terms) against the one
    other first reading of every text, a tiktoken count."""
    msgs = real_run(100_000)
    t_count, _ = timed(lambda: tc.count_tokens(msgs, "cl100k_base"))
    tc.count_tokens(msgs)
    rows: list[Row] = []
    for name, config in (("eino 20,000/40,000", tc.ClearToolResultConfig(20_000, 40_000)),
                         ("swe-agent n=5", tc.ObservationMaskingConfig.swe_agent(n=5))):
        replay_s, run = timed(lambda c=config: tc.replay(msgs, c))
        cold, lost = timed(lambda r=run: tc.losses(r))
        fresh = iter([tc.replay(msgs, config) for _ in range(3)])  # a result keeps its losses: new ones
        warm, _ = timed(lambda f=fresh: tc.losses(next(f)), repeat=3)
        rows.append((f"losses of a 100,000-message real-text replay ({name}), warm",
                     ms(warm), f"<= replay {ms(replay_s)}: {warm / replay_s:.2f} x"))
        rows.append((f"  needed / changed ({name})", f"{len(lost.needed):,} / {lost.changed:,}", ""))
        if cold > 2 * warm:
            rows.append(("  cold: the first scan of every text for terms (once per run)", ms(cold),
                         f"the first cl100k_base count: {ms(t_count)}"))
    return rows


def compacted_run(n: int = 100_000, every: int = 250) -> tuple[Message, ...]:
    """``real_run(n)`` with recorded usage and a Claude Code compaction (its summary, as
    the reader marks it) before every ``every``-th message that is a model call: with the
    real sessions' own compactions, hundreds of them."""
    from toolclear.cost.logfacts import COMPACTION_TEXT

    out: list[Message] = []
    for i, m in enumerate(real_run(n, usage=True)):
        if i and i % every == 0 and m.role == "assistant":
            out.append(Message("user", f"{COMPACTION_TEXT} (summary {i}) " + "state " * 400,
                               meta={"compaction": {"trigger": "auto", "pre_tokens": 160_000, "source": "bench"}}))
        out.append(m)
    return tuple(out[:n])


def compaction_100k() -> list[Row]:
    """The run as recorded, priced and searched for losses (``recorded`` + ``cost`` +
    ``losses``), against the same three steps for a plain replay (eino's clear policy) on
    the same 100,000-message run with hundreds of compactions, both warm (the run's
    counts and terms known, as the app and a sweep have them). Target: at most 1.5 x."""
    from toolclear.cost.logfacts import compactions_of

    msgs = compacted_run()

    def pipeline(make: Callable[[], Any]) -> Any:
        r = make()
        tc.cost(r, "claude-sonnet-4-5", calibrate=True)
        tc.losses(r)
        return r

    plain = lambda: tc.replay(msgs, tc.ClearToolResultConfig())  # noqa: E731
    recorded = lambda: tc.recorded(msgs)  # noqa: E731
    pipeline(plain), pipeline(recorded)  # the run's facts: once
    t_plain, t_rec = interleaved(lambda: pipeline(plain), lambda: pipeline(recorded))
    rows = [(f"recorded + cost + losses, 100,000 messages, {len(compactions_of(msgs)):,} compactions",
             ms(t_rec), f"<= 1.5 x replay + cost + losses (eino) {ms(t_plain)}: {t_rec / t_plain:.2f} x")]
    t_sim, sim = timed(lambda: pipeline(lambda: tc.replay(msgs, tc.parse_policy("codex-compact:limit=60000"))))
    rows.append((f"  a compaction policy, the same three (codex-compact, {len(sim.compactions):,} compactions)",
                 ms(t_sim), f"{t_sim / t_plain:.2f} x"))
    return rows


def formats() -> list[Row]:
    files = [p for p in (ROOT / "tests" / "data" / "corpus").rglob("*") if p.suffix in {".json", ".jsonl", ".traj", ".yaml"}]
    total = sum(p.stat().st_size for p in files)
    t0 = time.perf_counter()
    for p in files:
        tc.load_all(p)
    t = time.perf_counter() - t0
    tau = ROOT / "tests" / "data" / "corpus" / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json"
    t_tau, _ = timed(lambda: tc.load_all(tau), 3)
    # read + price Claude Code sessions (the corpus's, 40 copies each) against json.loads of the same lines
    from toolclear.cost.billing import recorded_cost
    from toolclear.model import main_conversation

    sessions = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "corpus" / "claude_code").glob("entire*"))] * 40
    size = sum(map(len, sessions)) / 2**20

    def floor_json() -> None:
        for d in sessions:
            for line in d.split(b"\n"):
                if line.strip():
                    json.loads(line)

    def read_price() -> None:
        for k, d in enumerate(sessions):
            recorded_cost(main_conversation(tc.load_all(d, name=f"s{k}.jsonl")).messages)
    t_floor, t_read = interleaved(floor_json, read_price, 3)  # in turn: a drift of the machine touches both
    return [
        (f"read + price {len(sessions)} Claude Code sessions ({size:.0f} MB)", ms(t_read),
         f"{t_read / t_floor:.2f} x json.loads of the same lines ({ms(t_floor)}; target <= 1.5 x)"),
        (f"load the whole corpus ({len(files)} files, {total / 2**20:.1f} MB)", ms(t), f"{total / 2**20 / t:.0f} MB/s"),
        ("load tau-bench (4 MB, 200 runs)", ms(t_tau), ""),
        *own_process("otel_bench.py"),
    ]


def ten_k_transcript(n: int = 10_000) -> bytes:
    """A generated coding-agent run of ``n`` messages (OpenAI Chat Completions JSON)."""
    rng = random.Random(1)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. " * 80}]
    for i in range(1, n):
        r = i % 4
        if r == 1:
            msgs.append({"role": "user", "content": "continue " * rng.randint(1, 30)})
        elif r == 2:
            msgs.append({"role": "assistant", "content": "Looking at it. " * rng.randint(0, 10), "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": rng.choice(["read_file", "grep", "bash", "run_tests"]),
                              "arguments": json.dumps({"path": f"src/m{i}.py"})}}]})
        elif r == 3:
            body = "\n".join(f"{k:5d}\tdef f{k}(x): return x * {k}" for k in range(rng.randint(3, 300)))
            msgs.append({"role": "tool", "tool_call_id": f"c{i - 1}", "content": body})
        else:
            msgs.append({"role": "assistant", "content": "Done with that step. " * rng.randint(1, 15)})
    return json.dumps(msgs, indent=2).encode()


def app_10k(data: bytes) -> tuple[list[Row], float]:
    """What the app itself computes per slider move (everything but Streamlit)."""
    import pandas as pd

    t_parse, t = timed(lambda: tc.load(data))
    msgs = t.messages
    t_count = timed(lambda: tc.count_tokens(msgs, "eino"))[0]
    t_cl100k = timed(lambda: tc.count_tokens(msgs, "cl100k_base"))[0]
    # the axes and the slider's range as the app sizes them (from the run's unit sizes)
    sizes = sweep.unit_sizes(msgs)
    thresholds = tuple(grid_values(max(sizes["tool_tokens"], 2), zero=True))
    keeps = tuple(grid_values(max(sizes["tokens"], 2), zero=True))
    keep_max = sizes["tokens"]
    sw = sweep.sweep(msgs, tc.ClearToolResultConfig(), thresholds, keeps)
    rng = random.Random(2)

    def core(config: tc.ClearToolResultConfig) -> Any:
        r = tc.reduce_by_tokens(msgs, config)
        rp = tc.replay(msgs, config)
        _ = (r.statuses, rp.statuses)
        report.summary_dict(r)
        pd.DataFrame(report.message_table(r, t))
        return r, rp

    def figures(r: Any, rp: Any, config: tc.ClearToolResultConfig) -> None:
        current = (config.tool_result_token_threshold, config.keep_recent_tokens)
        for fig in (charts.usage_figure(r, msgs), charts.replay_figure(rp),
                    charts.heatmap_figure(sw, "tokens_saved", current), charts.heatmap_figure(sw, "cleared", current)):
            fig.to_dict()  # what Streamlit does with a figure before sending it

    core_t, fig_t = [], []
    for _ in range(9):
        config = tc.ClearToolResultConfig(keep_recent_tokens=rng.randint(1000, keep_max))
        t0 = time.perf_counter()
        r, rp = core(config)
        t1 = time.perf_counter()
        figures(r, rp, config)
        t2 = time.perf_counter()
        core_t.append(t1 - t0)
        fig_t.append(t2 - t1)
    c, f = statistics.median(core_t), statistics.median(fig_t)
    rows = [
        (f"10,000-message transcript ({len(data) / 2**20:.1f} MB): parse", ms(t_parse), "once, cached"),
        ("  count tokens (eino / cl100k_base)", f"{ms(t_count)} / {ms(t_cl100k)}", "once, cached"),
        ("  core per slider move (reduce, replay, statuses, table, summary)", ms(c), ""),
        ("  chart build per slider move (4 figures)", ms(f), ""),
        ("  toolclear's own work per slider move", ms(c + f), "< 250 ms"),
    ]
    return rows, c + f


def startup() -> list[Row]:
    """What a user waits before the first answer: ``toolclear compare FILE`` beside
    ``toolclear --help`` (the interpreter and the argument parser: the floor), and the
    inspector's first full render in Chromium beside a bare Streamlit app's, each the
    median of runs taken in turn."""
    import subprocess

    from bench_browser import start_ups

    sample = ROOT / "sample_data" / "coding-agent.openai.json"

    def wall(*args: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "toolclear", *args], capture_output=True, check=False)
        return time.perf_counter() - start

    helps, compares = [], []
    for _ in range(5):
        helps.append(wall("--help"))
        compares.append(wall("compare", str(sample)))
    h, c = statistics.median(helps), statistics.median(compares)
    bare, app = start_ups(5)  # five each: three left the ratio 1.35-1.57 x from run to run
    return [("toolclear --help (floor: the interpreter and the parser)", ms(h), ""),
            ("toolclear compare on a sample", ms(c), f"<= 2 x --help: {c / h:.2f} x"),
            ("first full render: a bare Streamlit app (floor)", ms(bare), ""),
            ("first full render: the inspector, its verdict shown", ms(app), f"<= 1.5 x the floor: {app / bare:.2f} x")]


def browser_10k(data: bytes, own_work: float) -> list[Row]:
    """A slider move in Chromium beside the same move on a bare Streamlit app (one slider,
    one metric): the floor, measured in the same run, and the ratio to it."""
    from bench_browser import bare_slider_moves, slider_moves

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        # 24 moves each: a move's time comes in two modes about 33 ms apart (two animation
        # frames); a median of 12 swung the bare app's figure between 42 and 77 ms
        floor = statistics.median(bare_slider_moves(24))
        rows.append(("slider move in a bare Streamlit app (floor, median of 24)", ms(floor), ""))
        for n, target in ((10_000, 2.0), (100_000, 3.0)):
            path = Path(tmp) / f"run-{n}.json"
            path.write_bytes(data if n == 10_000 else ten_k_transcript(n))
            e2e = statistics.median(slider_moves(path, moves=24))
            rows.append((f"slider move in the inspector, {n:,} messages (median of 24)", ms(e2e), ""))
            rows.append((f"  inspector / floor at {n:,} messages", f"{e2e / floor:.2f} x", f"<= {target:g} x"))
    rows.append(("  toolclear's own work per move at 10,000 (all tabs)", ms(own_work), ""))
    return rows


def own_process(script: str) -> list[Row]:
    """The rows ``benchmarks/<script> --json`` prints, run in a process of its own."""
    import subprocess

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--json"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return [tuple(r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def live_rows() -> list[Row]:
    """The live adapters' rows, run in a process of their own: an agent's process does
    not hold the 100,000-message runs the rows before these leave in this one, and the
    collector's passes over them put the Agents SDK's Runner at 0.55 ms a call in the
    full run against 0.35-0.43 ms alone."""
    return own_process("live_bench.py")


def memory() -> list[Row]:
    from memory_load import inspect_tiny, run

    rows = []
    tiny = inspect_tiny()
    rows.append((f"inspect {tiny['messages']:,} tiny messages ({tiny['file_mb']:.1f} MB): peak RSS",
                 f"{tiny['peak_mb']:,.0f} MB = {tiny['peak_over_file']:.0f} x, {tiny['seconds']:.0f} s", "<= 30 x"))
    for profile in ("typical", "emoji"):
        r = run(200, profile)
        label = "mostly ASCII" if profile == "typical" else "an emoji in every result (worst case)"
        rows.append((f"load 200 MB JSON Lines, {label}: peak RSS", f"{r['peak_mb']:,.0f} MB = {r['peak_over_file']:.1f} x",
                     "< 4 x" if profile == "typical" else ""))
        rows.append((f"  load time / count time ({r['messages']:,} messages)", f"{r['load_s']:.1f} s / {r['count_s']:.2f} s", ""))
    return rows


GROUPS = ("core", "losses", "compaction", "formats", "peer", "media", "app", "browser", "startup", "live", "memory",
          "bad")
"""The table's groups of rows, in its order (``--only`` picks some)."""


def _parser() -> Any:
    import argparse

    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description="Time toolclear where users wait, each figure beside its floor or target measured in the same "
                    "run, and print one table. Everything by default (several minutes on 2 cores).")
    parser.add_argument("--only", action="append", choices=GROUPS, metavar="GROUP",
                        help=f"run only this group of rows (repeatable): {', '.join(GROUPS)}")
    for group in ("peer", "browser", "startup", "live", "memory", "bad"):
        parser.add_argument(f"--no-{group}", action="store_true", help=f"leave out the {group} rows")
    return parser


def _rows(groups: set[str]) -> list[Row]:
    rows: list[Row] = []
    if "core" in groups:
        rows += core_100k()  # the policies, pricing (the media row too) and calibration
    elif "media" in groups:
        rows += media_costing()
    if "losses" in groups:
        rows += losses_100k()
    if "compaction" in groups:
        rows += compaction_100k()
    if "formats" in groups:
        rows += formats()
    if "peer" in groups:  # ccusage on a ~/.claude tree, installed with npm where it can be
        import peer_bench

        rows += peer_bench.rows()
    if groups & {"app", "browser"}:
        data = ten_k_transcript()
        app_rows, own = app_10k(data)
        rows += app_rows if "app" in groups else []
        if "browser" in groups:
            rows += browser_10k(data, own)
    if "startup" in groups:
        rows += startup()
    if "live" in groups:
        rows += live_rows()
    if "memory" in groups:
        rows += memory()
    if "bad" in groups:
        import bad_inputs

        rows += bad_inputs.rows()
    return rows


def main(argv: list[str] | None = None) -> None:
    import compileall

    args = _parser().parse_args(argv)
    # the package's bytecode, as pip writes it when it installs the wheel: a checkout run
    # with PYTHONDONTWRITEBYTECODE (this machine's setting) compiled every module from
    # source in each process the rows start (the CLI, the Streamlit server), which a
    # user's install never does (--help took 307 ms so, 170 ms compiled)
    compileall.compile_dir(str(ROOT / "toolclear"), quiet=1)
    groups = set(args.only or GROUPS)
    groups -= {g for g in ("peer", "browser", "startup", "live", "memory", "bad") if getattr(args, f"no_{g}")}
    if args.only is None:
        groups.discard("media")  # part of the core rows
    rows = _rows(groups)
    width = max((len(r[0]) for r in rows), default=4)
    print(f"toolclear benchmarks ({os.cpu_count()} cores, Python {sys.version.split()[0]})\n")
    print(f"| {'what':<{width}} | {'measured':>22} | {'target':<12} |")
    print(f"|{'-' * (width + 2)}|{'-' * 24}|{'-' * 14}|")
    for what, figure, target in rows:
        print(f"| {what:<{width}} | {figure:>22} | {target:<12} |")


if __name__ == "__main__":
    main()
