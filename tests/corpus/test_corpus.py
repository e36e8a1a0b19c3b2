"""A corpus of runs: folders, archives and lists; every config on every run, on any engine."""

from __future__ import annotations

import shutil
import tarfile
import zipfile

import pytest

import toolclear as tc

from ..conftest import CORPUS

CONFIGS = tc.grid(tc.ClearToolResultConfig(), threshold=[5_000, 20_000], keep=[10_000, 40_000]) + [
    tc.ObservationMaskingConfig.swe_agent(), tc.AnthropicClearToolUsesConfig(trigger_input_tokens=20_000)]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Part of the real corpus in a folder, with one broken file among it."""
    root = tmp_path_factory.mktemp("corpus") / "runs"
    (root / "cc").mkdir(parents=True)
    for p in sorted((CORPUS / "claude_code").glob("entire-cli_cc-2.1.[3-7]*.jsonl"))[:3]:
        shutil.copy(p, root / "cc" / p.name)
    shutil.copy(CORPUS / "openai_chat" / "tau-bench_gpt-4o_airline_historical-trajectories.json", root)
    (root / "broken.json").write_text('{"role": "user", "content": ', encoding="utf-8")
    (root / "notes.txt").write_text("not a transcript", encoding="utf-8")
    return root


def test_load_corpus_lists_without_reading(small) -> None:
    corpus = tc.load_corpus(small)
    labels = [f.label for f in corpus.files]
    assert labels == sorted(labels) and "runs/broken.json" in labels and not any(x.endswith(".txt") for x in labels)
    ids = [rid for rid, _ in corpus.runs()]
    assert len(ids) == len(set(ids)) and sum(i.startswith("runs/tau-bench") for i in ids) == 200


def test_archives_and_lists_give_the_same_runs(small, tmp_path) -> None:
    folder = {rid.split("/", 1)[1]: len(t.messages) for rid, t in tc.load_corpus(small).runs()}
    zpath, tpath = tmp_path / "runs.zip", tmp_path / "runs.tar.gz"
    with zipfile.ZipFile(zpath, "w") as zf:
        for p in small.rglob("*"):
            if p.is_file():
                zf.write(p, p.relative_to(small).as_posix())
    with tarfile.open(tpath, "w:gz") as tf:
        tf.add(small, arcname=".")
    for archive in (zpath, tpath):
        runs = {rid.split("!", 1)[1].removeprefix("./"): len(t.messages) for rid, t in tc.load_corpus(archive).runs()}
        assert runs == folder
    listed = tc.load_corpus([small / "cc" / p.name for p in sorted((small / "cc").iterdir())])
    assert len(list(listed.runs())) == 3


def test_bad_files_are_listed_and_skipped(small) -> None:
    sw = tc.sweep_corpus(tc.load_corpus(small), CONFIGS[:1], engine="serial")
    (bad,) = sw.errors
    assert bad[0] == "runs/broken.json" and "\n" not in bad[1] and "line 1" in bad[1]
    assert set(sw.table["file"]) == {f.label for f in tc.load_corpus(small).files} - {"runs/broken.json"}
    missing = tc.load_corpus([small / "nope.json", small / "cc"])
    assert missing.errors == ((str(small / "nope.json"), "no such file or folder"),)


def test_rows_equal_the_single_run_library(small) -> None:
    corpus = tc.load_corpus(small / "cc")
    sw = tc.sweep_corpus(corpus, CONFIGS, pricing="claude-opus-4-5", engine="serial")
    assert len(sw.table) == 3 * len(CONFIGS)
    for rid, t in corpus.runs():
        for cfg, label in zip(CONFIGS, sw.labels):
            row = sw.table[(sw.table["run"] == rid) & (sw.table["config"] == label)].iloc[0]
            # calibrated as the app and the CLI calibrate: in tokens as sent where the log recorded usage
            r = tc.replay(t.messages, cfg, calibration=tc.runs.lab.sent_as(t.messages))
            c = tc.cost(r, "claude-opus-4-5", calibrate=True, compactions=[k for k, _ in t.marks])  # as sweeps do
            assert row["tokens_sent"] == r.tokens_sent and row["cache_breaks"] == r.cache_breaks
            assert row["dollars"] == pytest.approx(c.dollars)


def test_process_engine_gives_the_same_table(small) -> None:
    corpus = tc.load_corpus(small)
    serial = tc.sweep_corpus(corpus, CONFIGS, engine="serial")
    seen = []
    two = tc.sweep_corpus(corpus, CONFIGS, workers=2, engine="process", progress=lambda d, n: seen.append((d, n)))
    assert two.table.equals(serial.table) and two.errors == serial.errors
    assert seen[-1] == (len(corpus), len(corpus))


def test_dask_engine_on_a_real_local_cluster(small) -> None:
    from dask.distributed import Client, LocalCluster

    corpus = tc.load_corpus(small)
    serial = tc.sweep_corpus(corpus, CONFIGS, engine="serial")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2  # separate worker processes
        sent: list[object] = []

        class Watched:  # the client as the sweep uses it, seeing what each task is sent
            def __getattr__(self, name: str) -> object:
                return getattr(client, name)

            def submit(self, fn: object, batch: object, settings: object, **kw: object) -> object:
                sent.append(settings)
                return client.submit(fn, batch, settings, **kw)
        dask = tc.sweep_corpus(corpus, CONFIGS, engine="dask", client=Watched())
        # the settings scattered once: every task gets the same future, not a copy of them
        assert len(sent) > 1 and all(type(x).__name__ == "Future" and x is sent[0] for x in sent)
        by_address = tc.sweep_corpus(corpus, CONFIGS[:2], engine="dask", scheduler=cluster.scheduler_address)
    assert dask.table.equals(serial.table) and dask.errors == serial.errors
    assert by_address.table.equals(tc.sweep_corpus(corpus, CONFIGS[:2], engine="serial").table)


def test_aggregates_and_recommendation(small) -> None:
    sw = tc.sweep_corpus(tc.load_corpus(small / "cc"), CONFIGS, pricing="claude-opus-4-5", engine="serial")
    agg = sw.aggregates()
    assert list(agg.index) == list(sw.labels) and "dollars_saved_p90" in agg.columns
    df = sw.table
    per = df.assign(net=df["dollars"] + df["refetch_dollars"]).groupby("config").agg(
        net=("net", "sum"), without=("dollars_without_policy", "sum"), needed=("needed_results", "sum"),
        calls=("model_calls", "sum"))
    for budget in (float("inf"), 5.0, 0.0):
        ok = per[(100 * per["needed"] / per["calls"] <= budget) & (per["net"] < per["without"])]
        rec = sw.recommend(loss_budget=budget)
        if ok.empty:
            assert rec.config is None and rec.summary.startswith("No setting does better"), rec.summary
            continue
        assert rec.label == ok["net"].idxmin() and rec.config in CONFIGS and "runs" in rec.summary
        assert len(rec.frontier) >= 1
        assert not rec.frontier.duplicated(["tokens_saved", "needed_results", "cache_breaks",
                                             "p99_peak_context_tokens"]).any()
    tight = sw.recommend(objective="tokens", max_context=1)
    assert tight.config is None and "p99 peak under 1 tokens" in tight.summary
    limit = int(sw.table["peak_context"].max())
    loose = sw.recommend(objective="tokens", max_context=limit, loss_budget=float("inf"))
    assert loose.label in sw.labels


def test_a_setting_that_changes_nothing_is_never_recommended(small) -> None:
    """A grid whose every setting is a no-op: the recommendation says so, the frontier is empty."""
    noop = tc.grid(tc.ClearToolResultConfig(), threshold=[10**9], keep=[10**9, 2 * 10**9])
    sw = tc.sweep_corpus(tc.load_corpus(small / "cc"), noop, pricing="claude-opus-4-5", engine="serial")
    rec = sw.recommend()
    assert rec.config is None and "changes nothing" in rec.summary and rec.frontier.empty


def test_grids_are_numbers_a_person_types() -> None:
    from toolclear.runs.numbers import spread

    assert spread(5_000, 40_000, 4) == [5_000, 10_000, 20_000, 40_000]
    assert spread(0, 40_000, 5) == [0, 10_000, 20_000, 30_000, 40_000]
    assert spread(10_000, 80_000, 4) == [10_000, 20_000, 40_000, 80_000]


def test_grid_and_engine_errors() -> None:
    g = tc.grid(tc.AnthropicClearToolUsesConfig(), threshold=[1, 2], keep=[3])
    assert [(c.trigger_input_tokens, c.keep_tool_uses) for c in g] == [(1, 3), (2, 3)]
    with pytest.raises(tc.ConfigError, match="no field 'bogus'"):
        tc.grid(tc.ClearToolResultConfig(), bogus=[1])
    with pytest.raises(tc.ConfigError, match="needs client="):
        tc.sweep_corpus(tc.load_corpus([CORPUS / "eino"]), CONFIGS[:1], engine="dask")



@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json"])
def test_cli_corpus_writes_the_table_and_recommends(small, tmp_path, suffix) -> None:
    import pandas as pd

    from ..cli.test_cli import run

    out = tmp_path / f"sweep{suffix}"
    code, _, err = run("corpus", str(small / "cc"), str(small / "broken.json"), "--threshold", "5000:20000:2",
                       "--keep", "10000:40000:2", "--replay", "--pricing", "claude-opus-4-5", "--jobs", "1",
                       "-o", str(out))
    assert code == 0, err
    table = {".csv": pd.read_csv, ".parquet": pd.read_parquet, ".json": pd.read_json}[suffix](out)
    want = tc.sweep_corpus(tc.load_corpus([small / "cc", small / "broken.json"]),
                           tc.grid(tc.ClearToolResultConfig(), threshold=[5000, 20000], keep=[10000, 40000]),
                           pricing="claude-opus-4-5", engine="serial", calibrate=True)
    assert list(table["tokens_sent"]) == list(want.table["tokens_sent"])
    # the CLI calibrates by default, and prices as the library does
    assert list(table["dollars"]) == pytest.approx(list(want.table["dollars"]), rel=1e-9)
    assert list(table["needed_results"]) == list(want.table["needed_results"])
    assert "skipped broken.json" in err and want.recommend().summary in err


@pytest.mark.parametrize("args,message", [
    (["--threshold", "1:2:0"], "expected A:B:N with N from 1 to 100"),
    (["--pricing", "gpt-5", "--no-replay"], "--pricing needs a replay (drop --no-replay)"),
    (["-o", "x.xlsx"], "expected a .csv, .parquet or .json file"),
    (["--engine", "dask"], "--engine dask needs --scheduler"),
])
def test_cli_corpus_bad_usage_is_one_line(small, args, message) -> None:
    from ..cli.test_cli import run

    code, _, err = run("corpus", str(small / "cc"), *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_cli_corpus_nothing_readable_exits_2(tmp_path) -> None:
    from ..cli.test_cli import run

    (tmp_path / "a.json").write_text("[1, 2", encoding="utf-8")
    code, _, err = run("corpus", str(tmp_path))
    assert code == 2 and "nothing could be read" in err


def test_damaged_members_are_each_an_error_and_the_rest_is_swept(tmp_path) -> None:
    """A corrupt deflate stream, an encrypted member, a truncated .tar.gz and a truncated
    .gz in a folder: each becomes an entry in .errors, the good files are swept."""
    import gzip
    import io
    import zipfile

    good = (CORPUS / "eino").glob("*.jsonl").__next__().read_bytes()
    root = tmp_path / "runs"
    root.mkdir()
    (root / "good.jsonl").write_bytes(good)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ok.jsonl", good)
        zf.writestr("corrupt.jsonl", good)
        zf.writestr("locked.jsonl", good)
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        corrupt, locked = zf.getinfo("corrupt.jsonl"), zf.getinfo("locked.jsonl")
    start = corrupt.header_offset + 30 + len(corrupt.filename)
    data[start:start + 40] = b"\xff" * 40  # the deflate stream, garbled
    data[locked.header_offset + 6] |= 1  # the encryption flag, in the local header...
    central = bytes(data).rfind(b"locked.jsonl") - 46
    data[central + 8] |= 1  # ...and in the central directory
    (root / "runs.zip").write_bytes(bytes(data))
    tgz = io.BytesIO()
    import tarfile

    with tarfile.open(fileobj=tgz, mode="w:gz") as tf:
        info = tarfile.TarInfo("a.jsonl")
        info.size = len(good)
        tf.addfile(info, io.BytesIO(good))
    (root / "cut.tar.gz").write_bytes(tgz.getvalue()[: len(tgz.getvalue()) // 2])
    (root / "cut.jsonl.gz").write_bytes(gzip.compress(good)[:50])
    corpus = tc.load_corpus(root, "**/*")
    sweep = tc.sweep_corpus(corpus, CONFIGS[:1], engine="serial")
    swept = set(sweep.table["file"])
    assert {"runs/good.jsonl", "runs.zip!ok.jsonl"} <= swept
    failed = {label for label, _ in sweep.errors}
    assert "runs.zip!corrupt.jsonl" in failed and "runs.zip!locked.jsonl" in failed
    assert not swept & failed
    assert len(list(corpus.runs())) == len(sweep.table["run"].unique())


def test_links_in_a_folder_are_followed_inside_it_and_named_when_they_lead_out(tmp_path) -> None:
    src = next((CORPUS / "eino").glob("*.jsonl"))
    root = tmp_path / "runs"
    (root / "real").mkdir(parents=True)
    (root / "real" / "a.jsonl").write_bytes(src.read_bytes())
    (root / "link.jsonl").symlink_to(root / "real" / "a.jsonl")
    outside = tmp_path / "secret.jsonl"
    outside.write_bytes(src.read_bytes())
    (root / "out.jsonl").symlink_to(outside)
    corpus = tc.load_corpus(root)
    assert {f.label for f in corpus.files} == {"runs/real/a.jsonl", "runs/link.jsonl"}
    assert corpus.errors == (("runs/out.jsonl", "a link to a file outside the folder: not followed"),)
    from ..cli.test_cli import run

    code, _, err = run("corpus", str(root), "--jobs", "1")
    assert code == 0 and "skipped runs/out.jsonl: a link to a file outside the folder" in err


def test_a_script_without_the_main_guard_is_told_what_to_do(tmp_path) -> None:
    import subprocess
    import sys

    src = next((CORPUS / "eino").glob("*.jsonl"))
    for k in range(3):
        (tmp_path / f"r{k}.jsonl").write_bytes(src.read_bytes())
    script = tmp_path / "sweep.py"
    script.write_text("import toolclear as tc\n"
                      f"corpus = tc.load_corpus({str(tmp_path)!r})\n"
                      "tc.sweep_corpus(corpus, [tc.ClearToolResultConfig()], workers=2, engine='process')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode != 0
    assert "if __name__ == \"__main__\":" in done.stderr and "engine='serial'" in done.stderr


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_a_name_that_is_not_utf8_never_breaks_the_outputs(tmp_path, suffix) -> None:
    import os

    src = next((CORPUS / "eino").glob("*.jsonl")).read_bytes()
    root = tmp_path / "runs"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"caf\xe9\x07.jsonl"), "wb") as fh:
        fh.write(src)
    corpus = tc.load_corpus(root)
    assert [f.label for f in corpus.files] == ["runs/caf\\xe9\\x07.jsonl"]
    from ..cli.test_cli import run

    code, out, err = run("corpus", str(root), "--jobs", "1", "-o", str(tmp_path / f"t{suffix}"))
    assert code == 0, err
    assert (tmp_path / f"t{suffix}").stat().st_size > 0


def test_sigterm_stops_a_process_sweep_and_its_workers(tmp_path) -> None:
    """`timeout` / systemd / `docker stop` send SIGTERM: the sweep stops, says so, and
    leaves no worker process behind."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import uuid

    src = (CORPUS / "claude_code" / "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl").read_bytes()
    for k in range(60):
        (tmp_path / f"r{k}.jsonl").write_bytes(src)
    mark = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "toolclear", "corpus", str(tmp_path), "--replay", "--jobs", "2",
                             "--threshold", "1000:40000:6", "--keep", "1000:80000:6"],
                            env={**os.environ, "TOOLCLEAR_TEST_MARK": mark}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)

    def marked() -> list[int]:
        out = []
        for pid in os.listdir("/proc"):
            if pid.isdigit() and int(pid) != proc.pid:
                try:
                    with open(f"/proc/{pid}/environ", "rb") as fh:
                        if mark.encode() in fh.read():
                            out.append(int(pid))
                except OSError:
                    pass
        return out

    t0 = time.monotonic()
    while len(marked()) < 2:  # the workers have started
        assert proc.poll() is None and time.monotonic() - t0 < 60, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "terminated" in err, err  # SIGTERM, said as such
    t0 = time.monotonic()
    while marked():
        assert time.monotonic() - t0 < 15, f"workers left running: {marked()}"
        time.sleep(0.2)


