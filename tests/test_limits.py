"""The bounds toolclear holds untrusted input to (toolclear.limits): a gzip bomb in an API
cassette is refused in one line naming its bound, in bounded time and memory, through
every route (load, the CLI, a corpus), and a bound can be raised by its variable."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
import yaml

import toolclear as tc

ROOT = Path(__file__).resolve().parents[1]


def _bomb(inflated: int) -> bytes:
    """gzip of a JSON request body padded with `inflated` bytes of spaces (about 1,000:1)."""
    head = b'{"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}], "x": "'
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [c.compress(head)]
    block = b" " * (1 << 20)
    for _ in range(inflated >> 20):
        parts.append(c.compress(block))
    parts.append(c.compress(b'"}'))
    parts.append(c.flush())
    return b"".join(parts)


def _cassette(body: bytes) -> bytes:
    good = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a b c"}]}]})
    inter = [{"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": b,
                          "headers": {"content-encoding": ["gzip"]}},
              "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}}
             for b in (gzip.compress(good.encode()), body)]
    return yaml.dump({"interactions": inter, "version": 1}).encode()


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.yaml"
    path.write_bytes(_cassette(_bomb(1 << 30)))  # 1 GiB inflated
    assert path.stat().st_size < 5 << 20
    return path


def test_a_gzip_bomb_is_refused_naming_its_bound(bomb) -> None:
    start = time.monotonic()
    with pytest.raises(tc.TranscriptError) as err:
        tc.load_all(bomb)
    assert time.monotonic() - start < 20
    text = str(err.value)
    assert "decompresses to more than 67,108,864 bytes" in text and "TOOLCLEAR_MAX_BODY_BYTES" in text
    assert "interactions[1]" in text and "\n" not in text


def test_the_cli_refuses_it_in_bounded_memory(bomb, tmp_path) -> None:
    # the child's own peak (VmHWM), written as it exits: RUSAGE_CHILDREN would be the
    # largest of every child this test process ever waited for
    hwm = tmp_path / "hwm"
    code = ("import atexit, re, runpy, sys; out, path = sys.argv[1:3]; atexit.register(lambda: open(out, 'w')"
            ".write(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))); "
            "sys.argv = ['toolclear', 'inspect', path]; runpy.run_module('toolclear', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code, str(hwm), str(bomb)], capture_output=True, text=True,
                          timeout=120)
    peak_mb = int(hwm.read_text()) / 1024
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "TOOLCLEAR_MAX_BODY_BYTES" in done.stderr and "Traceback" not in done.stderr
    assert 10 < peak_mb < 600, peak_mb  # was 2.2 GB


def test_a_corpus_holding_it_names_it_and_reads_the_rest(bomb, tmp_path) -> None:
    (tmp_path / "bomb.yaml").write_bytes(bomb.read_bytes())
    (tmp_path / "run.json").write_bytes((ROOT / "sample_data" / "coding-agent.openai.json").read_bytes())
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path), [tc.ClearToolResultConfig()], engine="serial",
                            mode="single pass")
    (name, error), = sweep.errors
    assert name.endswith("/bomb.yaml") and "MAX_BODY_BYTES" in error
    assert [f.rsplit("/", 1)[-1] for f in set(sweep.table["file"])] == ["run.json"]


def test_a_bound_is_raised_by_its_variable(tmp_path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(_cassette(_bomb(3 << 20)))  # 3 MiB inflated
    code = ("import toolclear as tc, sys; ts = tc.load_all(sys.argv[1]); print(len(ts))")
    env = {**os.environ, "TOOLCLEAR_MAX_BODY_BYTES": str(1 << 20)}
    low = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, timeout=60)
    assert low.returncode != 0 and "more than 1,048,576 bytes" in low.stderr
    env["TOOLCLEAR_MAX_BODY_BYTES"] = str(8 << 20)
    high = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                          timeout=60)
    assert high.returncode == 0, high.stderr


def test_the_whole_cassette_has_a_budget_too(tmp_path, monkeypatch) -> None:
    from toolclear import limits
    from toolclear.formats import _base

    monkeypatch.setattr(limits, "MAX_CASSETTE_BYTES", 5 << 20)
    many = [{"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": _bomb(2 << 20)},
             "response": {"status": {"code": 200}, "body": {"string": "{}"}}} for _ in range(4)]
    with pytest.raises(tc.TranscriptError, match="TOOLCLEAR_MAX_CASSETTE_BYTES"):
        list(_base.cassette_requests({"interactions": many}))


def _tar_with_a_huge_skipped_member(path: Path, member_type: bytes) -> None:
    """A tar.gz: a member whose header claims 1 GiB of zeros (about 1 MB compressed),
    skipped by the reader (a link, or a file no pattern wants), then a wanted run."""
    import tarfile

    run = (ROOT / "sample_data" / "coding-agent.openai.json").read_bytes()
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    out = bytearray()
    big = tarfile.TarInfo("payload.bin")
    big.size = 1 << 30
    header = bytearray(big.tobuf(format=tarfile.GNU_FORMAT))
    header[156:157] = member_type  # a regular file '0', or a link: its data is skipped all the same
    chksum = sum(header[:148]) + 8 * 32 + sum(header[156:512])
    header[148:156] = b"%06o\0 " % chksum
    out += c.compress(bytes(header))
    zeros = b"\0" * (1 << 20)
    for _ in range(1024):
        out += c.compress(zeros)
    good = tarfile.TarInfo("runs/run.json")
    good.size = len(run)
    out += c.compress(good.tobuf(format=tarfile.GNU_FORMAT) + run + b"\0" * (-len(run) % 512) + b"\0" * 1024)
    out += c.flush()
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("member_type", [b"0", b"7"], ids=["regular", "contiguous"])
def test_a_tar_member_past_the_budget_stops_the_listing_at_once(tmp_path, member_type) -> None:
    path = tmp_path / "runs.tar.gz"
    _tar_with_a_huge_skipped_member(path, member_type)
    start = time.monotonic()
    corpus = tc.load_corpus(path)
    assert time.monotonic() - start < 10
    assert corpus.files == () and "payload.bin" in corpus.errors[0][1] and "ARCHIVE_FLOOR" in corpus.errors[0][1]


def test_inspect_of_many_tiny_messages_peaks_within_30_times_the_file(tmp_path) -> None:
    """The worst case of memory per byte (issue 39, item 7): 200,000 messages of about 50
    bytes, as JSON Lines of chat messages. ``toolclear inspect`` reads them and replays the verdict's
    sixteen settings; its own peak stays within 30 x the file (it was 40 x). The child is
    capped at 2 GB of address space so a regression fails here, not the machine."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from memory_load import write_tiny  # the file the benchmark's row measures
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = tmp_path / "tiny.jsonl"
    write_tiny(path, 200_000)
    hwm = tmp_path / "hwm"
    code = ("import atexit, re, resource, runpy, sys; out, path = sys.argv[1:3]; "
            "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); atexit.register(lambda: open(out, 'w')"
            ".write(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))); "
            "sys.argv = ['toolclear', 'inspect', path]; runpy.run_module('toolclear', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code, str(hwm), str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    assert "verdict" in done.stdout and "messages: 200000" in done.stdout
    peak = int(hwm.read_text()) * 1024
    assert peak <= 30 * path.stat().st_size, f"{peak / path.stat().st_size:.1f} x the file"
    assert peak > 5 * path.stat().st_size  # the child's own peak, read
