"""The inspector's money: a pricing picker in the sidebar, dollars in the headline, the
cost of each model call in the Replay view, and the model against what the log recorded."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import streamlit as st

import toolclear as tc
from toolclear.cost.billing import DEFAULT_PRICING, CacheKind, pricing_of
from toolclear.inspector import charts
from toolclear.inspector.widgets import md
from toolclear.runs.report import usd

__all__ = ["NO_PRICING", "render_cost_view", "render_pricing"]

NO_PRICING = "(no pricing)"


def _same_prices(a: tc.Pricing, b: tc.Pricing) -> bool:
    """The same numbers and cache, whatever their names and sources."""
    keep = ("name", "model", "as_of", "source", "aliases")
    return replace(a, **{k: getattr(b, k) for k in keep}) == b


def render_pricing(t: tc.Transcript) -> tuple[tc.Pricing | None, bool]:
    """The sidebar's pricing picker: the log's model's prices when it names a known
    model, or a preset, their numbers editable, the per-call overhead; returns the
    pricing and whether to calibrate on the recorded usage."""
    st.sidebar.header("Money")
    # the log's model's prices, or (a note saying so) the stated default when no price list covers it
    priced, note = pricing_of(t.messages, "auto")
    found = None if note else priced
    own = None  # the log's model's prices, when they are not a preset's
    if found is not None and not (found.name in tc.PRICING and _same_prices(tc.PRICING[found.name], found)):
        own = f"{found.name} (the log's model)"
    choices = [NO_PRICING, *([own] if own else []), *tc.PRICING]
    key = ("pricing_for", t.source, t.id)
    has_usage = any(m.usage is not None for m in t.messages)
    if st.session_state.get("_pricing_for") != key or st.session_state.get("pricing") not in choices:
        st.session_state["_pricing_for"] = key
        st.session_state["pr_calibrate"] = has_usage  # each run calibrates by default where it can
        # a log that names no model toolclear can price gets the CLI's stated default, said below
        st.session_state["pricing"] = own or (found.name if found is not None else DEFAULT_PRICING)
    st.sidebar.selectbox("Pricing", choices, key="pricing",
                         help="Prices each model call with a prompt cache (Replay mode). The log's model picks "
                              "the prices when it names a known one (from genai-prices, else the presets).")
    if note and st.session_state.pricing == DEFAULT_PRICING:
        st.sidebar.caption(md(note[0].upper() + note[1:] + ". Pick the preset billed like your model, if another."))
    if st.session_state.pricing == NO_PRICING:
        return None, False
    base = found if own is not None and st.session_state.pricing == own and found is not None \
        else tc.PRICING[st.session_state.pricing]
    st.sidebar.caption(md(f"{base.name}: {'as of ' + base.as_of + ', ' if base.as_of else ''}from {base.source}"
                          + (f"; past {base.long_context_from:,} input tokens a call pays the long-context "
                             "prices" if base.long is not None else "")))
    with st.sidebar.expander("Prices and cache"):
        cols = st.columns(2)
        inp = cols[0].number_input("Input $/M", 0.0, None, float(base.input), key=f"pr_in_{base.name}")
        out = cols[1].number_input("Output $/M", 0.0, None, float(base.output), key=f"pr_out_{base.name}")
        wr = cols[0].number_input("Cache write $/M", 0.0, None, float(base.cache_write), key=f"pr_w_{base.name}")
        rd = cols[1].number_input("Cache read $/M", 0.0, None, float(base.cache_read), key=f"pr_r_{base.name}")
        kinds = ["anthropic", "openai", "gemini", "none"]
        kind = st.selectbox("Cache", kinds, index=kinds.index(base.cache), key=f"pr_kind_{base.name}")
        ttl = st.number_input("Cache lifetime (s)", 0, None, base.ttl_seconds, 60, key=f"pr_ttl_{base.name}")
        overhead = st.number_input("Per-call overhead (tokens)", 0, None, base.overhead_tokens, 1000,
                                   key=f"pr_oh_{base.name}",
                                   help="What every call sends that the transcript does not hold: the system "
                                        "prompt and the tool schemas.")
    calibrate = st.sidebar.toggle("Calibrate on the recorded usage", key="pr_calibrate",
                                  disabled=not has_usage,
                                  help="Fits the overhead and a tokenizer scale on at most the first 10 % of "
                                       "calls' recorded usage." if has_usage else "The log recorded no usage.")
    pricing = replace(base, input=float(inp), output=float(out), cache_write=float(wr), cache_read=float(rd),
                      cache=cast(CacheKind, kind), ttl_seconds=int(ttl), overhead_tokens=int(overhead))
    return pricing, bool(calibrate and has_usage)


def render_cost_view(c: Any, t: tc.Transcript) -> None:
    """Per call: dollars stacked by kind, breaks marked, the cumulative cost with and
    without the policy; and, where the log recorded usage, the model against it."""
    if c is None:
        return
    st.plotly_chart(charts.cost_figure(c), key="cost_chart", config={"displaylogo": False})
    st.caption("Each bar is one model call's dollars: uncached input, cache writes, cache reads and output. A "
               "cross marks a call that broke the cache (hover: what the break cost); the lines add up the run "
               "with and without the policy.")
    recorded = tc.recorded_cost(t.messages, c.pricing)
    if not recorded.calls:
        return
    sim = {r.call_index: r for r in c.calls_without_policy}
    rows = []
    for name, rec_v, sim_v in (
        ("cache reads (tokens)", recorded.totals()["cache_read_tokens"],
         sum(sim[r.call_index].cache_read_tokens for r in recorded.calls if r.call_index in sim)),
        ("cache writes (tokens)", recorded.totals()["cache_write_tokens"],
         sum(sim[r.call_index].cache_write_tokens for r in recorded.calls if r.call_index in sim)),
        ("uncached input (tokens)", recorded.totals()["uncached_tokens"],
         sum(sim[r.call_index].uncached_tokens for r in recorded.calls if r.call_index in sim)),
        ("input dollars", recorded.input_dollars,
         sum(sim[r.call_index].input_dollars for r in recorded.calls if r.call_index in sim)),
    ):
        err = f"{(sim_v - rec_v) / rec_v * 100:+.1f} %" if rec_v else "—"
        shown = usd if "dollars" in name else (lambda v: f"{int(v):,}")
        rows.append({"": name, "recorded": shown(rec_v), "simulated (no policy)": shown(sim_v), "error": err})
    st.subheader("Recorded against simulated", anchor=False)
    import pandas as pd  # here: the first screen has no table, and pandas takes ~0.45 s to import

    st.dataframe(pd.DataFrame(rows), hide_index=True, key="recorded_table")
    st.plotly_chart(charts.recorded_figure(recorded, c), key="recorded_chart", config={"displaylogo": False})
    st.caption(f"The log recorded the usage of {len(recorded.calls):,} call(s); the model prices the run without "
               "the policy, as the log ran it." + (f" Calibration: {c.assumptions[0]}." if c.calibrated_on else ""))
