"""The inspector's views for the policies beyond eino's clear-tool-result, and the
Compare view every policy shares.

Each policy gets its own controls (its two main numbers as slider pairs sized to the
transcript, its other options in an expander, its defaults one click away); the
numbers, charts and tables come from ``toolclear.apply`` / ``toolclear.replay``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

import toolclear as tc
from toolclear import schema
from toolclear.formats import written_as
from toolclear.inspector import charts, exports, money
from toolclear.inspector.history import (
    VIEWS,
    losses_of,
    render_losses,
    render_metrics,
    render_table,
    render_transcript_notes,
)
from toolclear.inspector.verdict_view import render_verdict, report_button
from toolclear.inspector.widgets import md, safe, slider_pair, store
from toolclear.policies import Knob, preset_named, registered, snippets
from toolclear.policies._spec import default_knobs
from toolclear.policies.eino_reduction import reduction_tokens
from toolclear.policies.langchain import langchain_tokens
from toolclear.runs import lab, report
from toolclear.runs.numbers import grid_values, nice_ceil

__all__ = ["knobs_for", "policy_choices", "policy_help", "losses_of", "render_compare", "render_losses", "render_policy"]

def policy_choices() -> dict[str, str]:
    """The sidebar's policy picker: label -> the name ``lab.parse_policy`` takes, read
    from the registry each time (a policy registered since is there): a policy with
    named presets (observation masking) is picked by them."""
    choices: dict[str, str] = {}
    for spec in registered():
        for preset in spec.presets[1:] or spec.presets:
            choices.setdefault(preset.label, preset.name)
    return choices


def policy_help(kind: str) -> str:
    return preset_named(kind)[1].help


def knobs_for(kind: str) -> tuple[Knob, ...]:
    """The sliders of a policy (or preset) by name: its knobs, else its whole numbers."""
    spec, preset = preset_named(kind)
    return preset.knobs or default_knobs(spec.config)


def _key(kind: str, field: str) -> str:
    return f"p_{kind.replace('-', '_')}_{field}"


def _defaults(kind: str) -> Any:
    return lab.parse_policy(kind)


def _sizes(t: tc.Transcript, counter: str) -> dict[str, int]:
    """What each kind of knob can range over on this conversation: three passes over it,
    so worked out once per conversation and counter, not on every slider move."""
    memo = st.session_state.get("_policy_sizes")
    if memo is not None and memo[0] is t and memo[1] == counter:
        return dict(memo[2])
    msgs = t.messages
    sizes = {
        "tokens": sum(tc.count_tokens(msgs, counter)),
        "lc_tokens": sum(langchain_tokens(m) for m in msgs),
        "rd_tokens": reduction_tokens(msgs),
        "rounds": sum(1 for m in msgs if m.role == "assistant" and m.tool_calls),
        "uses": sum(1 for m in msgs if m.role == "tool"),
        "messages": len(msgs),
        "steps": 20,
    }
    st.session_state["_policy_sizes"] = (t, counter, sizes)
    return dict(sizes)


def _top(unit: str, size: int) -> tuple[int, int]:
    if unit.endswith("tokens"):
        top = nice_ceil(max(1000, size * 1.1))
        return top, max(1, nice_ceil(top / 200))
    return max(5, size + 1), 1


def _set_defaults(kind: str) -> None:
    base = _defaults(kind)
    for knob in knobs_for(kind):
        store(_key(kind, knob.field), int(getattr(base, knob.field)))
    for name in list(st.session_state):
        if str(name).startswith(_key(kind, "opt_")):
            del st.session_state[name]


def _knobs(kind: str, t: tc.Transcript, counter: str) -> dict[str, int]:
    sizes = _sizes(t, counter)
    base = _defaults(kind)
    cols = st.columns(2)
    values = {}
    for col, knob in zip(cols, knobs_for(kind)):
        top, step = _top(knob.unit, sizes[knob.unit])
        values[knob.field] = slider_pair(col, _key(kind, knob.field), knob.label, top, step, knob.help,
                                         int(getattr(base, knob.field)))
    cols[0].button("Defaults of the reference", key=_key(kind, "defaults"), on_click=_set_defaults, args=(kind,),
                   help="Back to the numbers the reference itself uses.")
    counts = ", ".join(f"{sizes[k.unit]:,} {k.unit.replace('rd_', '').replace('lc_', 'LangChain ')}"
                       for k in knobs_for(kind) if k.unit != "steps")
    cols[-1].caption(f"This conversation: {counts}. {policy_help(kind)}")
    return values


def _tools(t: tc.Transcript) -> list[str]:
    return sorted({m.tool_name for m in t.messages if m.role == "tool" and m.tool_name})


def _options(kind: str, t: tc.Transcript) -> tuple[dict[str, Any], bool]:
    """The policy's other options, as its spec lists them; returns them and whether a
    backend saves files."""
    out: dict[str, Any] = {}
    base = _defaults(kind)
    options = preset_named(kind)[0].options
    files = False
    with st.expander("More options"):
        for o in options:
            key = _key(kind, o.key or f"opt_{o.field}")
            if o.kind == "saves_files":
                files = st.toggle(o.label, value=True, key=key, help=o.help or None)
                out[o.field] = not files
            elif o.kind in ("number", "number_or_none"):
                n = int(st.number_input(o.label, 0, None, int(getattr(base, o.field) or 0), 1000, key=key,
                                        help=o.help or None, disabled=o.needs_files and not files))
                out[o.field] = (n or None) if o.kind == "number_or_none" else n
            elif o.kind == "tools":
                out[o.field] = tuple(st.multiselect(o.label, _tools(t), key=key, help=o.help or None))
            elif o.kind == "toggle":
                out[o.field] = st.toggle(o.label, value=bool(getattr(base, o.field)), key=key, help=o.help or None)
            elif o.kind == "json":  # the framework's own form (LangChain's trigger clauses), read by the config
                out[o.field] = st.text_input(o.label, json.dumps(base.spec_value(o.field)), key=key,
                                             help=o.help or None)
            else:
                out[o.field] = st.text_input(o.label, str(getattr(base, o.field)), key=key, help=o.help or None)
        if not options:
            st.caption("This policy has no other options.")
    return out, files


def sent_calibration(t: tc.Transcript, counter: str) -> tc.Calibration | None:
    """The run's calibration as the CLI, compare and the corpus take it (``lab.sent_as``,
    kept per transcript and counter by ``toolclear.calibrate`` itself)."""
    return lab.sent_as(t.messages, counter)


def current_policy(kind: str, t: tc.Transcript, counter: str) -> tuple[Any, bool]:
    values = _knobs(kind, t, counter)
    options, files = _options(kind, t)
    config = replace(_defaults(kind), **values, **options)
    return config, files


def render_policy(kind: str, t: tc.Transcript, digest: str, counter: str,
                  pricing: tc.Pricing | None = None, calibrate: bool = False) -> None:
    """Everything below the sidebar for a policy other than eino's clear-tool-result."""
    config, files = current_policy(kind, t, counter)
    mode: schema.Mode = st.session_state.mode
    backend = tc.MemoryBackend() if files else None
    if mode == "replay":
        result = tc.replay(t.messages, config, backend=backend, counter=counter,
                           calibration=sent_calibration(t, counter))
    else:
        result = tc.apply(t.messages, config, backend=backend, counter=counter)
    v = render_verdict(t, config, counter, pricing, calibrate)
    summary = report.summary_dict(result)
    st.subheader("In the history", anchor=False)
    render_metrics(summary, mode)
    lost = render_losses(result, mode)
    priced = v.comparison.costs[0] if v is not None and v.comparison is not None else None
    truncated = summary["status_counts"].get("offloaded", 0)
    if truncated:
        st.caption(f"{truncated:,} result(s) truncated as the tool returned: the model sees the head and tail, the "
                   "full text is saved (eino's truncation).")
    for note in result.notes:
        st.warning(md(note))
    if not result.cleared_indices:
        st.info("Nothing is changed at these settings: " + _why_nothing(kind, config, t, counter))
    render_transcript_notes(t)
    tabs = st.tabs(list(VIEWS), key="view", on_change="rerun")
    for name, tab in zip(VIEWS, tabs):
        if not tab.open:
            continue
        with tab:
            if name == "Token usage":
                st.plotly_chart(charts.usage_figure(result, t.messages, marks=t.marks), key="p_usage_chart",
                                config={"displaylogo": False})
                st.caption("One bar per message (its tokens before the policy), coloured by what the policy did.")
            elif name == "Replay":
                rp = result if mode == "replay" else tc.replay(t.messages, config, backend=tc.MemoryBackend()
                                                               if files else None, counter=counter,
                                                               calibration=sent_calibration(t, counter))
                render_replay_view(rp, t, lost if rp is result else losses_of(rp), pricing, calibrate, priced)
            elif name == "Messages":
                render_table(t, result)
            elif name == "Parameter sweep":
                render_policy_sweep(kind, t, config, mode, counter, files, digest)
            elif name == "Compare":
                render_compare(t, counter, lab.policy_spec(config), pricing, calibrate)
            elif name == "Export":
                render_policy_export(t, result, config, mode)


