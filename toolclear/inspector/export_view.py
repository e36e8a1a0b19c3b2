"""The Export view: the reduced transcript in its own format and as eino JSON, the
report (CSV, JSON, HTML), the files the policy saved, and the settings as code in the
policy's own framework, toolclear's Python and CLI, and live in each agent framework."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import toolclear as tc
from toolclear.formats import written_as
from toolclear.inspector import exports
from toolclear.inspector.shown import Shown
from toolclear.inspector.verdict_view import report_button
from toolclear.inspector.widgets import md
from toolclear.policies import snippets
from toolclear.runs import report

__all__ = ["render_export"]


def render_export(view: Shown) -> None:
    t, result = view.t, view.result
    stem = Path(t.source).name or "transcript"
    st.subheader("Downloads")
    saved = any(r is not None and r.offloaded for r in result.offloads) and view.backend is not None
    cols = st.columns(5 if saved else 4)
    try:
        reduced = tc.dump(t, result.messages) if len(t.messages) == len(result.messages) else None
    except tc.TranscriptError as exc:
        reduced = None
        st.caption(md(str(exc)))
    cols[0].download_button(f"Reduced ({written_as(t.format)})", reduced or b"", file_name=f"reduced-{stem}",
                            key="dl_original", disabled=reduced is None, on_click="ignore")
    cols[1].download_button("Reduced (eino JSON)", lambda: exports.eino_json(result.messages),
                            file_name=f"reduced-{Path(stem).stem}.eino.json", mime="application/json",
                            key="dl_eino", on_click="ignore")
    cols[2].download_button("Report (CSV)", lambda: exports.report_csv(report.message_rows(result, t)),
                            file_name=f"report-{Path(stem).stem}.csv", mime="text/csv", key="dl_csv",
                            on_click="ignore")
    cols[3].download_button("Report (JSON)",
                            lambda: exports.report_json(report.report_dict(result, t, view.offloading)),
                            file_name=f"report-{Path(stem).stem}.json", mime="application/json", key="dl_json",
                            on_click="ignore")
    if saved:
        cols[4].download_button(
            "Offloaded files (zip)",
            lambda: exports.offloaded_zip(result.offloads, view.backend, (f"reduced-{stem}", reduced or b"")),
            file_name=f"offloaded-{Path(stem).stem}.zip", mime="application/zip", key="dl_zip", on_click="ignore")
    report_button(t, "dl_html")
    if reduced is None:
        st.caption("The policy changed how many messages the run holds (a compaction), so the reduced file is not "
                   "written in the file's own format: the eino JSON holds what the model is sent.")
    if view.conversations > 1:
        st.caption(f"The reduced file keeps the other {view.conversations - 1:,} conversation(s) of the original "
                   "file unchanged.")
    st.subheader("These settings as code")
    found = snippets.policy_snippets(view.config, path=stem, mode=view.mode, offloading=view.offloading,
                                     conversation=t.id if view.conversations > 1 else None)
    tabs = st.tabs([_tab_title(title) for title, _, _ in found])
    for tab, (title, lang, code) in zip(tabs, found):
        with tab:
            st.caption(title)
            st.code(code, language=lang)
    if view.offloading is not None:
        st.caption("The live adapters run the clearing policy; offloading is not part of them.")


def _tab_title(title: str) -> str:
    """A tab's short name: the snippet's title up to its first parenthesis."""
    return title.split(" (")[0].replace("Live in a ", "Live: ").replace("Live in an ", "Live: ")
