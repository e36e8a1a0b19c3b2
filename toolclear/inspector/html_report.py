"""One self-contained HTML file of a verdict: what a user attaches to an issue or a
pull request. It works offline (plotly.js is inlined once) and holds the verdict, the
context of every model call, the comparison table and the results the agent needed
later. Every text from the transcript is escaped: it is shown as text, never as HTML.
"""

from __future__ import annotations

import html
from typing import Any

from ..model import Transcript
from ..runs.report import usd
from ..runs.verdict import Verdict
from . import charts

__all__ = ["html_report"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1180px;margin:2em auto;
padding:0 1em;color:#1f2328}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:2em}
.verdict{font-size:1.1em;padding:.8em 1em;border-radius:6px;border-left:6px solid}
.pays{background:#eefbf0;border-color:#2da44e} .costs{background:#fff4f2;border-color:#cf222e}
table{border-collapse:collapse;font-size:.85em;width:100%} td,th{border-bottom:1px solid #d0d7de;padding:.3em .5em;
text-align:right;white-space:nowrap} td:first-child,th:first-child{text-align:left}
.muted{color:#59636e;font-size:.85em}
"""

_COLUMNS = (("spec", "setting (--policy)", str), ("dollars", "dollars", usd), ("dollars_without_policy", "without", usd),
            ("net_dollars_saved", "net saved", usd), ("cache_breaks", "cache breaks", "{:,}".format),
            ("results_cleared", "changed", "{:,}".format), ("needed_results", "needed later", "{:,}".format),
            ("peak_context", "peak context (tokens)", "{:,}".format),
            ("tokens_sent", "tokens sent", "{:,}".format))


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def html_report(t: Transcript, v: Verdict) -> bytes:
    """The report of ``v`` (``toolclear.verdict``) on transcript ``t`` as HTML bytes."""
    from ..runs.losses import losses

    assert v.comparison is not None
    run = v.comparison.results[0]
    lost = losses(run)
    replay_fig = charts.replay_figure(run, marks=t.marks, lost=lost)
    rows = []
    for r in v.rows:
        cells = "".join(f"<td>{_e(fmt(r[key]))}</td>" for key, _, fmt in _COLUMNS)
        rows.append(f"<tr>{cells}</tr>")
    head = "".join(f"<th>{_e(title)}</th>" for _, title, _ in _COLUMNS)
    needed = []
    for ref in lost.references[:50]:
        needed.append(f"<tr><td>message {ref.message_index}</td><td>call {ref.call_index}</td>"
                      f"<td style='text-align:left'>{_e(', '.join(ref.terms[:8]))}</td></tr>")
    notes = "".join(f"<li>{_e(n)}</li>" for n in (*v.notes, *run.notes))
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>toolclear report: {_e(t.source or t.id)}</title><style>{_STYLE}</style></head><body>",
        "<h1>toolclear report</h1>",
        f"<p class='muted'>{_e(t.source)} · format {_e(t.format)} · conversation {_e(t.id)} · "
        f"{len(t.messages):,} messages · priced at {_e(v.pricing)} with the prompt cache"
        + (" · " + _e(f"{len(t.marks)} compaction(s) in the log") if t.marks else "") + "</p>",
        f"<p class='verdict {'pays' if v.pays else 'costs'}'>{_e(v.headline)}</p>",
        "<h2>Context per model call</h2>",
        replay_fig.to_html(full_html=False, include_plotlyjs=True, config={"displaylogo": False}),
        "<h2>Every setting tried</h2>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
        f"<h2>What {_e(v.policy)} lost</h2>",
        (f"<p>{_e(lost.needed_text())} of the {len(run.cleared_indices):,} messages it changed were needed later "
         f"({len(lost.references):,} lost reference(s); re-fetching each once: {lost.refetch_tokens:,} tokens).</p>"
         if lost.judged else "<p>What it lost cannot be judged: the log holds no text of the agent's replies "
         "(redacted, or not captured).</p>"),
        (f"<table><thead><tr><th>changed</th><th>needed at</th><th style='text-align:left'>terms the reply used"
         f"</th></tr></thead><tbody>{''.join(needed)}</tbody></table>" if needed else ""),
        f"<h2>Notes</h2><ul class='muted'>{notes}</ul>" if notes else "",
        "<p class='muted'>Made by toolclear. Dollars: every model call replayed and priced with the provider's "
        "prompt cache, calibrated on the log's recorded usage where it has some.</p>",
        "</body></html>",
    ]
    return "\n".join(parts).encode("utf-8")