def render_replay_view(rp: tc.Result, t: tc.Transcript, lost: Any, pricing: tc.Pricing | None, calibrate: bool,
                       priced: Any) -> None:
    """The Replay view: context per call, the compactions, the calls' numbers and dollars."""
    st.plotly_chart(charts.replay_figure(rp, marks=compaction_marks(rp, t), lost=lost), key="p_replay_chart",
                    config={"displaylogo": False})
    if rp.compactions:
        render_compactions(rp, t, lost)
    c = st.columns(3)
    c[0].metric("Model calls", f"{len(rp.model_call_steps):,}")
    c[1].metric("Input tokens over all calls", f"{rp.tokens_sent:,}",
                f"-{rp.tokens_sent_unreduced - rp.tokens_sent:,} vs. no policy", delta_color="off")
    c[2].metric("Prompt-cache breaks", f"{rp.cache_breaks:,}")
    if pricing is not None:
        money.render_cost_view(priced if priced is not None else tc.cost(
            rp, pricing, calibrate=calibrate, compactions=[k for k, _ in t.marks]), t)


def compaction_marks(result: tc.Result, t: tc.Transcript) -> tuple[tuple[int, str], ...]:
    """The compactions a chart marks: the result's own (the run as recorded, a compaction
    policy's), else the log's."""
    if result.compactions:
        return tuple((c.at, f"compaction {n}" + (f" ({c.trigger})" if c.trigger else ""))
                     for n, c in enumerate(result.compactions, start=1))
    return t.marks


