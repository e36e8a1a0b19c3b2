"""The ``toolclear`` command: reduce and inspect transcripts in scripts and pipelines.

A thin layer over the library. Exit status: 0 on success, 2 for bad input or usage
(one line on stderr, never a traceback), 1 for an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import stat
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, NoReturn

from . import __version__
from ._files import atomic_write
from .cost.billing import DEFAULT_PRICING, MAX_PRICE, PRICING, Pricing, cost, pricing_of
from .cost.logfacts import compactions_of
from .cost.prices import pricing_for, resolve
from .counters import count_tokens, get_counter, list_counters
from .errors import ToolclearError
from .formats import dump_all, list_formats, load_all, written_as
from .formats._source import read_source
from .model import Transcript, main_conversation
from .policies import spec_for
from .policies.eino_clear import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_THRESHOLD,
    reduce_by_tokens,
)
from .policies.offload import DEFAULT_OFFLOADING_TOKEN_LIMIT, LocalDirBackend, ToolResultOffloadingConfig
from .result import Result
from .runs.lab import apply, compare, parse_policy, policy_name, recorded, replay, sent_as
from .runs.report import (
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
from .runs.verdict import DEFAULT_SPECS, verdict

__all__ = ["main"]

_REDUCE_EXAMPLES = """\
examples:
  toolclear reduce session.jsonl -o reduced.jsonl
  toolclear reduce run.json --threshold 10000 --keep 20000 --exclude read_file --report report.json
  cat run.json | toolclear reduce - --replay --counter cl100k_base > reduced.json
  toolclear reduce big.json --offload-dir offloaded/ --offload-limit 5000 -o reduced.json
  toolclear reduce run.json --policy anthropic:trigger=50000,keep=5 --replay -o reduced.json
  toolclear reduce run.json --policy swe-agent:n=3 --replay -o reduced.json
  toolclear reduce run.json --policy eino-reduction:threshold=100000 --offload-dir saved/ -o reduced.json

"""
_COMPARE_EXAMPLES = """\
examples:
  toolclear compare session.jsonl                      # every policy at its defaults, call by call
  toolclear compare run.json --policy eino:threshold=10000,keep=20000 --policy anthropic:keep=5 \\
      --policy swe-agent --json
"""
_CORPUS_EXAMPLES = """\
examples:
  toolclear corpus ~/.claude/projects --threshold 10000:100000:10 --keep 10000:200000:10 --replay \\
      --pricing claude-sonnet-4-5 -o sweep.parquet
  toolclear corpus runs.zip --policy anthropic --threshold 20000:100000:5 --keep 1:9:5 --replay --jobs 4
  toolclear corpus trajectories/ --engine dask --scheduler tcp://10.0.0.5:8786 -o sweep.csv
"""
_INSPECT_EXAMPLES = """\
examples:
  toolclear inspect ~/.claude/projects/myproj/0b6d4ae8.jsonl
  toolclear inspect trajectories.json --conversation "task_id=3, trial=0" --counter cl100k_base
  toolclear inspect run.json --threshold 5000 --keep 10000
"""
_APP_EXAMPLES = """\
examples:
  toolclear app                                 # the agent sessions on this machine (else the samples)
  toolclear app ~/.claude/projects/myproj/0b6d4ae8.jsonl --port 8600
"""
_FORMATS_EXAMPLES = """\
example:
  toolclear formats
"""
_COUNTERS_EXAMPLES = """\
example:
  toolclear counters
"""


class UsageError(Exception):
    """Bad command-line usage: reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _non_negative(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    if value > MAX_NUMBER:
        raise argparse.ArgumentTypeError(f"expected a number up to {MAX_NUMBER:,}, got {text[:40]}")
    return value


MAX_NUMBER = 10**15
"""The largest count an option takes: past it a number is a typo, not a setting (and
would overflow the cost model's arrays)."""


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected needed results per 100 calls, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected needed results per 100 calls >= 0, got {text!r}")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected dollars per million tokens, got {text!r}") from None
    if value < 0 or value != value or value > MAX_PRICE:
        raise argparse.ArgumentTypeError(f"expected dollars per million tokens from 0 to {MAX_PRICE:,.0f}, "
                                         f"got {text!r}")
    return value


def _pricing_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a preset's or a model's name, 'auto' or 'none', got ''")
    return text.strip()


