"""The command line's parser: every command, its options and their checks."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, NoReturn

from .. import __version__
from ..cost.billing import DEFAULT_PRICING, MAX_PRICE, Pricing
from ..cost.prices import resolve
from ..policies.eino_clear import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_THRESHOLD,
)
from ..policies.offload import DEFAULT_OFFLOADING_TOKEN_LIMIT

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
    from ..runs.numbers import spread

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
    ses.add_argument("--jobs", type=_non_negative, metavar="N",
                     help="processes that read the logs (default: every core, for a listing worth sharing; "
                     "1 reads them in this process)")
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



def _policies_epilog() -> str:
    """Every registered policy (plugins too) and its option names, for ``--help``: from the
    registry, so a new policy is listed with nothing written here."""
    import textwrap
    from dataclasses import fields

    from ..policies import registered

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