def render_compactions(result: tc.Result, t: tc.Transcript, lost: Any) -> None:
    """Each compaction: where, why, how much it dropped, and which of the dropped results
    later calls needed; pick one to see what it dropped."""
    needed = set(lost.needed) if lost is not None else set()
    by_message = lost.by_message() if lost is not None else {}
    rows = []
    for n, c in enumerate(result.compactions, start=1):
        dropped_results = [i for i in c.dropped if t.messages[i].role == "tool"]
        rows.append({"compaction": n, "at call": c.at, "trigger": c.trigger or "-", "tokens before": c.tokens_before,
                     "tokens after": c.tokens_after, "summary tokens": c.summary_tokens,
                     "messages dropped": len(c.dropped), "tool results dropped": len(dropped_results),
                     "needed later": len([i for i in c.dropped if i in needed]),
                     "summary call": "made" if c.called else "none (fixed text)"})
    st.subheader("Compactions", anchor=False)
    st.dataframe(rows, hide_index=True, key="p_compactions")
    numbers = list(range(1, len(rows) + 1))
    pick = st.selectbox("What a compaction dropped", numbers, key="p_compaction_pick",
                        format_func=lambda k: f"compaction {k} at call {result.compactions[k - 1].at:,}")
    c = result.compactions[(pick or 1) - 1]
    counts = result.token_counts
    names = {call.id: call.name for m in t.messages[: c.at] if m.role == "assistant" for call in m.tool_calls}
    detail = []
    for i in c.dropped:
        m = t.messages[i]
        if m.role != "tool":
            continue
        refs = by_message.get(i, [])
        detail.append({"message": i, "tool": safe(m.tool_name or names.get(m.tool_call_id, "")),
                       "tokens": counts[i], "needed later": "yes" if i in needed else "",
                       "needed by calls": ", ".join(f"{r.call_index:,}" for r in refs[:8]),
                       "preview": safe(m.content[:120])})
    st.dataframe(detail, hide_index=True, key="p_compaction_dropped")
    st.caption(f"{len(detail):,} tool result(s) dropped by compaction {pick}; \"needed later\": a later reply "
               "used a term only they held, or the agent fetched them again (the same call, the same file).")




