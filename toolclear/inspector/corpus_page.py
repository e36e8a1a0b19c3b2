"""The inspector's Corpus page: many runs at once, a grid of settings, and which to pick.

Uploaded files (or one zip / tar archive) are written to a private temporary folder
under names toolclear chooses, then swept by ``toolclear.sweep_corpus`` on every core;
the archive's members are read one at a time.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

import toolclear as tc
from toolclear.corpus.sweeps import DEFAULT_LOSS_BUDGET
from toolclear.inspector import charts, exports
from toolclear.inspector.compare_view import compare_columns
from toolclear.inspector.controls import knobs_for, policy_choices, widget_key
from toolclear.inspector.widgets import md, safe, store
from toolclear.policies import preset_named, snippets
from toolclear.runs import lab
from toolclear.runs.numbers import spread
from toolclear.runs.report import usd

__all__ = ["render_corpus_page"]

UPLOAD_LIMIT_MB = 200
AUTO = "each run's own model"


MAX_GRID = 20
"""At most this many values per axis (400 settings): a longer list is refused, not run."""


def _store(files: list[Any]) -> tuple[Path, dict[str, str]]:
    """The uploads on disk, in a folder of their own (names made safe, never the user's
    path), and each stored file's name -> the name it was uploaded under. The folder of
    the previous upload is deleted: one folder per session at most."""
    import shutil

    old = st.session_state.pop("_corpus_root", None)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _purge_stale()
    root = Path(tempfile.mkdtemp(prefix="toolclear-corpus-"))
    st.session_state["_corpus_root"] = str(root)
    names = {}
    for k, f in enumerate(files):
        name = "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(f.name).name) or "file"
        stored = f"{k:04d}-{name}"
        (root / stored).write_bytes(f.getvalue())
        names[stored] = safe(Path(f.name).name) or name
    return root, names


STALE_SECONDS = 24 * 3600
"""An upload folder untouched this long belongs to a session that has ended."""


def _purge_stale() -> None:
    """Remove the upload folders of sessions that ended (a session keeps one folder, and
    replaces it with each upload; one that ended cannot remove its own)."""
    import shutil
    import time

    now = time.time()
    for folder in Path(tempfile.gettempdir()).glob("toolclear-corpus-*"):
        try:
            if folder.is_dir() and not folder.is_symlink() and now - folder.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def _relabel(corpus: tc.Corpus, root: Path, names: dict[str, str]) -> tc.Corpus:
    """Labels in the names the user uploaded (``notes.jsonl``, ``runs.zip!a/run.json``),
    not the temporary folder's (``toolclear-corpus-x1/0003-notes.jsonl``)."""
    from dataclasses import replace as _replace

    from toolclear.corpus.sweeps import _unique_labels

    def shown(label: str) -> str:
        rest = label.split("/", 1)[1] if label.startswith(root.name + "/") else label
        head, sep, tail = rest.partition("!")
        return names.get(head, head) + sep + tail

    files = _unique_labels([_replace(f, label=shown(f.label)) for f in corpus.files])
    errors = tuple((shown(Path(a).name if a.startswith(str(root)) else a), e) for a, e in corpus.errors)
    return _replace(corpus, files=tuple(files), errors=errors)


def _values(text: str, what: str) -> list[int]:
    """'A:B:N' or 'a, b, c' as whole numbers; a one-line error otherwise."""
    text = text.strip()
    try:
        if ":" in text:
            a, b, n = (int(p.replace(",", "").replace("_", "")) for p in text.split(":"))
            if not 1 <= n <= 20 or a > b:
                raise ValueError
            return spread(a, b, n)
        values = sorted({int(p.replace("_", "")) for p in text.replace(",", " ").split()[:MAX_GRID + 1]})
        if len(values) > MAX_GRID or any(v < 0 for v in values):
            raise ValueError
        return values
    except ValueError:
        raise tc.ConfigError(f"{what}: expected A:B:N (A <= B, N up to {MAX_GRID}) or up to {MAX_GRID} whole numbers "
                             f">= 0, got {text[:80]!r}") from None


@st.cache_resource(max_entries=4, show_spinner=False)
def _run(key: tuple[Any, ...], _corpus: tc.Corpus, _configs: tuple[Any, ...], pricing: Any, mode: str,
         _progress: Any, calibrate: bool = True) -> tc.CorpusSweep:
    return tc.sweep_corpus(_corpus, _configs, pricing=pricing, mode=mode,  # type: ignore[arg-type]
                           workers=min(os.cpu_count() or 1, 8), progress=_progress, calibrate=calibrate)


