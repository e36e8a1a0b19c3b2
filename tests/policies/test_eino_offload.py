"""Offloading: real files, hostile ids, atomic writes, failures, and the combined pipeline."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear import LocalDirBackend, MemoryBackend, Message, MessageStatus, ToolResultOffloadingConfig
from toolclear.inspector.exports import offloaded_zip

from ..conftest import CORPUS, SAMPLES, hypothesis_examples

BIG = "\n".join(f"line {i}: " + "x" * 60 for i in range(400))  # ~27 KB
SMALL_LIMIT = ToolResultOffloadingConfig(offloading_token_limit=100)  # offloads over 400 tokens


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_trigger_is_four_times_the_limit() -> None:
    config = ToolResultOffloadingConfig(offloading_token_limit=10)
    assert config.trigger_tokens == 40
    assert not tc.offload("x" * 160, "c", "t", config).offloaded  # 40 tokens
    assert tc.offload("x" * 161, "c", "t", config).offloaded  # 41 tokens = 161 bytes > 16 x 10


def test_local_dir_backend_writes_real_files(tmp_path) -> None:
    backend = LocalDirBackend(tmp_path)
    done = tc.offload(BIG, "call_1", "read_file", SMALL_LIMIT, backend)
    assert done.offloaded and done.path == "/large_tool_result/call_1"  # eino's virtual path, not the disk
    assert backend.file(done.path) == tmp_path.resolve() / "large_tool_result" / "call_1"
    assert backend.file(done.path).read_text() == BIG
    assert str(tmp_path) not in done.message
    assert f"at this path: {done.path}\n" in done.message
    assert "1: line 0: " in done.message and "10: line 9: " in done.message and "11: " not in done.message
    assert backend.read(done.path) == BIG


def test_not_offloaded_writes_nothing(tmp_path) -> None:
    done = tc.offload("small", "c", "t", SMALL_LIMIT, LocalDirBackend(tmp_path))
    assert not done.offloaded and done.message == "small" and done.path is None
    assert _files(tmp_path) == []


@pytest.mark.parametrize(
    "call_id",
    ["../../etc/passwd", "/abs/path", "a\x00b", "..\\..\\win", "", ".", "..", "x" * 5000, "CON", "a/b/c",
     "sha256-deadbeef", "with space", "日本語", "~", "-rf"],
)
def test_hostile_ids_stay_inside_the_root(tmp_path, call_id) -> None:
    root = tmp_path / "root"
    backend = LocalDirBackend(root)
    done = tc.offload(BIG, call_id, "t", SMALL_LIMIT, backend)
    assert done.offloaded, done.error
    real = backend.file(done.path)
    assert root.resolve() in real.parents
    assert real.read_text() == BIG and backend.read(done.path) == BIG
    assert all(root.resolve() in p.resolve().parents for p in _files(tmp_path))
    assert f"this tool call {call_id} was saved" in done.message  # the id is quoted as is
    assert len(real.name) <= 128


@settings(max_examples=hypothesis_examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=300), min_size=1, max_size=8))
def test_hyp_hostile_ids_never_escape_and_never_share_a_file(tmp_path_factory, ids) -> None:
    root = tmp_path_factory.mktemp("offload")
    backend = LocalDirBackend(root / "store")
    where: dict[str, set[str]] = {}
    for k, call_id in enumerate(ids):
        content = f"{k}:{call_id!r}\n" + BIG
        done = tc.offload(content, call_id, "t", SMALL_LIMIT, backend)
        assert done.offloaded, done.error
        real = backend.file(done.path)
        assert (root / "store").resolve() in real.parents
        assert real.read_bytes().decode("utf-8", "surrogatepass") == content
        where.setdefault(done.path, set()).add(call_id)
    assert all(len(v) == 1 for v in where.values()), "two different ids share a file"
    assert all((root / "store").resolve() in p.resolve().parents for p in _files(root))


def test_repeated_id_with_different_results_keeps_both(tmp_path) -> None:
    backend = LocalDirBackend(tmp_path)
    a = tc.offload(BIG + "a", "dup", "t", SMALL_LIMIT, backend)
    b = tc.offload(BIG + "b", "dup", "t", SMALL_LIMIT, backend)
    c = tc.offload(BIG + "a", "dup", "t", SMALL_LIMIT, backend)
    assert a.path != b.path and b.path.endswith("dup~2") and c.path == a.path
    assert backend.read(a.path).endswith("a") and backend.file(b.path).read_text().endswith("b")
    assert backend.file(b.path).name == "dup~2" and sorted(backend.list()) == ["/large_tool_result/dup",
                                                                              "/large_tool_result/dup~2"]
    assert LocalDirBackend(tmp_path).read("/large_tool_result/dup~2").endswith("b")  # a later run reads it back
    mem = MemoryBackend()
    x = tc.offload(BIG + "a", "dup", "t", SMALL_LIMIT, mem)
    y = tc.offload(BIG + "b", "dup", "t", SMALL_LIMIT, mem)
    assert x.path == "/large_tool_result/dup" and y.path == "/large_tool_result/dup~2" and len(mem.files) == 2


def test_symlink_out_of_the_root_is_refused(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "large_tool_result").symlink_to(outside, target_is_directory=True)
    done = tc.offload(BIG, "c", "t", SMALL_LIMIT, LocalDirBackend(root))
    assert not done.offloaded and "outside" in done.error and done.message == BIG
    assert _files(outside) == []


def test_failed_write_keeps_the_result_and_reports_it(tmp_path, monkeypatch) -> None:
    def fail(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    done = tc.offload(BIG, "c", "t", SMALL_LIMIT, LocalDirBackend(tmp_path))
    assert not done.offloaded and done.path is None and done.message == BIG
    assert "No space left on device" in done.error
    assert _files(tmp_path) == []  # the temporary file is gone, no half-written target


def test_write_beyond_the_file_size_limit_is_atomic(tmp_path) -> None:
    """A real failing write (RLIMIT_FSIZE) in a child process: no partial file, result kept."""
    code = f"""
