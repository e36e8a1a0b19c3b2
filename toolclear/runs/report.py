"""Per-message reports of what the policy did, as plain rows and dicts.

The CLI's ``--report``, the app's table and its CSV / JSON exports all come from here,
so every number a user sees is computed once, by the core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, cast

from .._kept import KeptFor
from ..model import Message, MessageStatus, Slot, Transcript, memo_put
from ..policies import spec_for
from ..policies.offload import ToolResultOffloadingConfig
from ..result import Result
from ..schema import SCHEMA_VERSION, Mode, ReportDict, RowDict, SettingsDict, SummaryDict

__all__ = [
    "ROW_FIELDS",
    "json_bytes",
    "ToolSummary",
    "cost_dict",
    "display_text",
    "message_rows",
    "message_table",
    "policy_options",
    "preview",
    "report_dict",
    "settings_dict",
    "summary_dict",
    "tool_summary",
    "usd",
    "protected_from",
    "csv_cell",
    "table_csv",
    "call_input",
    "call_inputs",
    "visible",
]

ROW_FIELDS: tuple[str, ...] = tuple(RowDict.__annotations__)
"""The report's per-message fields, in column order (from ``schema.RowDict``)."""


def display_text(text: str) -> str:
    """Text safe to show or encode anywhere: a lone surrogate (valid in JSON, not in
    UTF-8) becomes U+FFFD, as Go would decode it."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def recorded_usage(messages: Sequence[Message]) -> str | None:
    """One line of what the log recorded for its model calls (None when nothing was):
    the CLI's inspect and the app's About box both show it (on every slider move: kept
    per run, a pass over 100,000 messages took 3 ms)."""
    return _usage_lines.get(messages, lambda: _recorded_usage(messages))


_usage_lines: KeptFor[str | None] = KeptFor(4)


def _recorded_usage(messages: Sequence[Message]) -> str | None:
    usages = [m.usage for m in messages if m.usage is not None]
    if not usages:
        return None
    total = sum(usages[1:], usages[0])
    return (
        f"recorded usage ({len(usages):,} model call(s), from {usages[0].source}): "
        f"input {total.input_tokens:,}, cache write {total.cache_write_tokens:,}, "
        f"cache read {total.cache_read_tokens:,}, output {total.output_tokens:,} tokens"
    )


def compaction_lines(result: Result) -> list[str]:
    """One line per compaction of a result (the run as recorded, a compaction policy's):
    the CLI's inspect and the HTML report show them."""
    out = []
    for n, c in enumerate(result.compactions, start=1):
        results = sum(1 for i in c.dropped if (result._seen or result.messages)[i].role == "tool")
        out.append(f"compaction {n} before call {c.at:,}" + (f" ({c.trigger})" if c.trigger else "")
                   + f": {c.tokens_before:,} -> {c.tokens_after:,} tokens, summary {c.summary_tokens:,}; dropped "
                   f"{len(c.dropped):,} message(s), {results:,} of them tool results")
    return out


def preview(text: str, limit: int = 80) -> str:
    """One line of a message for tables: whitespace folded, cut with an ellipsis."""
    flat = " ".join(display_text(text[: limit * 4]).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def protected_from(result: Result) -> int | None:
    """Where the protected window starts (of the final step, for a replay)."""
    return result.recent_start_index


def _static(m: Message) -> tuple[str, str, str, str]:
    """role, tool name, call id and preview of a message as shown: memoised on it. A
    message that only calls tools previews its calls."""
    hit = m._memo.get(Slot.ROW)
    if hit is None:
        text = m.content if m.content or not m.tool_calls else "calls " + ", ".join(
            f"{c.name}({c.arguments})" for c in m.tool_calls)
        hit = (display_text(m.role), display_text(m.tool_name), display_text(m.tool_call_id), preview(text))
        memo_put(m, Slot.ROW, hit)
    return hit


def _reasons(result: Result, start: int | None) -> list[str]:
    """Why each message has its status, in the words of the policy's two decisions:
    whether clearing triggers (the threshold) and where the protected window starts."""
    if not spec_for(result.config).window:
        return _policy_reasons(result)
    total, triggered = result.total_tool_result_tokens, result.triggered
    threshold = result.config.tool_result_token_threshold
    trigger = f"tool results {total:,} > {threshold:,}" if triggered else f"tool results {total:,} <= {threshold:,}"
    cleared_at = result.cleared_at if result.mode == "replay" else None
    words = {
        MessageStatus.PROTECTED: f"inside the window (from #{start})",
        MessageStatus.EXCLUDED: "its tool is excluded",
        MessageStatus.ALREADY_CLEARED: "held the placeholder already",
        MessageStatus.OFFLOADED: "over the offloading limit: saved to storage",
    }
    out: list[str] = []
    for i, (m, s) in enumerate(zip(result.messages, result.statuses)):
        if s is MessageStatus.CLEARED:
            at = f" at call #{cleared_at[i]}" if cleared_at is not None else ""
            out.append(f"before window start #{start}{at}; {trigger}")
        elif s in words:
            out.append(words[s])
        elif m.role == "tool":
            out.append(f"not triggered: {trigger}")
        else:
            out.append("")
    return out


def _policy_reasons(result: Any) -> list[str]:
    """Why, for the policies other than eino's clear-tool-result."""
    from .lab import policy_name

    name = policy_name(result.config)
    words = {
        MessageStatus.PROTECTED: "among the latest results the policy keeps",
        MessageStatus.EXCLUDED: "its tool is excluded",
        MessageStatus.OFFLOADED: "truncated when the tool returned: the full text is saved",
    }
    out: list[str] = []
    for m, s, at in zip(result.messages, result.statuses, result.cleared_at):
        if s is MessageStatus.CLEARED:
            out.append(f"{name} cleared it" + (f" at call #{at}" if result.mode == "replay" else ""))
        elif s in words:
            out.append(words[s])
        elif m.role == "tool":
            out.append("kept: the policy did not reach it")
        else:
            out.append("tool-call inputs cleared" if at is not None else "")
    return out


def message_table(result: Result, transcript: Transcript | None = None) -> dict[str, list[Any]]:
    """The per-message report as columns (``ROW_FIELDS``): cheap to build for a table."""
    n = len(result.messages)
    start = protected_from(result)
    originals = transcript.messages if transcript is not None else result.messages
    origins = list(transcript.origins) if transcript is not None and len(transcript.origins) == n else [""] * n
    static = [_static(m) for m in originals]
    statuses = result.statuses
    # single pass clears once, before no particular call: only a replay has call indices
    cleared_at: list[int | None] = list(result.cleared_at) if result.mode == "replay" else [None] * n
    offloaded: list[str | None] = [None] * n
    for r in result.offloads:
        if r is not None and r.offloaded and r.path:
            offloaded[r.index] = display_text(r.path)
    return {
        "index": list(range(n)),
        "role": [s[0] for s in static],
        "tool_name": [s[1] for s in static],
        "tool_call_id": [s[2] for s in static],
        "tokens_before": list(result.token_counts_original or result.token_counts),
        "tokens_after": list(result.token_counts_after),
        "status": [s._value_ for s in statuses],
        "in_window": [start is not None and i >= start for i in range(n)],
        "cleared_at_call": cleared_at,
        "offloaded_path": offloaded,
        "origin": [display_text(o) for o in origins],
        "preview": [s[3] for s in static],
        "why": _reasons(result, start),
    }


def message_rows(result: Result, transcript: Transcript | None = None) -> list[RowDict]:
    """One dict per message, with the fields of ``ROW_FIELDS`` (for JSON and CSV)."""
    table = message_table(result, transcript)
    columns = [table[f] for f in ROW_FIELDS]
    return [cast(RowDict, dict(zip(ROW_FIELDS, values))) for values in zip(*columns)]


def policy_options(config: Any) -> dict[str, Any]:
    """A policy config's fields as JSON values (callables by name)."""
    out: dict[str, Any] = {}
    for f in fields(config):
        if f.name.startswith("_"):
            continue
        v = getattr(config, f.name)
        if callable(v):
            v = getattr(v, "__name__", "custom")
        elif isinstance(v, tuple):
            v = list(v)
        elif isinstance(v, Mapping):
            v = {k: dict(x) if isinstance(x, Mapping) else x for k, x in v.items()}
        out[f.name] = v
    return out


def settings_dict(
    config: Any, offloading: ToolResultOffloadingConfig | None = None
) -> SettingsDict:
    if not spec_for(config).window:
        from .lab import policy_name

        return {"policy": policy_name(config), "options": policy_options(config)}
    out: SettingsDict = {
        "tool_result_token_threshold": config.tool_result_token_threshold,
        "keep_recent_tokens": config.keep_recent_tokens,
        "placeholder": config.placeholder,
        "exclude_tools": list(config.exclude_tools),
        "token_counter": config.counter_name,
    }
    if offloading is not None:
        out["offloading"] = {
            "offloading_token_limit": offloading.offloading_token_limit,
            "read_file_tool_name": offloading.read_file_tool_name,
            "trigger_tokens": offloading.trigger_tokens,
        }
    return out


def json_bytes(value: Any) -> bytes:
    """UTF-8 JSON, indented, non-ASCII kept as is; a lone surrogate (which UTF-8 cannot
    hold) is kept as its escape, so the value reads back exactly (reports, downloads)."""
    from ..formats._doc import JsonStyle

    return (JsonStyle(indent=2, item_sep=",", key_sep=": ", ensure_ascii=False).dumps(value) + "\n").encode("utf-8")


def usd(x: float) -> str:
    """Dollars as shown everywhere: cents with thousands separators, the sign in front; an
    amount under a cent (not zero) with four decimals, so it does not read as nothing."""
    sign = "-" if x < 0 else ""
    x = abs(x)
    if x != x or x == float("inf"):
        return f"{sign}${x}"
    return f"{sign}${x:,.4f}" if 0 < x < 0.005 else f"{sign}${x:,.2f}"


def cost_dict(c: Any) -> dict[str, Any]:
    """A ``Cost`` as JSON: pricing, totals with and without the policy, rows per call."""
    p = c.pricing
    return {
        "pricing": {"name": p.name, "input": p.input, "output": p.output, "cache_write": p.cache_write,
                    "cache_read": p.cache_read, "cache": p.cache, "ttl_seconds": p.ttl_seconds,
                    "min_cacheable": p.min_cacheable, "overhead_tokens": c.overhead_tokens, "scale": c.scale,
                    "as_of": p.as_of, "source": p.source},
        "dollars": c.dollars, "dollars_without_policy": c.dollars_without_policy, "dollars_saved": c.dollars_saved,
        "totals": c.totals(), "totals_without_policy": c.totals(True),
        "assumptions": list(c.assumptions),
        "calls": [dict(r._asdict()) for r in c.calls],
    }


_tool_results: KeptFor[int] = KeptFor(8)
"""The run's tool results, counted once per transcript (4 ms at 100,000 messages, asked
on every slider move)."""


def summary_dict(result: Result) -> SummaryDict:
    """Totals of one result: what the app's headline metrics show."""
    before = result.tokens_before
    after = result.tokens_after
    statuses = {s._value_: n for s, n in Counter(result.statuses).items()}  # enum hashing, then names
    # the run's own tool results, whatever the policy made of them (masking turns some into user messages)
    seen = result._seen or result.messages
    tool_results = _tool_results.get(seen, lambda: Counter(map(attrgetter("role"), seen))["tool"])  # per run
    mode: Mode = "replay" if result.mode == "replay" else "single pass"
    out: SummaryDict = {
        "mode": mode,
        "messages": len(result.messages),
        "tool_results": tool_results,
        "tokens_before": before,
        "tokens_after": after,
        "tokens_saved": before - after,
        "saved_percent": round(100.0 * (before - after) / before, 2) if before else 0.0,
        "cleared": statuses.get(str(MessageStatus.CLEARED), 0),
        "changed": len(result.cleared_indices),
        "status_counts": dict(sorted(statuses.items())),
        "recent_start_index": protected_from(result),
        "triggered": result.triggered,
        "total_tool_result_tokens": result.total_tool_result_tokens,
        "cleared_indices": list(result.cleared_indices),
    }
    if result.mode == "replay":
        out["model_calls"] = result.model_call_count
        out["cache_breaks"] = result.cache_breaks
        out["tokens_sent"] = result.tokens_sent
        out["tokens_sent_unreduced"] = result.tokens_sent_unreduced
    if result.offloads:
        done = [r for r in result.offloads if r is not None and r.offloaded]
        out["offloaded"] = len(done)
        out["offload_failures"] = [
            {"index": r.index, "error": r.error} for r in result.offloads if r is not None and r.error
        ]
    return out


def report_dict(
    result: Result,
    transcript: Transcript | None = None,
    offloading: ToolResultOffloadingConfig | None = None,
) -> ReportDict:
    """The whole JSON report of one conversation (its shape: ``schema.ReportDict``)."""
    out: ReportDict = {
        "schema_version": SCHEMA_VERSION,
        "settings": settings_dict(result.config, offloading),
        "summary": summary_dict(result),
        "messages": [],
    }
    if transcript is not None:
        out["source"] = transcript.source
        out["format"] = transcript.format
        out["conversation"] = transcript.id
    if result.steps:
        out["steps"] = [
            {
                "call_index": s.call_index,
                "final": k == len(result.steps) - 1,
                "context_tokens": s.context_tokens,
                "context_tokens_unreduced": s.context_tokens_unreduced,
                "total_tool_result_tokens": s.total_tool_result_tokens,
                "triggered": s.triggered,
                "recent_start_index": s.recent_start_index,
                "cleared_indices": list(s.cleared_indices),
                "cache_break": s.cache_break,
            }
            for k, s in enumerate(result.steps)
        ]
    if result.offloads:
        out["offloaded"] = [
            {"index": r.index, "path": display_text(r.path or ""), "bytes": r.bytes, "tokens": r.tokens}
            for r in result.offloads if r is not None and r.offloaded
        ]
    out["messages"] = message_rows(result, transcript)
    return out


@dataclass(frozen=True, slots=True)
class ToolSummary:
    """Tool results of one tool: how many and how big."""

    tool_name: str
    results: int
    tokens: int
    largest: int


def tool_summary(messages: Sequence[Message], counts: Sequence[int]) -> list[ToolSummary]:
    """Per tool name, largest total first."""
    acc: dict[str, list[int]] = {}
    for m, n in zip(messages, counts):
        if m.role == "tool":
            acc.setdefault(m.tool_name, []).append(n)
    out = [ToolSummary(name, len(v), sum(v), max(v)) for name, v in acc.items()]
    return sorted(out, key=lambda s: (-s.tokens, s.tool_name))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet shows as text: text from the transcript that starts like a
    formula (``=HYPERLINK(...)``, ``@SUM(...)``, ``+``, ``-``) gets a leading ``'``, the
    usual defence against CSV formula injection; numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def table_csv(table: Any) -> bytes:
    """A table (a corpus sweep's, a comparison's) as CSV, each text cell guarded by
    ``csv_cell``: file names and session ids come from the user's files."""
    guarded = table.copy()
    for column in guarded.columns:
        if guarded[column].dtype.kind not in "biufcmM":  # text, whatever pandas calls its dtype
            guarded[column] = guarded[column].map(csv_cell)
    return str(guarded.to_csv(index=False)).encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode()


_INPUT_KEYS = ("file_path", "path", "filePath", "notebook_path", "command", "cmd", "pattern", "query", "url",
               "file", "filename", "description", "prompt")


def call_input(arguments: str, limit: int = 120) -> str:
    """What a tool call was asked, in a few words: the file a Read read, the command a
    Bash ran, the pattern a Grep looked for (else its arguments, cut)."""
    import json

    try:
        args = json.loads(arguments) if arguments else {}
    except (ValueError, RecursionError):
        args = None
    text = arguments
    if isinstance(args, dict):
        found = next((args[k] for k in _INPUT_KEYS if isinstance(args.get(k), (str, list)) and args.get(k)), None)
        if isinstance(found, list):
            found = " ".join(str(x) for x in found)
        text = found if isinstance(found, str) else ", ".join(f"{k}={v}" for k, v in list(args.items())[:3])
    text = visible(display_text(" ".join(str(text).split())))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def visible(text: str) -> str:
    """Control, zero-width and bidi characters shown as escapes: ``read_file`` and
    ``read_file\u200b`` must not look alike, nor a U+202E turn the cell around."""
    import unicodedata

    if text.isascii() and text.isprintable():
        return text
    return "".join(c if c.isprintable() and unicodedata.category(c) != "Cf" else f"\\u{ord(c):04x}" for c in text)


def call_inputs(messages: Sequence[Message]) -> list[str]:
    """Per message, the input of the call a tool result answers ("" for other messages)."""
    asked = {c.id: c.arguments for m in messages if m.role == "assistant" for c in m.tool_calls if c.id}
    return [call_input(asked.get(m.tool_call_id, "")) if m.role == "tool" and m.tool_call_id in asked else ""
            for m in messages]