def render_corpus_page() -> None:
    st.caption("Tune on all your runs: every setting of a grid on every run of a corpus, and the one to pick.")
    files = st.file_uploader("Transcripts, or one zip / tar archive", accept_multiple_files=True,
                             key="corpus_files", max_upload_size=UPLOAD_LIMIT_MB,
                             help=f"Up to {UPLOAD_LIMIT_MB} MB each; an archive's members are read one at a time.")
    cols = st.columns(3)
    choices = policy_choices()
    label = cols[0].selectbox("Policy", list(choices), key="corpus_policy")
    th = cols[1].text_input("Thresholds (A:B:N)", "5000:40000:4", key="corpus_thresholds",
                            help="The policy's trigger: eino's threshold, Anthropic's and LangChain's trigger.")
    kp = cols[2].text_input("Keeps (A:B:N)", "10000:80000:4", key="corpus_keeps",
                            help="What the policy keeps: eino's budget, tool uses, results, rounds.")
    cols = st.columns(3)
    replay = cols[0].toggle("Replay every run", value=True, key="corpus_replay")
    presets = [AUTO, "(no pricing)", *tc.PRICING]
    pricing_name = cols[1].selectbox("Pricing", presets, index=0, key="corpus_pricing", disabled=not replay,
                                     help="Each run at the prices of the model its log names, or one preset for "
                                          "every run.")
    calibrate = cols[1].toggle("Calibrate on the recorded usage", value=True, key="corpus_calibrate",
                               disabled=not replay, help="Where a log recorded usage, fit the per-call overhead "
                               "and tokenizer scale on its first calls, as the One run page does.")
    window = cols[2].number_input("Model context window (tokens)", 0, None, 200_000, 10_000, key="corpus_window")
    budget = cols[2].number_input("Loss budget (needed results per 100 calls)", 0.0, None, DEFAULT_LOSS_BUDGET, 1.0,
                                  key="corpus_loss_budget", help="Settings that clear more results the agent used "
                                  "later than this, per 100 model calls over the corpus, are not recommended.")
    if not files:
        st.info("Upload several transcripts, or one archive of them.")
        return
    try:
        spec = preset_named(choices[label])[0]
        base = spec.sweep_base(lab.parse_policy(choices[label]))
        known = {f.name for f in fields(base)}
        axes = {a: v for a, v in (("threshold", _values(th, "thresholds")), ("keep", _values(kp, "keeps")))
                if spec.aliases.get(a, a) in known}
        if len(axes) == 1:  # one axis (observation masking's window): a short list of it
            axes = {a: v[:10] for a, v in axes.items()}
        configs = tc.grid(base, **axes)
    except tc.ConfigError as exc:
        st.error(md(str(exc)))
        return
    pricing: Any = None
    if replay and pricing_name == AUTO:
        pricing = "auto"
    elif replay and pricing_name != "(no pricing)":
        pricing = tc.PRICING[pricing_name]
    if not st.button(f"Run {len(configs)} setting(s) on every run", key="corpus_go", type="primary") \
            and "corpus_result" not in st.session_state:
        return
    key = (tuple(f.file_id for f in files), label, th, kp, replay, pricing_name, bool(calibrate))
    if st.session_state.get("corpus_key") != key:
        root, names = _store(files)
        corpus = _relabel(tc.load_corpus(root), root, names)
        bar = st.progress(0.0, text="Sweeping…")

        def progress(done: int, total: int) -> None:
            bar.progress(done / max(total, 1), text=f"{done:,} of {total:,} files")

        sweep = _run(key, corpus, tuple(configs), pricing, "replay" if replay else "single pass", progress,
                     bool(calibrate and replay))
        bar.empty()
        st.session_state["corpus_key"] = key
        st.session_state["corpus_result"] = sweep
        st.session_state["corpus_obj"] = corpus
    sweep = st.session_state["corpus_result"]
    _show(sweep, int(window), configs, float(budget))


def _open(file_label: str, conversation: str, config: Any) -> None:
    """Show one run of the corpus on the single-run page, with the picked settings."""
    corpus = st.session_state.get("corpus_obj")
    f = next((x for x in corpus.files if x.label == file_label), None) if corpus is not None else None
    if f is None:
        return
    st.session_state["corpus_open"] = (Path(f.label).name, f.read(), conversation)
    st.session_state["conversation"] = conversation
    st.session_state["_goto"] = "One run"
    kind = lab.policy_name(config)
    choices = policy_choices()
    spec = lab.policy_spec(config).split(":")[0]
    label = next(lab_ for lab_, k in choices.items() if k in (spec, kind))
    st.session_state["policy"] = label
    for knob in knobs_for(choices[label]):
        store(widget_key(choices[label], knob.field), int(getattr(config, knob.field)))