import resource, signal, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
import toolclear as tc
done = tc.offload({BIG!r}, "c", "t", tc.ToolResultOffloadingConfig(offloading_token_limit=100),
                  tc.LocalDirBackend({str(tmp_path)!r}))
print(done.offloaded, done.message == {BIG!r}, done.error is not None)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True", "True"], out.stderr
    assert _files(tmp_path) == []


def test_crash_mid_write_leaves_no_target(tmp_path) -> None:
    code = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from toolclear.policies.offload import LocalDirBackend, ToolResultOffloadingConfig, offload
def crash(fd):
    os._exit(9)  # the process dies after writing, before the rename
os.fsync = crash
offload({BIG!r}, "c", "t", ToolResultOffloadingConfig(offloading_token_limit=100),
        LocalDirBackend({str(tmp_path)!r}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 9
    assert not (tmp_path / "large_tool_result" / "c").exists()


def test_path_generator_and_bad_generator(tmp_path) -> None:
    config = ToolResultOffloadingConfig(offloading_token_limit=100, path_generator=lambda cid: f"/results/{cid}.txt")
    backend = LocalDirBackend(tmp_path)
    done = tc.offload(BIG, "c9", "t", config, backend)
    assert done.path == "/results/c9.txt" and backend.file(done.path) == tmp_path.resolve() / "results" / "c9.txt"
    bad = ToolResultOffloadingConfig(offloading_token_limit=100, path_generator=lambda cid: 42)
    done = tc.offload(BIG, "c9", "t", bad, MemoryBackend())
    assert not done.offloaded and "not a string" in done.error


def test_custom_backend_protocol() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.seen: list[tuple[str, int]] = []

        def write(self, path: str, content: str) -> str:
            self.seen.append((path, len(content)))
            return "s3://bucket" + path

        def read(self, location: str) -> str:
            return "x" * dict(self.seen)[location.removeprefix("s3://bucket")]

        def list(self) -> list[str]:
            return ["s3://bucket" + p for p, _ in self.seen]

    rec = Recorder()
    assert isinstance(rec, tc.StorageBackend)
    done = tc.offload(BIG, "id1", "t", SMALL_LIMIT, rec)
    assert rec.seen == [("/large_tool_result/id1", len(BIG))] and done.path == "s3://bucket/large_tool_result/id1"
    records = tc.reduce_by_tokens(
        [tc.Message("assistant", tool_calls=(tc.ToolCall("id2", "t"),)), tc.Message("tool", BIG, tool_call_id="id2")],
        offloading=SMALL_LIMIT, backend=rec).offloads
    with zipfile.ZipFile(io.BytesIO(offloaded_zip(records, rec))) as zf:  # the zip reads through the protocol
        (name,) = zf.namelist()
        assert name.startswith("offloaded/sha256-") and len(zf.read(name)) == len(BIG)


def test_offload_config_validation() -> None:
    with pytest.raises(tc.ConfigError, match="offloading_token_limit"):
        ToolResultOffloadingConfig(offloading_token_limit=-3)
    assert ToolResultOffloadingConfig.from_eino(0, "") == ToolResultOffloadingConfig()


def test_pipeline_offloads_then_clears(tmp_path) -> None:
    t = tc.load(SAMPLES / "coding-agent.openai.json")
    config = tc.ClearToolResultConfig(tool_result_token_threshold=3000, keep_recent_tokens=5000)
    off = ToolResultOffloadingConfig(offloading_token_limit=600)  # results over 2,400 tokens
    backend = LocalDirBackend(tmp_path)
    for result in (tc.reduce_by_tokens(t.messages, config, offloading=off, backend=backend),
                   tc.replay(t.messages, config, offloading=off, backend=backend)):
        records = [r for r in result.offloads if r is not None]
        offloaded = [r for r in records if r.offloaded]
        assert offloaded and all(r.tokens > 2400 for r in offloaded)
        assert all(r.tokens <= 2400 for r in records if not r.offloaded)
        for r in offloaded:
            assert backend.file(r.path).read_text() == t.messages[r.index].content
            status = result.statuses[r.index]
            assert status in (MessageStatus.OFFLOADED, MessageStatus.CLEARED)
            if status is MessageStatus.OFFLOADED:
                assert result.messages[r.index].content.startswith("Tool result too large")
        assert result.tokens_before == sum(tc.count_tokens(t.messages))
        assert result.tokens_after < result.tokens_before
    # the pipeline on a real corpus file through the library
    codex = tc.load(CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl")
    res = tc.replay(codex.messages, config, offloading=ToolResultOffloadingConfig(offloading_token_limit=200),
                    backend=MemoryBackend())
    assert any(r is not None and r.offloaded for r in res.offloads)
    out = tc.dump(codex, res.messages)
    assert b"Tool result too large" in out and tc.load(out).format == "codex"


def test_notice_message_is_utf8_safe_and_ends_with_newline() -> None:
    done = tc.offload("é" * 9000 + "\n" + "🙂" * 10, "c", "t", SMALL_LIMIT, MemoryBackend())
    assert done.offloaded and done.message.endswith("\n")
    assert done.message.count("\n1: ") == 1 and "2: " + "🙂" * 10 + "\n" in done.message
    assert len(Message("tool", done.message).content) < 2000


def test_a_fresh_backend_never_reads_another_calls_result_by_a_crafted_id(tmp_path) -> None:
    import toolclear as tc

    tc.LocalDirBackend(tmp_path).write("/large_tool_result/victim", "SECRET")
    fresh = tc.LocalDirBackend(tmp_path)
    for crafted in ("../large_tool_result/victim", "/large_tool_result/../large_tool_result/victim",
                    "large_tool_result/./victim"):
        try:
            got = fresh.read(crafted)
        except tc.OffloadError:
            continue
        assert got != "SECRET", crafted
    assert fresh.read("/large_tool_result/victim") == "SECRET"