def _why_nothing(kind: str, config: Any, t: tc.Transcript, counter: str) -> str:
    sizes = _sizes(t, counter)
    explain = preset_named(kind)[0].why_nothing
    if explain is not None:
        return explain(config, sizes)
    return f"{sizes['uses']} tool result(s); this policy changed none of them at these settings."


# ------------------------------------------------------------------ sweep


@st.cache_resource(max_entries=16, show_spinner="Sweeping…")
def _sweep(key: tuple[Any, ...], _t: tc.Transcript, _config: Any, fx: str, xs: tuple[int, ...], fy: str,
           ys: tuple[int, ...], mode: str, counter: str, files: bool) -> Any:
    from toolclear.runs.eino_sweep import Sweep

    saved, changed, breaks, needed = [], [], [], []
    for y in ys:
        row_s, row_c, row_b, row_n = [], [], [], []
        for x in xs:
            cfg = replace(_config, **{fx: x, fy: y})
            backend = tc.MemoryBackend() if files else None
            r = (tc.replay if mode == "replay" else tc.apply)(_t.messages, cfg, backend=backend, counter=counter)
            row_n.append(len(tc.losses(r).needed))
            row_s.append(r.tokens_sent_unreduced - r.tokens_sent if mode == "replay" else r.tokens_before - r.tokens_after)
            row_c.append(len(r.cleared_indices))
            row_b.append(r.cache_breaks)
        saved.append(tuple(row_s))
        changed.append(tuple(row_c))
        breaks.append(tuple(row_b))
        needed.append(tuple(row_n))
    return Sweep(ys, xs, tuple(saved), tuple(changed), tuple(breaks) if mode == "replay" else None, 0, mode,
                 needed=tuple(needed) if mode == "replay" else None)