def test_damaged_members_on_the_dask_engine_and_through_the_cli(tmp_path) -> None:
    import io
    import zipfile

    from dask.distributed import Client, LocalCluster

    good = next((CORPUS / "eino").glob("*.jsonl")).read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ok.jsonl", good)
        zf.writestr("bad.jsonl", good)
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("bad.jsonl")
    start = info.header_offset + 30 + len(info.filename)
    data[start:start + 40] = b"\xff" * 40
    (tmp_path / "runs.zip").write_bytes(bytes(data))
    corpus = tc.load_corpus(tmp_path / "runs.zip")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        sweep = tc.sweep_corpus(corpus, CONFIGS[:1], engine="dask", client=client)
    assert set(sweep.table["file"]) == {"runs.zip!ok.jsonl"}
    assert [label for label, _ in sweep.errors] == ["runs.zip!bad.jsonl"]
    from ..cli.test_cli import run

    code, _, err = run("corpus", str(tmp_path / "runs.zip"), "--jobs", "1")
    assert code == 0 and "skipped runs.zip!bad.jsonl" in err


def test_a_dask_scheduler_that_never_answers_is_one_line_not_a_hang(monkeypatch) -> None:
    """An address that accepts connections and says nothing (and one that is not an
    address at all): a one-line error after the timeout, exit 2 from the CLI."""
    import socket
    import threading

    from toolclear.corpus import sweeps as corpus_mod

    monkeypatch.setattr(corpus_mod, "DASK_TIMEOUT", 3)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])  # accepted, never answered
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        corpus = tc.load_corpus([CORPUS / "eino"])
        with pytest.raises(tc.ConfigError, match="cannot connect within 3 s"):
            tc.sweep_corpus(corpus, CONFIGS[:1], engine="dask",
                            scheduler=f"tcp://127.0.0.1:{srv.getsockname()[1]}")
    finally:
        stop.set()
        thread.join(2)
        for s in held:
            s.close()
        srv.close()
    from ..cli.test_cli import run

    code, _, err = run("corpus", str(CORPUS / "eino"), "--engine", "dask", "--scheduler", "not an address")
    assert code == 2 and err.count("\n") == 1 and "dask scheduler" in err, err


