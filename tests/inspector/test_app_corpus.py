"""AppTest: the Corpus page sweeps uploaded runs and recommends what the library does."""

from __future__ import annotations

import shutil

import pytest

import toolclear as tc

from ..conftest import CORPUS
from .test_app import KEEP, TH, go, metrics, page_of, start

FILES = sorted((CORPUS / "claude_code").glob("entire-cli_cc-2.1.*.jsonl"))[:3]


def corpus_page():
    return go(start(), "Corpus")


def test_corpus_page_recommends_what_the_library_recommends(tmp_path) -> None:
    at = corpus_page()
    assert any("Upload several transcripts" in i.value for i in at.info)
    at.file_uploader(key="corpus_files").set_value(
        [(p.name, p.read_bytes(), "application/jsonl") for p in FILES]).run()
    at.text_input(key="corpus_thresholds").set_value("10000:30000:2").run()
    at.text_input(key="corpus_keeps").set_value("10000:40000:2").run()
    at.button(key="corpus_go").click().run(timeout=180)
    assert not at.exception, at.exception
    for p in FILES:
        shutil.copy(p, tmp_path / p.name)
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path), tc.grid(tc.ClearToolResultConfig(), threshold=[10000, 30000],
                                                               keep=[10000, 40000]),
                            pricing="auto", calibrate=True, engine="serial")
    rec = sweep.recommend(max_context=200_000)
    shown = [m.value.replace("\\", "") for m in [*at.success, *at.warning]]
    assert rec.summary.replace("\\", "") in shown or any(rec.label and rec.label in s for s in shown), shown
    # the uploads are named as uploaded, never by the temporary folder they were stored in
    assert not any("toolclear-corpus-" in s for s in shown)
    if rec.config is None:
        return
    runs = next(df.value for df in at.dataframe if "run" in df.value.columns and "config" in df.value.columns)
    assert set(runs["config"]) == {rec.label} and len(runs) == sweep.table["run"].nunique()


def test_corpus_page_bad_grid_is_one_line() -> None:
    at = corpus_page()
    at.file_uploader(key="corpus_files").set_value([(FILES[0].name, FILES[0].read_bytes(), "application/jsonl")]).run()
    at.text_input(key="corpus_thresholds").set_value("lots").run()
    assert len(at.error) == 1 and "thresholds: expected A:B:N" in at.error[0].value.replace("\\", "")


