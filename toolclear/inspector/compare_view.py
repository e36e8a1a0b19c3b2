"""The Compare view: up to five policies on the same run, call by call, with the same
counter and pricing as the verdict (``toolclear.compare``, the function the CLI and the
corpus call); its column formats serve the Corpus page too."""

from __future__ import annotations

from typing import Any

import streamlit as st

import toolclear as tc
from toolclear.inspector import charts
from toolclear.inspector.controls import sent_calibration
from toolclear.inspector.shown import Shown
from toolclear.inspector.widgets import md
from toolclear.policies import preset_names
from toolclear.runs import lab
from toolclear.runs.verdict import suggested

__all__ = ["compare_columns", "render_compare"]


def render_compare(view: Shown) -> None:
    """Up to five policies on this conversation, call by call."""
    t, counter, pricing, calibrate = view.t, view.counter, view.pricing, view.calibrate
    current = lab.policy_spec(view.config)
    if "compare_specs" not in st.session_state or st.session_state.get("_compare_for") != (t.id, len(t.messages)):
        st.session_state["compare_specs"] = "\n".join(suggested(t.messages, counter, current))
        st.session_state["_compare_for"] = (t.id, len(t.messages))
    st.text_area("Policies to compare (one per line, at most five)", key="compare_specs", height=140,
                 help="NAME[:option=value,...], as `toolclear compare --policy` takes them: "
                      + ", ".join(preset_names()) + "; options by the policy's own names or threshold / keep / "
                      "exclude.")
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
    marks = view.marks
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
