"""The first thing the inspector shows for a run: the dollar verdict of the policy's
replay with the prompt cache, from ``toolclear.verdict`` (the function the CLI, the
report and ``advise`` use), and the cheapest setting tried. The history saving comes
after it."""

from __future__ import annotations

from typing import Any

import streamlit as st

import toolclear as tc
from toolclear.inspector.widgets import md
from toolclear.runs.report import usd
from toolclear.runs.verdict import Verdict, verdict

__all__ = ["render_verdict", "report_button", "verdict_label"]


def _use(spec: str) -> None:
    """Put the cheapest setting in the Compare view's list, first."""
    lines = [ln for ln in st.session_state.get("compare_specs", "").splitlines() if ln.strip() and ln != spec]
    st.session_state["compare_specs"] = "\n".join([spec, *lines][:5])


def render_verdict(t: tc.Transcript, config: Any, counter: str, pricing: tc.Pricing | None,
                   calibrate: bool, offloading: Any = None) -> Verdict | None:
    """The verdict, headline first; None when there is nothing to price."""
    if pricing is None:
        st.info("Pick a **Pricing** in the sidebar to see the verdict: what this policy saves or costs in dollars "
                "once the prompt cache is counted.")
        return None
    if not any(m.role == "assistant" for m in t.messages):
        st.info("This conversation has no model call: there is nothing to price.")
        return None
    v = verdict(t, config, pricing=pricing, calibrate=calibrate, counter=counter, offloading=offloading)
    st.session_state["_verdict"] = (t, v)  # what the Export view's HTML report holds
    r = v.row
    saved = v.dollars_saved
    # two rows of three: dollar figures stay whole on a laptop screen (1,100 px)
    top, bottom = st.columns(3), st.columns(3)
    top[0].metric(verdict_label(saved), usd(abs(saved)),
                  help="The policy before every model call, each call priced with the provider's prompt cache "
                       f"at {v.pricing} prices" + (", calibrated on the recorded usage" if calibrate else "")
                       + ", against the same run with no policy.")
    top[1].metric("With the policy", usd(v.dollars))
    top[2].metric("Without it", usd(v.dollars_without_policy))
    bottom[0].metric("Cache breaks", f"{int(r['cache_breaks']):,}",
                     help="Calls at which the policy changed something an earlier call had sent: the calls after "
                          "it write the cached prefix again.")
    bottom[1].metric("Needed later", f"{int(r['needed_results']):,} of {int(r['results_cleared']):,}",
                     help="Of the messages the policy changed at some call, how many the agent's later replies "
                          "used (by names only those messages held).")
    bottom[2].metric("Net of re-fetching", ("+" if r["net_dollars_saved"] >= 0 else "−")
                     + usd(abs(float(r["net_dollars_saved"]))),
                     help="The saving less what re-reading each needed result once costs.")
    (st.success if v.pays else st.warning)(md(v.headline))
    if v.best is not None and v.best["spec"] != v.policy:
        st.button(f"Compare with the cheapest: {v.best['spec']}", key="verdict_use_best", on_click=_use,
                  args=(v.best["spec"],), help="Puts it first in the Compare view.")
    for note in v.notes:
        st.caption(md(f"Pricing: {note}."))
    return v


def report_button(t: tc.Transcript, key: str) -> None:
    """The HTML report of the verdict on screen: one self-contained file, charts included."""
    from pathlib import Path

    from toolclear.inspector.html_report import html_report

    shown = st.session_state.get("_verdict")
    if shown is None or shown[0] is not t:
        st.caption("The HTML report holds the verdict: pick a pricing to have one.")
        return
    stem = Path(t.source).stem or "transcript"
    st.download_button("Report (HTML, works offline)", lambda: html_report(t, shown[1]),
                       file_name=f"toolclear-report-{stem}.html", mime="text/html", key=key, on_click="ignore",
                       help="The verdict, the context per call, every setting tried and what was lost: one file "
                            "to attach to an issue or a pull request.")


def verdict_label(saved: float) -> str:
    """The verdict metric's label: the sign in words, so its value is a plain figure."""
    return "Verdict: saves" if saved >= 0 else "Verdict: costs more by"