def test_a_run_opens_in_the_single_run_views_with_the_pick() -> None:
    at = corpus_page()
    at.file_uploader(key="corpus_files").set_value(
        [(p.name, p.read_bytes(), "application/jsonl") for p in FILES]).run()
    at.text_input(key="corpus_thresholds").set_value("10000:30000:2").run()
    at.text_input(key="corpus_keeps").set_value("10000:40000:2").run()
    at.number_input(key="corpus_loss_budget").set_value(1000.0).run()
    at.button(key="corpus_go").click().run(timeout=180)
    at.session_state["corpus_runs"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    at.button(key="corpus_open_button").click().run()
    assert not at.exception, at.exception
    assert page_of(at) == "One run"
    rec = at.session_state["corpus_result"].recommend(max_context=200_000, loss_budget=1000.0)
    assert at.number_input(key=TH + "_input").value == rec.config.tool_result_token_threshold
    assert at.number_input(key=KEEP + "_input").value == rec.config.keep_recent_tokens
    assert any("from the Corpus page" in c.value for c in at.sidebar.caption)
    assert "Messages" in {m.label for m in at.metric}


def test_corpus_page_sweeps_a_hostile_archive_and_names_what_it_skipped(monkeypatch) -> None:
    """A zip with a good run, a corrupt member and a decompression bomb, uploaded to the
    Corpus page: the good run is swept, each bad member is named, nothing crashes."""
    import io
    import zipfile

    good = FILES[0].read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("good.jsonl", good)
        zf.writestr("bad.jsonl", good)
        zf.writestr("bomb.jsonl", b"0" * (40 << 20))
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("bad.jsonl")
    start = info.header_offset + 30 + len(info.filename)
    data[start:start + 40] = b"\xff" * 40
    at = corpus_page()
    at.file_uploader(key="corpus_files").set_value([("runs.zip", bytes(data), "application/zip")]).run()
    at.number_input(key="corpus_loss_budget").set_value(1000.0).run()
    at.button(key="corpus_go").click().run(timeout=180)
    assert not at.exception, at.exception
    warned = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "runs.zip!bad.jsonl" in warned and "runs.zip!bomb.jsonl" in warned and "decompression bomb" in warned
    assert "Something went wrong" not in " ".join(e.value for e in at.error)
    assert at.metric[0].value == "1"  # the one good run


def test_corpus_page_bounds_the_grid_and_keeps_one_upload_folder() -> None:
    """3,000 numbers in a box would build millions of settings on every rerun: refused in
    one line. Each new upload replaces the session's one temporary folder."""
    import os
    import tempfile
    import time
    from pathlib import Path

    stale = Path(tempfile.mkdtemp(prefix="toolclear-corpus-"))  # a session that ended a day ago
    os.utime(stale, (time.time() - 2 * 86400, time.time() - 2 * 86400))
    at = corpus_page()
    at.file_uploader(key="corpus_files").set_value([(FILES[0].name, FILES[0].read_bytes(), "application/jsonl")]).run()
    at.text_input(key="corpus_thresholds").set_value(", ".join(str(k) for k in range(3000))).run()
    assert len(at.error) == 1 and "up to 20 whole numbers" in at.error[0].value.replace("\\", "")
    at.text_input(key="corpus_thresholds").set_value("10000:30000:2").run()
    roots = []
    for f in FILES[:2]:
        at.file_uploader(key="corpus_files").set_value([(f.name, f.read_bytes(), "application/jsonl")]).run()
        at.button(key="corpus_go").click().run(timeout=180)
        assert not at.exception, at.exception
        roots.append(at.session_state["_corpus_root"])
    assert roots[0] != roots[1] and not Path(roots[0]).exists() and Path(roots[1]).exists()
    assert not stale.exists()
    assert Path(roots[1]).parent == Path(tempfile.gettempdir())


def test_failed_runs_are_counted_and_named_and_the_table_reads_as_labelled(tmp_path) -> None:
    """A run that fails is named and counted apart, a run whose log names no model is
    priced at the stated default (not dropped), units are said once per header, the runs
    are sorted worst first, and the pick's saving is the summary's figure."""
    no_model = CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json"
    uploads = [(p.name, p.read_bytes(), "application/jsonl") for p in FILES]
    uploads += [(no_model.name, no_model.read_bytes(), "application/json"),
                ("=HYPERLINK(1).json", b'{"messages": 5}', "application/json")]
    at = corpus_page()
    at.file_uploader(key="corpus_files").set_value(uploads).run()
    at.text_input(key="corpus_thresholds").set_value("5000:20000:2").run()
    at.text_input(key="corpus_keeps").set_value("5000:20000:2").run()
    at.number_input(key="corpus_loss_budget").set_value(1000.0).run()
    at.button(key="corpus_go").click().run(timeout=180)
    assert not at.exception, at.exception
    m = metrics(at)
    assert m["Runs"] == str(len(FILES) + 1) and m["Failed"] == "1"
    assert any("HYPERLINK" in w.value for w in at.warning)  # the failed file, named
    assert any("priced at a stated default" in i.value for i in at.info)
    runs = next(df for df in at.dataframe if "run" in df.value.columns and "config" in df.value.columns)
    headers = {k: v.get("label") for k, v in runs.column_config.items()} if hasattr(runs, "column_config") else {}
    assert all("(tokens)" not in str(h) or "peak" in str(k) for k, h in headers.items()), headers
    values = runs.value
    if "net_dollars_saved" in values.columns and values["net_dollars_saved"].notna().any():
        assert list(values["net_dollars_saved"]) == sorted(values["net_dollars_saved"])
        shown = float(m["Saved with the pick"].replace("$", "").replace(",", ""))
        assert shown == pytest.approx(float(values["net_dollars_saved"].sum()), abs=0.006)


def test_the_corpus_csv_never_starts_a_cell_with_a_formula(tmp_path) -> None:
    from toolclear.runs.report import table_csv

    bad = tmp_path / "=HYPERLINK(x).jsonl"
    bad.write_bytes(FILES[0].read_bytes())
    sweep = tc.sweep_corpus(tc.load_corpus(bad), [tc.ClearToolResultConfig()], engine="serial")
    assert sweep.table["file"].iloc[0].startswith("=")
    text = table_csv(sweep.table).decode()
    assert "'=HYPERLINK" in text and ",=HYPERLINK" not in text and "\n=HYPERLINK" not in text
    from ..cli.test_cli import run as cli_run

    code, out, _ = cli_run("corpus", str(bad), "--engine", "serial")
    assert code == 0 and b"'=HYPERLINK" in out and b"\n=HYPERLINK" not in out