def _pricing_options(parser: argparse.ArgumentParser, title: str, default: str | None = None) -> None:
    g = parser.add_argument_group(f"money ({title}; presets: 'toolclear prices')")
    g.add_argument("--pricing", metavar="NAME", default=default, type=_pricing_name,
                   help="price each model call with this preset's prices and cache, or 'auto': the prices of the "
                        f"model the log names ({DEFAULT_PRICING} when it names none, said in a note)"
                        + (f"; 'none' for no dollars (default: {default})" if default else ""))
    g.add_argument("--price-input", type=_dollars, metavar="USD", help="input, dollars per million tokens")
    g.add_argument("--price-output", type=_dollars, metavar="USD", help="output, dollars per million tokens")
    g.add_argument("--price-cache-write", type=_dollars, metavar="USD", help="cache write, dollars per million")
    g.add_argument("--price-cache-read", type=_dollars, metavar="USD", help="cache read, dollars per million")
    g.add_argument("--cache", choices=["anthropic", "openai", "gemini", "none"], help="how the provider caches")
    g.add_argument("--ttl", type=_non_negative, metavar="SECONDS", help="cache lifetime (Anthropic: 300 or 3600)")
    g.add_argument("--overhead", type=_non_negative, metavar="TOKENS",
                   help="tokens every call sends that the transcript does not hold (system prompt, tools)")
    g.add_argument("--calibrate", action=argparse.BooleanOptionalAction, default=True,
                   help="fit the overhead and a tokenizer scale on the first 10 %% of calls' recorded usage, where "
                        "the log recorded usage (default: on; --no-calibrate for the presets' figures alone)")


def _pricing(args: argparse.Namespace) -> Pricing | None:
    given = {k: v for k, v in (("input", args.price_input), ("output", args.price_output),
                               ("cache_write", args.price_cache_write), ("cache_read", args.price_cache_read),
                               ("cache", args.cache), ("ttl_seconds", args.ttl),
                               ("overhead_tokens", args.overhead)) if v is not None}
    if args.pricing == "none":
        if given:
            raise UsageError("--pricing none prices nothing: drop the --price-* options, or name a preset")
        return None
    if args.pricing is None and not given:
        return None
    if args.pricing is None and ("input" not in given or "output" not in given):
        raise UsageError("without --pricing NAME, give at least --price-input and --price-output")
    if args.pricing == "auto":
        if given:
            raise UsageError("--pricing auto takes each log's own model's prices: give a preset's NAME to edit them")
        return None
    base = resolve(args.pricing) if args.pricing else Pricing(input=given["input"], output=given["output"],
                                                                cache="none")
    return replace(base, **given, name=base.name if not given else f"{base.name} (edited)")