def test_the_cli_corpus_replays_and_prices_by_default_as_the_page_does(tmp_path) -> None:
    """One default everywhere: a replay priced at each run's own model, calibrated."""
    from ..cli.test_cli import run

    shutil.copy(CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl", tmp_path)
    code, out, err = run("corpus", str(tmp_path), "--jobs", "1")
    assert code == 0, err
    header, row = out.decode().splitlines()[:2]
    cells = dict(zip(header.split(","), row.split(",")))
    assert cells["pricing"] and float(cells["dollars"]) > 0 and int(cells["model_calls"]) > 0
    code, out, _ = run("corpus", str(tmp_path), "--jobs", "1", "--no-replay")
    header, row = out.decode().splitlines()[:2]
    assert code == 0 and dict(zip(header.split(","), row.split(",")))["dollars"] == ""


@pytest.mark.parametrize("name", [p.name for s in tc.policies.BUILT_IN for p in s.presets])
def test_every_registered_policy_sweeps_a_real_corpus(name, tmp_path) -> None:
    """Each policy of the registry, by its name alone, over real Claude Code and SWE-agent
    runs: a row per run, priced, none failing (a new policy needs nothing here)."""
    for sub, pattern in (("claude_code", "entire-cli_cc-2.1.7*"), ("swe_agent", "*pydicom*")):
        for p in (CORPUS / sub).glob(pattern):
            (tmp_path / p.name).write_bytes(p.read_bytes())
    config = tc.parse_policy(name)
    if tc.policies.spec_for(config).needs_backend(config):
        config = tc.parse_policy(name + ":skip_truncation=true")
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path), [config], engine="serial", pricing="claude-sonnet-4-5")
    assert not sweep.errors
    table = sweep.table
    assert len(table) == 2 and table["dollars"].notna().all() and (table["dollars_without_policy"] > 0).all()
    assert set(table["policy"]) == {tc.policies.spec_for(config).name}