def _axis(unit: str, size: int, current: int) -> tuple[int, ...]:
    if unit.endswith("tokens"):
        return tuple(grid_values(max(size, 2), zero=True))
    top = max(size, current, 1)
    step = max(1, -(-top // 8))
    return tuple(range(0 if unit != "steps" else 1, top + 1, step))[:10]


def _takes(config: Any, field: str, value: int) -> bool:
    try:
        replace(config, **{field: value})
    except tc.ConfigError:
        return False
    return True


def render_policy_sweep(kind: str, t: tc.Transcript, config: Any, mode: str, counter: str, files: bool,
                        digest: str) -> None:
    knobs = knobs_for(kind)
    if not knobs:
        st.info("This policy has no number to sweep: the Replay and Compare views show what it does.")
        return
    if len(knobs) < 2:
        st.info("This policy has one main number; the chart below sweeps it.")
    sizes = _sizes(t, counter)
    kx = knobs[-1]
    ky = knobs[0] if len(knobs) > 1 else None
    xs = _axis(kx.unit, sizes[kx.unit], getattr(config, kx.field))
    if kx.unit == "steps":
        xs = (1, 2, 3, 5, 8, 10)
    ys = _axis(ky.unit, sizes[ky.unit], getattr(config, ky.field)) if ky else (getattr(config, knobs[0].field),)
    fy = ky.field if ky else knobs[0].field
    # only values the policy takes (a trigger of 0 characters is refused by its own checks)
    xs = tuple(v for v in xs if _takes(config, kx.field, v))
    ys = tuple(v for v in ys if _takes(config, fy, v))
    if len(t.messages) > 3000 and mode == "replay" and not st.session_state.get("p_sweep_go"):
        st.info(f"A replay sweep runs {len(xs) * len(ys)} replays of {len(t.messages):,} messages.")
        st.button("Compute the replay sweep", key="p_sweep_button",
                  on_click=lambda: st.session_state.__setitem__("p_sweep_go", True))
        return
    others = tuple(sorted((k, repr(v)) for k, v in report.policy_options(config).items() if k not in (kx.field, fy)))
    key = (digest, t.id, kind, others, mode, counter, files, xs, ys)
    sw = _sweep(key, t, config, kx.field, xs, fy, ys, mode, counter, files)
    current = (int(getattr(config, fy)), int(getattr(config, kx.field)))
    titles = (kx.label, ky.label if ky else knobs[0].label)
    cols = st.columns(2)
    with cols[0]:
        st.plotly_chart(charts.heatmap_figure(sw, "tokens_saved", current, axes=titles), key="p_sweep_saved",
                        config={"displaylogo": False})
    with cols[1]:
        what = "cache_breaks" if sw.cache_breaks is not None else "cleared"
        st.plotly_chart(charts.heatmap_figure(sw, what, current, axes=titles), key="p_sweep_second",
                        config={"displaylogo": False})
    if sw.needed is not None:
        st.plotly_chart(charts.heatmap_figure(sw, "needed", current, axes=titles), key="p_sweep_needed",
                        config={"displaylogo": False})
    st.caption(f"Each cell runs the policy with those two numbers; the star is your setting. {policy_help(kind)}")


# ------------------------------------------------------------------ compare


def _suggested(t: tc.Transcript, counter: str, current: str) -> list[str]:
    """Five policies scaled to this conversation, so each of them does something (the
    verdict's own scaled settings, then the masking presets)."""
    from toolclear.runs.verdict import scaled

    out = [current]
    for spec in (*scaled(t.messages, counter), "swe-agent", "openhands"):
        if len(out) < 5 and spec.split(":")[0] != current.split(":")[0]:
            out.append(spec)
    return out


def render_compare(t: tc.Transcript, counter: str, current: str, pricing: tc.Pricing | None = None,
                   calibrate: bool = False) -> None:
    """Up to five policies on this conversation, call by call."""
    if "compare_specs" not in st.session_state or st.session_state.get("_compare_for") != (t.id, len(t.messages)):
        st.session_state["compare_specs"] = "\n".join(_suggested(t, counter, current))
        st.session_state["_compare_for"] = (t.id, len(t.messages))
    st.text_area("Policies to compare (one per line, at most five)", key="compare_specs", height=140,
                 help="NAME[:option=value,...], as `toolclear compare --policy` takes them: eino, eino-reduction, "
                      "anthropic, langchain, masking, openhands, swe-agent; options by the policy's own names "
                      "or threshold / keep / exclude.")
    st.button("Add the sidebar's policy", key="compare_add", on_click=_add_spec, args=(current,))
    lines = [ln.strip() for ln in st.session_state.compare_specs.splitlines() if ln.strip()]
    if len(lines) > 5:
        st.error(f"{len(lines)} policies: the Compare view takes at most five; remove {len(lines) - 5}.")
        return
    configs = []
    for n, spec in enumerate(lines, start=1):
        try:
            cfg = lab.parse_policy(spec)
        except tc.ConfigError as exc:
            st.error(md(f"line {n}: {exc}"))
            return
        configs.append(cfg)
    if not configs:
        st.info("Add a policy, one per line.")
        return
    marks = tuple(k for k, _ in t.marks)
    cmp = _compare_cached((t.id, len(t.messages), tuple(lines), counter, pricing, calibrate, marks), t,
                          tuple(configs), counter, pricing, calibrate, marks)
    table = cmp.table
    st.dataframe(table.drop(columns=["kind"]), hide_index=True, key="compare_table",
                 column_config=compare_columns(table.columns))
    if pricing is not None:
        st.caption(f"Dollars at {md(pricing.name)} prices with the prompt cache"
                   + (", calibrated on the recorded usage" if calibrate else "")
                   + ": the same pricing and calibration as the headline above.")
    st.plotly_chart(charts.compare_figure(cmp), key="compare_chart", config={"displaylogo": False})
    st.caption("Which policy clears each tool result, and from which model call on (empty: never):")
    st.plotly_chart(charts.strip_figure(cmp, t.messages), key="compare_strip", config={"displaylogo": False})
    st.caption(f"Tokens counted with {md(counter)} for every policy, so the rows compare; each policy's own trigger "
               "uses its own counter where it has one.")


def _add_spec(spec: str) -> None:
    lines = [ln for ln in st.session_state.get("compare_specs", "").splitlines() if ln.strip()]
    if spec not in lines:
        lines.append(spec)
    st.session_state["compare_specs"] = "\n".join(lines)


COUNT_COLUMNS = ("model_calls", "messages", "results_cleared", "cache_breaks", "needed_results", "lost_references")


def compare_columns(columns: Any) -> dict[str, Any]:
    """Every column of a comparison with its unit once: dollars as dollars, counts as
    counts, tokens with thousands separators ("(tokens)" only where the name does not
    already say it); text columns as they are."""
    out: dict[str, Any] = {}
    for c in columns:
        name = str(c)
        title = name.replace("_", " ")
        if "dollars" in name:
            out[name] = st.column_config.NumberColumn(title + " ($)", format="dollar")
        elif name == "saved_percent":
            out[name] = st.column_config.NumberColumn("saved %", format="%.1f")
        elif name in COUNT_COLUMNS:
            out[name] = st.column_config.NumberColumn(title, format="localized")
        elif "tokens" in name:
            out[name] = st.column_config.NumberColumn(title, format="localized")
        elif name.startswith("peak_context"):
            out[name] = st.column_config.NumberColumn(title + " (tokens)", format="localized")
        else:  # names, labels, notes: text, no unit
            out[name] = st.column_config.TextColumn(title)
    return out


@st.cache_resource(max_entries=8, show_spinner="Comparing…")
def _compare_cached(key: tuple[Any, ...], _t: tc.Transcript, _configs: tuple[Any, ...], counter: str,
                    _pricing: Any, calibrate: bool, marks: tuple[int, ...]) -> Any:
    return tc.compare(_t.messages, _configs, counter=counter, pricing=_pricing, calibrate=calibrate,
                      compactions=marks, calibration=sent_calibration(_t, counter))


# ------------------------------------------------------------------ export


def render_policy_export(t: tc.Transcript, result: tc.Result, config: Any, mode: schema.Mode) -> None:
    from pathlib import Path

    stem = Path(t.source).name or "transcript"
    cols = st.columns(2)
    try:
        data = tc.dump(t, result.messages) if len(t.messages) == len(result.messages) else None
        cols[0].download_button(f"Reduced transcript ({written_as(t.format)})", data or b"",
                                file_name=f"reduced-{stem}",
                                key="p_dl_own", disabled=data is None)
    except tc.TranscriptError as exc:
        cols[0].caption(md(str(exc)))
    cols[1].download_button("eino JSON", exports.eino_json(result.messages), file_name=f"reduced-{stem}.eino.json",
                            key="p_dl_eino")
    rows = report.message_rows(result, t)
    st.download_button("Report (CSV)", exports.report_csv(rows), file_name=f"{stem}.report.csv", key="p_dl_csv")
    report_button(t, "p_dl_html")
    for title, lang, code in snippets.policy_snippets(config, path=t.source or stem, mode=mode,
                                                      conversation=t.id if t.id != "0" else None):
        st.caption(title)
        st.code(code, language=lang)
    _ = pd  # pandas backs st.dataframe