def _show(sweep: tc.CorpusSweep, window: int, configs: list[Any], budget: float = DEFAULT_LOSS_BUDGET) -> None:
    for name, error in sweep.errors:
        st.warning(md(f"Skipped {name}: {error}"))
    table = sweep.table.fillna({"error": "", "pricing": ""})  # blank, not "None", where nothing is to say
    if table.empty or (table["error"] != "").all():
        st.error("Nothing could be read: no run to sweep.")
        return
    failed = sorted(set(table.loc[table["error"] != "", "run"]))
    runs = table["run"].nunique() - len(failed)
    rec = sweep.recommend(max_context=window or None, loss_budget=budget)
    columns = compare_columns(table.columns)
    cols = st.columns(4)
    cols[0].metric("Runs", f"{runs:,}", help="Runs read and replayed: what the pick is made across.")
    cols[3].metric("Failed", f"{len(failed) + len(sweep.errors):,}",
                   help="Files that could not be read and runs that failed; each is named above the table.")
    cols[1].metric("Settings", f"{len(sweep.labels):,}")
    if failed:
        first = table[table["error"] != ""].drop_duplicates("run")
        st.warning(md(f"{len(failed):,} run(s) failed and are left out of the pick: " + "; ".join(
            f"{r}: {e}" for r, e in zip(first["run"].head(10), first["error"].head(10)))
            + (f"; and {len(failed) - 10:,} more" if len(failed) > 10 else "")))
    noted = table[table["note"].fillna("") != ""].drop_duplicates("run")
    if len(noted):
        st.info(md(f"{len(noted):,} run(s) priced at a stated default: " + "; ".join(
            f"{r}: {n}" for r, n in zip(noted["run"].head(5), noted["note"].head(5)))
            + (f"; and {len(noted) - 5:,} more" if len(noted) > 5 else "")))
    if rec.config is None:
        st.warning(md(rec.summary))
        st.plotly_chart(charts.corpus_heatmap(sweep, ""), key="corpus_heat", config={"displaylogo": False})
        st.dataframe(table, hide_index=True, key="corpus_runs", column_config=columns)
    else:
        st.success(md(rec.summary))
        best = table[(table["config"] == rec.label) & (table["error"] == "")]
        priced = best["dollars"].notna().any()
        if priced:  # the summary's figure: net of re-reading each needed result once
            cols[2].metric("Saved with the pick", usd(float(best["net_dollars_saved"].sum())),
                           help="Net of re-fetching each result the agent needed later, as the summary says.")
        else:
            cols[2].metric("Saved with the pick", f"{int(best['tokens_saved'].sum()):,} tokens")
        st.plotly_chart(charts.corpus_heatmap(sweep, rec.label), key="corpus_heat", config={"displaylogo": False})
        st.plotly_chart(charts.corpus_distributions(best, window), key="corpus_dist", config={"displaylogo": False})
        st.caption(f"Per run, with {md(rec.label)}: what it saves, and its peak context against the model's window.")
        st.subheader("Frontier", anchor=False)
        st.caption("Settings that no other beats on tokens saved, cache breaks and peak context at once; settings "
                   "with the same outcome are shown once, settings that change nothing not at all.")
        st.dataframe(rec.frontier, hide_index=True, key="corpus_frontier", column_config=compare_columns(
            rec.frontier.columns))
        st.subheader("Runs", anchor=False)
        st.caption("Where the pick does worst first. Open one in the single-run views: download it below, or use "
                   "`toolclear app FILE`.")
        worst = "net_dollars_saved" if priced else "tokens_saved"
        ordered = best.sort_values([worst, "run"], kind="stable").reset_index(drop=True)
        event = st.dataframe(ordered, hide_index=True, key="corpus_runs", on_select="rerun",
                             selection_mode="single-row", column_config=columns)
        picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
        if picked:
            row = ordered.iloc[picked[0]]
            st.button(f"Open {row['run']} in the single-run views", key="corpus_open_button", on_click=_open,
                      args=(str(row["file"]), str(row["conversation"]), rec.config))
    c = st.columns(3)
    c[0].download_button("Table (CSV)", exports.table_csv(table), "corpus-sweep.csv", key="corpus_csv")
    try:
        import io

        buf = io.BytesIO()
        table.to_parquet(buf, index=False)
        c[1].download_button("Table (Parquet)", buf.getvalue(), "corpus-sweep.parquet", key="corpus_parquet")
    except ImportError:
        c[1].caption("Parquet needs pyarrow.")
    c[2].download_button("Recommendation (JSON)", exports.json_bytes(
        {"policy": lab.policy_spec(rec.config) if rec.config is not None else None, "summary": rec.summary}),
        "recommendation.json", key="corpus_rec")
    if rec.config is not None:
        for title, lang, code in snippets.policy_snippets(rec.config, mode="replay")[:1]:
            st.caption(title)
            st.code(code, language=lang)
    _ = pd
    del configs