def _range(text: str) -> list[int]:
    """A:B:N as N whole numbers from A to B (inclusive), or a single number."""
    try:
        parts = [int(p.replace("_", "").replace(",", "")) for p in text.split(":")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B:N (whole numbers), got {text!r}") from None
    if len(parts) == 1:
        return parts
    if len(parts) != 3 or parts[2] < 1 or parts[2] > 100 or min(parts[:2]) < 0:
        raise argparse.ArgumentTypeError(f"expected A:B:N with N from 1 to 100, got {text!r}")
    if parts[0] > parts[1]:
        raise argparse.ArgumentTypeError(f"expected A:B:N with A <= B (from A to B), got {text!r}")
    from .runs.numbers import spread

    return spread(*parts)


def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", help="input format (default: auto-detect; see 'toolclear formats')")
    p.add_argument("--conversation", metavar="ID", help="only this conversation of a file that holds several")
    p.add_argument("--counter", default=None,
                   help="token counter (default: eino, or the one --policy eino:counter=NAME names; see "
                        "'toolclear counters')")


def _parser() -> _Parser:
    parser = _Parser(
        prog="toolclear",
        description="See and apply context policies (eino's, Anthropic's, LangChain's, observation masking) on agent transcripts.",
        epilog="Run 'toolclear COMMAND --help' for each command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"toolclear {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    common = _Parser(add_help=False)
    common.add_argument("input", metavar="INPUT", help="transcript file, or - for standard input")
    options = _Parser(add_help=False)  # the same options, with INPUT optional: the newest session on this machine
    options.add_argument("input", metavar="INPUT", nargs="?",
                         help="transcript file, or - for standard input (default: the newest agent session on this "
                              "machine, as 'toolclear sessions' lists them)")
    for p in (common, options):
        _input_options(p)

    red = sub.add_parser(
        "reduce",
        parents=[common],
        help="clear old tool results and write the transcript back in its own format",
        description="Apply the policy and write the reduced transcript in the input's own format. "
        "On a file holding several conversations, every conversation (or just --conversation) is reduced.",
        epilog=_REDUCE_EXAMPLES + _policies_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    red.add_argument("-o", "--output", metavar="OUT", help="where to write (default: standard output)")
    red.add_argument("--policy", default="eino", metavar="SPEC",
                     help="the policy and its options, NAME[:option=value,...] (default: eino; see below)")
    red.add_argument("--threshold", type=_non_negative, default=None,
                     help=f"the policy's trigger, taken literally (eino: tool-result token threshold, default "
                     f"{DEFAULT_THRESHOLD})")
    red.add_argument("--keep", type=_non_negative, default=None,
                     help=f"what the policy keeps (eino: keep-recent token budget, default {DEFAULT_KEEP_RECENT_TOKENS})")
    red.add_argument("--placeholder", default=None, help="text a cleared result gets")
    red.add_argument("--exclude", action="append", default=[], metavar="NAME",
                     help="never clear results of this tool (repeatable)")
    red.add_argument("--replay", action="store_true",
                     help="run the policy before every model call, as an agent would (default: one pass)")
    red.add_argument("--report", metavar="REPORT.json", help="also write a JSON report of every decision")
    red.add_argument("--offload-dir", metavar="DIR", help="offload too-large results to files under DIR first")
    red.add_argument("--offload-limit", type=_non_negative, default=DEFAULT_OFFLOADING_TOKEN_LIMIT,
                     help="offloading token limit; results over 4x this many tokens are offloaded "
                     f"(default: {DEFAULT_OFFLOADING_TOKEN_LIMIT})")
    _pricing_options(red, "any of these replays the run, as --replay does")
    red.add_argument("--read-tool", default="read_file", metavar="NAME",
                     help="tool the offload notice tells the model to use (default: read_file)")

    cmp_ = sub.add_parser(
        "compare",
        parents=[options],
        help="several policies side by side on the same transcript, the verdict first",
        description="Replay each policy over the run (or apply it once with --single-pass) and print a table: "
        "peak context, tokens sent over all calls, results changed, prompt-cache breaks. Tokens are counted "
        "with --counter for every policy. Policies as in 'toolclear reduce --help'.",
        epilog=_COMPARE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmp_.add_argument("--policy", action="append", default=[], metavar="SPEC",
                      help="a policy to compare (repeatable; default: every policy at its defaults)")
    cmp_.add_argument("--single-pass", action="store_true", help="apply each policy once to the whole history")
    cmp_.add_argument("--json", action="store_true", help="print JSON (one object per conversation) instead")
    _pricing_options(cmp_, "every policy is replayed and priced alike", default="auto")

    corp = sub.add_parser(
        "corpus",
        help="every policy setting on every run of a corpus, and which to pick",
        description="Sweep policies over a whole corpus (folders, zip or tar archives, files of several runs) "
        "and recommend the setting that costs least across it. Files that cannot be read are listed, not fatal.",
        epilog=_CORPUS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    corp.add_argument("paths", nargs="+", metavar="PATH", help="folders, archives or transcript files")
    corp.add_argument("--glob", default="**/*", help="which files of a folder (default: every transcript file)")
    corp.add_argument("--format", default="auto", help="input format (default: auto-detect)")
    corp.add_argument("--policy", default="eino", metavar="SPEC",
                      help="the policy whose --threshold/--keep are swept (default: eino)")
    corp.add_argument("--threshold", type=_range, metavar="A:B:N", help="threshold values: N from A to B")
    corp.add_argument("--keep", type=_range, metavar="A:B:N", help="keep values: N from A to B")
    corp.add_argument("--replay", action=argparse.BooleanOptionalAction, default=True,
                      help="replay every run before each model call and price it, as the Corpus page, compare and "
                           "advise do (default: on; --no-replay for one pass each, no dollars)")
    corp.add_argument("--pricing", metavar="NAME", default=None, type=_pricing_name,
                      help="price every call with this preset, or 'auto': each run at the preset of the model its "
                           "log names (default with --replay: auto)")
    corp.add_argument("--calibrate", action=argparse.BooleanOptionalAction, default=True,
                      help="calibrate each run on its recorded usage, where its log has some (default: on)")
    corp.add_argument("--objective", choices=["cost", "tokens"], default="cost", help="what to minimise")
    corp.add_argument("--max-context", type=_non_negative, metavar="TOKENS",
                      help="only settings whose p99 run stays under this peak context")
    corp.add_argument("--loss-budget", type=_budget, metavar="N", default=None,
                      help="only settings that clear at most N results the agent needed later per 100 model calls "
                           "(default: 5; 'inf' for no limit)")
    corp.add_argument("--jobs", type=_non_negative, metavar="N", help="worker processes (default: every core)")
    corp.add_argument("--engine", choices=["serial", "process", "dask"], default="process")
    corp.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address (with --engine dask)")
    corp.add_argument("--counter", default="eino", help="token counter (default: eino)")
    corp.add_argument("-o", "--output", metavar="OUT", help="the table: .csv, .parquet or .json")

    insp = sub.add_parser(
        "inspect",
        parents=[options],
        help="the verdict first (what the policy saves or costs in dollars), then what it clears and why",
        description="First the verdict: the policy replayed over the run and priced with the prompt cache, "
        "against doing nothing and the cheapest of a few other settings. Then messages, tool results per tool "
        "with their tokens, recorded usage, and what the policy clears.",
        epilog=_INSPECT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    insp.add_argument("--policy", default="eino", metavar="SPEC",
                      help="the policy and its options, NAME[:option=value,...] (default: eino; see 'toolclear "
                           "policies')")
    insp.add_argument("--threshold", type=_non_negative, default=None,
                      help=f"the policy's trigger, taken literally (eino: default {DEFAULT_THRESHOLD})")
    insp.add_argument("--keep", type=_non_negative, default=None,
                      help=f"what the policy keeps (eino: default {DEFAULT_KEEP_RECENT_TOKENS})")
    _pricing_options(insp, "the verdict's replay", default="auto")
    rep = sub.add_parser(
        "report",
        parents=[options],
        help="one self-contained HTML file: the verdict, the context per call, the comparison and the losses",
        description="Write one HTML file that works offline (its charts included): what a user attaches to an "
        "issue or a pull request. Needs the app extra: pip install 'toolclear[app]'.",
        epilog="example:\n  toolclear report session.jsonl --policy anthropic:trigger=50000 -o report.html\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("--policy", default="eino", metavar="SPEC", help="the policy judged (default: eino)")
    rep.add_argument("-o", "--output", metavar="OUT.html", help="where to write (default: standard output)")
    _pricing_options(rep, "the verdict's replay", default="auto")
    ses = sub.add_parser(
        "sessions",
        help="the agent sessions on this machine, newest first",
        description="Lists the session logs Claude Code (~/.claude/projects, ~/.config/claude/projects; "
        "CLAUDE_CONFIG_DIR), Codex CLI (~/.codex/sessions; CODEX_HOME) and Gemini CLI (~/.gemini/tmp/*/chats; "
        "GEMINI_CLI_HOME) left on this machine, newest first: agent, project, start, model calls, peak context "
        "and the dollars their recorded usage comes to.",
        epilog="examples:\n  toolclear sessions\n  toolclear sessions --agent codex --limit 5 --json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ses.add_argument("--agent", choices=["claude", "codex", "gemini"], help="one agent's sessions only")
    ses.add_argument("--limit", type=_non_negative, default=20, help="how many of the newest (default: 20; 0: all)")
    ses.add_argument("--json", action="store_true", help="print JSON")
    adv = sub.add_parser(
        "advise",
        help="for each agent on this machine: whether any policy pays, and which setting to run",
        description="No settings: finds each agent's recent sessions (as 'toolclear sessions' does), says what "
        "its context did (peak, compactions, cache hit rate, recorded dollars), replays every policy family at "
        "a few settings on each session, priced at its own model with the prompt cache, and says whether any "
        "pays once the cache is counted, the best setting with its dollars and losses, and a snippet.",
        epilog="examples:\n  toolclear advise\n  toolclear advise --recent 20 --json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    adv.add_argument("--recent", type=_non_negative, default=10, help="sessions per agent (default: 10 newest)")
    adv.add_argument("--jobs", type=_non_negative, metavar="N",
                     help="worker processes (default: every core; 1 runs in this process)")
    adv.add_argument("--json", action="store_true", help="print JSON")
    app = sub.add_parser(
        "app",
        help="open the inspector (Streamlit) in the browser, on FILE when given",
        description="Start the toolclear inspector, a local Streamlit app, on FILE, or on a picker of the agent "
        "sessions on this machine (newest first; the bundled samples when there are none). "
        "Needs the app extra: pip install 'toolclear[app]'.",
        epilog=_APP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    app.add_argument("file", metavar="FILE", nargs="?", help="transcript to open")
    app.add_argument("--port", type=_non_negative, default=8501, help="port to serve on (default: 8501)")
    app.add_argument("--address", default="localhost", help="address to serve on (default: localhost)")
    app.add_argument("--headless", action="store_true", help="do not open a browser window")
    pol = sub.add_parser(
        "policies",
        help="every registered policy (plugins' too) with its options and their defaults",
        description="The policies --policy takes, from the registry (built-in and the toolclear.policies "
        "entry-point group): each name, its presets, what it does, and every option with its default.",
        epilog="examples:\n  toolclear policies\n  toolclear policies --json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pol.add_argument("--json", action="store_true", help="print JSON")
    prices = sub.add_parser(
        "prices", help="the pricing presets, or what a model is priced at (dollars per million tokens)",
        description="The pricing presets --pricing takes: prices, cache kind, the date and page they come from. "
                    "Given MODEL names: the prices each gets (from genai-prices when installed, else its preset).",
    )
    prices.add_argument("model", nargs="*", metavar="MODEL", help="model names as logs write them")
    prices.add_argument("--batch", action="store_true", help="through the provider's batch API")
    sub.add_parser(
        "formats",
        help="list the transcript formats toolclear reads",
        description="List the transcript formats, where they are found and what counts as a tool result.",
        epilog=_FORMATS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.add_parser(
        "counters",
        help="list the token counters and whether they work here",
        description="List the token counters; tiktoken encodings that cannot load here say why.",
        epilog=_COUNTERS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _read_input(name: str | None, stderr: IO[str] | None = None) -> tuple[object, str | None]:
    """The input named, standard input for -, or with no name the newest agent session
    on this machine (said on stderr)."""
    if name is None:
        from .corpus.sessions import find_sessions, where_looked

        found = find_sessions()
        if not found:
            raise UsageError("no INPUT given and no agent session found on this machine (looked in "
                             + ", ".join(where_looked()) + ")")
        if stderr is not None:
            print(f"toolclear: the newest session: {terminal_text(found[0].path)} ({found[0].agent})", file=stderr)
        return found[0].path, None
    if name == "-":
        return sys.stdin.buffer, "<stdin>"
    return name, None


# control characters, line and paragraph separators, and the invisible format characters a
# crafted name hides behind: zero-width spaces and joiners, bidi marks, embeddings and isolates
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                      "\ufeff\ufff9-\ufffb]")


def terminal_text(text: str) -> str:
    """Text from the input made safe for a terminal: control characters (escape
    sequences, OSC 52 clipboard writes, bidi overrides, line breaks) become visible
    escapes such as ``\\x1b``, so a crafted file name or error cannot paint or move
    what the terminal shows."""
    text = display_text(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _select(transcripts: list[Transcript], wanted: str | None) -> list[Transcript]:
    if wanted is None:
        return transcripts
    chosen = [t for t in transcripts if t.id == wanted]
    if not chosen:
        ids = ", ".join(repr(t.id) for t in transcripts[:5])
        more = ", ..." if len(transcripts) > 5 else ""
        raise UsageError(f"no conversation with id {wanted!r}; this file holds {ids}{more}")
    return chosen


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(inputs: Sequence[str], outputs: Sequence[tuple[str, str | None]]) -> None:
    """Refuse an output that is an input, or the same file as another output: each
    would overwrite what the command is still reading or has just written."""
    named = [(flag, path) for flag, path in outputs if path not in (None, "-")]
    for flag, path in named:
        assert path is not None
        if not path.strip():
            raise UsageError(f"{flag} '': give a file name, or - for standard output")
        for src in inputs:
            if src != "-" and _same_file(src, path):
                raise UsageError(f"{flag} {path} is the input file; write the output somewhere else")
    for k, (flag, path) in enumerate(named):
        for other_flag, other in named[k + 1 :]:
            assert path is not None and other is not None
            if _same_file(path, other):
                raise UsageError(f"{flag} and {other_flag} are the same file ({path}); give each its own")


class _Interrupts:
    """Holds Ctrl-C back while a finished output is moved into place, so an output is
    either not there or complete, and the exit message can say which."""

    def __init__(self) -> None:
        self.pending = False

    def __enter__(self) -> _Interrupts:
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._hold)
        return self

    def _hold(self, signum: int, frame: object) -> None:
        self.pending = True

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


_WRITTEN: list[str] = []
"""Outputs completed by the running command (for the message when it is interrupted)."""


def _new_mode(target: Path) -> int:
    """The mode an output gets: the existing file's permissions (never its setuid, setgid
    or sticky bit: new content is not the program that was trusted with them), else what
    the umask allows."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode) & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _write_output(path: str | None, data: bytes, stdout: IO[bytes]) -> None:
    if path is None or path == "-":
        stdout.write(data)
        stdout.flush()
        return
    target = Path(path)
    try:
        info = os.stat(target)
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
            # a terminal, /dev/null, a pipe: write into it, never replace the node
            try:
                with open(target, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
            _WRITTEN.append(path)
            return
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise UsageError(f"cannot write {path}: it is {kind}")
    if target.is_symlink():  # written through, as cp and sort -o do: the link stays a link
        target = Path(os.path.realpath(target))
    @contextlib.contextmanager
    def moved() -> Iterator[None]:
        with _Interrupts():  # Ctrl-C waits until the output is in place and said to be
            yield
            _WRITTEN.append(path)

    try:
        atomic_write(target, data, mode=_new_mode(target), guard=moved)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


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


def _run_pricing(args: argparse.Namespace, pricing: Pricing | None, t: Transcript) -> Pricing | None:
    """The prices of one conversation: the given ones, or with --pricing auto its log's
    model's (a stated default when it names none: the note is printed once)."""
    if getattr(args, "pricing", None) != "auto":
        return pricing
    found, note = pricing_of(t.messages, "auto")
    if note and note not in _NOTED:
        _NOTED.append(note)
    return found


_FIRST_FAILURE: list[str] = []
"""Why the first offload write of the running command failed (said with the count)."""
_NOTED: list[str] = []
"""What the pricing assumed, said once on stderr after the output."""


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
    transcripts = load_all(source, args.format, name=label)
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
        from .runs.losses import losses

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
    from .corpus.sweeps import grid, load_corpus, sweep_corpus

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


def _write_table(table: Any, path: str, stdout: IO[bytes]) -> None:
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        try:
            buf = io.BytesIO()
            table.to_parquet(buf, index=False)
        except ImportError:
            raise UsageError("Parquet needs pyarrow: pip install 'toolclear[corpus]'") from None
        data = buf.getvalue()
    elif suffix == ".json":
        data = table.to_json(orient="records", indent=1).encode("utf-8")
    else:
        data = table_csv(table)  # file names and session ids are the user's: no cell starts a formula
    _write_output(path, data, stdout)


class _Progress:
    """Runs done, rate and time left, on a terminal only (a pipe gets the summary alone)."""

    def __init__(self, stream: IO[str]) -> None:
        import time

        self.stream, self.t0, self.clock = stream, time.monotonic(), time.monotonic
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.tty:
            return
        elapsed = max(self.clock() - self.t0, 1e-6)
        rate = done / elapsed
        left = (total - done) / rate if rate else 0
        width = 30
        filled = int(width * done / max(total, 1))
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files, "
                          f"{rate:.1f}/s, {left:.0f} s left ")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")


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
    chosen = _select(load_all(source, args.format, name=label), args.conversation)
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


def _say_notes(stderr: IO[str]) -> None:
    for note in _NOTED:
        print(f"toolclear: note: {terminal_text(note)}", file=stderr)


def _fmt(n: int) -> str:
    return f"{n:,}"


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


def _policy_lines(t: Transcript, config: Any, counter: str, run: Result | None) -> list[str]:
    """What the policy does with these settings, in one pass and replayed, and why."""
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
                       f"{_fmt(single['tokens_after'])} tokens (-{single['saved_percent']}%)")
        else:
            out.append(f"    single pass: nothing cleared (tool results {tool_total} <= threshold {threshold})")
    else:
        out.append(f"    single pass: changes {single['cleared']} message(s); {_fmt(single['tokens_before'])} -> "
                   f"{_fmt(single['tokens_after'])} tokens (-{single['saved_percent']}%)")
    run = run if run is not None else replay(t.messages, config, counter=counter)
    r = summary_dict(run)
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
    out += _policy_lines(t, config, counter_name, run)
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
    transcripts = _select(load_all(source, args.format, name=label), args.conversation)
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
    from .corpus.sessions import find_sessions, read_session, where_looked
    from .cost.billing import recorded_total

    agent = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}.get(args.agent or "")
    found = find_sessions(agent=agent)
    if not found:
        raise UsageError("no agent session found on this machine (looked in " + ", ".join(where_looked()) + ")")
    shown = found[:args.limit] if args.limit else found
    summaries = [read_session(f)[0] for f in shown]
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
    from .corpus.advice import advise
    from .corpus.sessions import where_looked

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
    from .inspector.html_report import html_report

    if args.output:
        check_outputs([args.input or ""], [("-o", args.output)])
    source, label = _read_input(args.input, stderr)
    t = main_conversation(_select(load_all(source, args.format, name=label), args.conversation))
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


def app_command(file: str | None, *, port: int = 8501, address: str = "localhost",
                headless: bool = False) -> list[str]:
    """The ``streamlit run`` command line of the inspector, with the settings of the
    repository's .streamlit/config.toml (an installed toolclear has no such file)."""
    import importlib.util

    spec = importlib.util.find_spec("toolclear.inspector.app")
    assert spec is not None and spec.origin is not None
    return [
        sys.executable, "-m", "streamlit", "run", spec.origin,
        f"--server.port={port}", f"--server.address={address}", f"--server.headless={str(headless).lower()}",
        "--server.maxUploadSize=200", "--browser.gatherUsageStats=false", "--theme.base=light",
        "--client.toolbarMode=viewer", "--runner.magicEnabled=false",
        "--global.disableWidgetStateDuplicationWarning=true",
    ]


def _app(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    import importlib.util
    import subprocess

    if importlib.util.find_spec("streamlit") is None:
        raise UsageError("the inspector needs Streamlit: pip install 'toolclear[app]'")
    env = dict(os.environ)
    env.pop("TOOLCLEAR_APP_SESSIONS", None)
    if not args.file:  # opens on a picker of the agent sessions on this machine
        env["TOOLCLEAR_APP_SESSIONS"] = "1"
    if args.file:
        path = Path(args.file).resolve()
        read_source(path)  # refuse a missing, special or oversized file here, in one line
        env["TOOLCLEAR_APP_FILE"] = str(path)
    child = subprocess.Popen(app_command(args.file, port=args.port, address=args.address,
                                         headless=args.headless), env=env)

    def _stop(signum: int, frame: object) -> None:
        # `kill`, `timeout` and systemd send SIGTERM to this process only: pass it on, or
        # the server is re-parented and keeps its port
        child.terminate()

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()


def _prices(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    head = "                    input  output  cache write  cache read  cache      min   as of       source"
    if args.model:
        lines = ["model" + head[5:]]
        for model in args.model:
            p = pricing_for(model, batch=args.batch)
            lines.append(f"{p.name:<18} {p.input:>6.3g} {p.output:>7.3g} {p.cache_write:>12.3g} {p.cache_read:>11.3g}  "
                         f"{p.cache:<9} {p.min_cacheable:>5}  {p.as_of or '-':<10}  {p.source}")
            if p.long is not None:
                lines.append(f"{'':<18} past {p.long_context_from:,} input tokens a call pays {p.long[0]:.3g} input, "
                             f"{p.long[1]:.3g} output, {p.long[2]:.3g} cache write, {p.long[3]:.3g} cache read")
        lines.append("US dollars per million tokens.")
        stdout.write(("\n".join(lines) + "\n").encode())
        return 0
    lines = ["preset" + head[6:]]
    for name, p in PRICING.items():
        lines.append(f"{name:<18} {p.input:>6.3g} {p.output:>7.3g} {p.cache_write:>12.3g} {p.cache_read:>11.3g}  "
                     f"{p.cache:<9} {p.min_cacheable:>5}  {p.as_of}  {p.source}")
    lines.append("US dollars per million tokens. Edit toolclear/data/pricing.json or pass --price-* to change them.")
    lines.append("A log's model is priced from genai-prices when it is installed (toolclear[prices]), these presets "
                 "being the offline fallback: 'toolclear prices MODEL' shows what a model gets.")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0


def _policies(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from dataclasses import fields

    from .policies import registered

    docs: list[dict[str, Any]] = []
    for spec in registered():
        base = spec.presets[0].make()
        options = {f.name: _plain_option(getattr(base, f.name)) for f in fields(base) if not f.name.startswith("_")
                   and not callable(getattr(base, f.name))}
        docs.append({"name": spec.name, "presets": [p.name for p in spec.presets],
                     "help": spec.presets[0].help, "options": options, "aliases": dict(spec.aliases),
                     "source": spec.source})
    if args.json:
        stdout.write(json_bytes(docs))
        return 0
    lines = []
    for d in docs:
        names = ", ".join(d["presets"])
        lines += [f"{names}" + (f"  (from {d['source']})" if d["source"] != "toolclear" else ""),
                  f"  {d['help']}"]
        short = {v: k for k, v in d["aliases"].items()}
        for name, value in d["options"].items():
            alias = f" ({short[name]})" if name in short else ""
            lines.append(f"    {name}{alias} = {json.dumps(value, ensure_ascii=False)}")
        lines.append("")
    lines.append("Use: --policy NAME[:option=value,...], lists as a|b or JSON, e.g. anthropic:trigger=50000,keep=5")
    stdout.write(("\n".join(terminal_text(line) for line in lines) + "\n").encode("utf-8", "replace"))
    return 0


def _policies_epilog() -> str:
    """Every registered policy (plugins too) and its option names, for ``--help``: from the
    registry, so a new policy is listed with nothing written here."""
    import textwrap
    from dataclasses import fields

    from .policies import registered

    lines = ["", "policies (--policy NAME[:option=value,...]; lists as a|b; 'toolclear policies' shows defaults):"]
    for spec in registered():
        short = {v: k for k, v in spec.aliases.items()}
        base = spec.presets[0].make()
        names = [f.name + (f" ({short[f.name]})" if f.name in short else "") for f in fields(base)
                 if not f.name.startswith("_")]
        text = spec.presets[0].label + ": " + ", ".join(names)
        if len(spec.presets) > 1:
            text += "; presets: " + ", ".join(p.name for p in spec.presets[1:])
        wrapped = textwrap.wrap(text, 100, break_on_hyphens=False)
        lines.append(f"  {spec.name:<15} {wrapped[0]}")
        lines += [" " * 18 + w for w in wrapped[1:]]
    return "\n".join(lines) + "\n"


def _plain_option(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain_option(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain_option(v) for k, v in value.items()}
    return repr(value)


def _formats(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    lines = []
    width = max(len(f.name) for f in list_formats())
    for f in list_formats():
        lines.append(f"{f.name:<{width}}  {f.label}")
        lines.append(f"{'':<{width}}  found: {f.where_found}")
        lines.append(f"{'':<{width}}  tool result: {f.tool_result}")
        if f.writes_as != f.name:
            lines.append(f"{'':<{width}}  written back as: {f.writes_as} ({f.export_changes})")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0


def _counters(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    lines = []
    for c in list_counters():
        state = "available" if c.available else "not available: " + c.reason
        lines.append(f"{c.name:<15} {c.label}\n{'':<15} {state}")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0


_COMMANDS = {"reduce": _reduce, "compare": _compare, "corpus": _corpus, "prices": _prices, "inspect": _inspect,
             "app": _app, "formats": _formats, "counters": _counters, "sessions": _sessions, "advise": _advise,
             "report": _report, "policies": _policies}


def main(argv: Sequence[str] | None = None, *, stdout: IO[bytes] | None = None, stderr: IO[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr
    _WRITTEN.clear()
    _NOTED.clear()
    _FIRST_FAILURE.clear()
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        if args.command != "reduce" and getattr(args, "counter", "") is None:
            args.counter = "eino"
        if args.command is None:
            parser.print_help(sys.stdout)
            return 2
        # SIGTERM (timeout, systemd, kill) ends every command as Ctrl-C does: no temporary file left
        return _with_sigterm_as_interrupt(lambda: _COMMANDS[args.command](args, out, err))
    except (UsageError, ToolclearError) as exc:
        print(f"toolclear: error: {terminal_text(str(exc))}", file=err)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as exc:
        done = ", ".join(terminal_text(p) for p in _WRITTEN)
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"toolclear: {how}; {'wrote ' + done + ' before that' if done else 'nothing was written'}",
              file=err)
        return 143 if isinstance(exc, Terminated) else 130
    except MemoryError:
        print("toolclear: error: out of memory reading the input", file=err)
        return 2
    except Exception as exc:  # never a traceback: one line, and a distinct status
        print(f"toolclear: internal error, please report it: {type(exc).__name__}: {terminal_text(str(exc))}",
              file=err)
        return 1


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is (the same clean-up), reported as such (exit 143)."""


def _with_sigterm_as_interrupt(run: Any) -> int:
    """SIGTERM (what `timeout`, systemd and `docker stop` send) taken as Ctrl-C, so a
    sweep stops its worker processes and says what it wrote, instead of dying with
    its workers left running."""
    if threading.current_thread() is not threading.main_thread():
        return int(run())

    def _interrupt(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return int(run())
    finally:
        signal.signal(signal.SIGTERM, previous)


def main_entry() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except KeyboardInterrupt:  # between the call and main's own handler
        print("toolclear: interrupted; nothing was written", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover  (last: it calls the helpers above)
    main_entry()
