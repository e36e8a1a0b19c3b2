"""The sessions listing's usage-only read of Claude Code logs (``session_summary``)
against the full read (``read_session``): the same summary on every Claude Code log the
tests hold, and on thousands of random mutations of them (lines dropped, repeated,
swapped, cut; fields of other types; subagent lines, compactions, streamed replies,
files that are not quite Claude Code). The usage-only read must either give the full
read's summary or hand the file to it."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import msgspec  # noqa: F401  (the usage-only read needs it: a missing msgspec fails here, not skips)
import pytest

import toolclear.corpus.sessions as sessions_module
from toolclear.corpus.sessions import (
    SessionFile,
    read_session,
    session_summaries,
    session_summary,
)
from toolclear.formats.claude_code_usage import session_calls

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
REAL = sorted((DATA / "corpus" / "claude_code").glob("*.jsonl")) + sorted((DATA / "formats").glob("claude-code*.jsonl"))
sys.path.insert(0, str(DATA / "bad"))
import make_bad  # noqa: E402


def _file(path: Path) -> SessionFile:
    return SessionFile("Claude Code", str(path), 1_700_000_000.0)


def _same(path: Path) -> bool:
    """Whether the usage-only read was used; asserts it agrees with the full read."""
    f = _file(path)
    full = read_session(f)[0]
    fast = session_summary(f)
    assert fast == full, path.name
    assert fast.call_dollars == full.call_dollars, path.name
    return session_calls(path.read_bytes()) is not None


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:50])
def test_every_real_claude_code_log_reads_the_same_and_without_the_full_read(path: Path) -> None:
    assert _same(path)


def test_the_logs_made_to_break_readers_read_the_same(tmp_path: Path) -> None:
    made = {**make_bad.small(), **make_bad.big()}
    tried = 0
    for name, data in made.items():
        if "claude" in name:
            p = tmp_path / name
            p.write_bytes(data)
            _same(p)
            tried += 1
    assert tried >= 3


def _lines() -> list[list[bytes]]:
    # the small real logs (mutating the large ones costs time and finds nothing new)
    return [p.read_bytes().splitlines() for p in REAL if p.stat().st_size < 800_000]


def _blocks(rec: dict) -> list[dict]:
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _set_in_message(key: str, *values: object):
    def edit(rec: dict, rng: random.Random, ids: list[str]) -> dict:
        if isinstance(rec.get("message"), dict):
            rec["message"][key] = rng.choice(values)
        return rec
    return edit


def _set(key: str, *values: object):
    def edit(rec: dict, rng: random.Random, ids: list[str]) -> dict:
        rec[key] = rng.choice(values)
        return rec
    return edit


def _set_in_block(keys: list[str], *values: object):
    def edit(rec: dict, rng: random.Random, ids: list[str]) -> dict:
        blocks = _blocks(rec)
        if blocks:
            rng.choice(blocks)[rng.choice(keys)] = rng.choice(values)
        return rec
    return edit


def _drop(key: str, in_message: bool = False):
    def edit(rec: dict, rng: random.Random, ids: list[str]) -> dict:
        target = rec.get("message") if in_message else rec
        if isinstance(target, dict):
            target.pop(key, None)
        return rec
    return edit


def _compaction(rec: dict, rng: random.Random, ids: list[str]) -> dict:
    return {"type": "system", "subtype": "compact_boundary", "uuid": f"cb{rng.random()}", "parentUuid": None,
            "logicalParentUuid": rng.choice(ids or ["x"]), "compactMetadata": {"trigger": "auto", "preTokens": 9}}


def _extra_block(rec: dict, rng: random.Random, ids: list[str]) -> dict:
    msg = rec.get("message")
    if isinstance(msg, dict) and isinstance(msg.get("content"), list):
        msg["content"].append(rng.choice(["bare string", 3, {"type": "tool_result", "tool_use_id": "t", "content": "x"}]))
    return rec


def _parent(rec: dict, rng: random.Random, ids: list[str]) -> dict:
    rec["parentUuid"] = rng.choice(ids + ["nowhere"])
    return rec


def _not_an_event(rec: dict, rng: random.Random, ids: list[str]) -> object:
    return rng.choice([[1, 2], "a line", 5, None])


EDITS = [
    _set("isSidechain", True), _drop("parentUuid"), _parent, _drop("uuid"), _set("uuid", None, 3, "dup"),
    _set_in_message("content", "text", None, {"a": 1}, [], 5), _drop("content", in_message=True),
    _set("message", "a string", None, [1], 3),
    _set_in_message("id", "msg_same", None, 12),  # merge replies, or none
    _set_in_block(["id", "tool_use_id", "name"], 7, None, "toolu_x", ["l"]),
    _set_in_block(["input", "content"], 7, True, {"k": "v"}, "s", None, [{"type": "text"}]),
    _set_in_block(["type"], "tool_use", "tool_result", "text", "thinking", "compaction", 4),
    _set_in_message("usage", None, "u", {"input_tokens": 10, "output_tokens": 2**70},
                    {"input_tokens": 1.5, "cache_read_input_tokens": -3},
                    {"input_tokens": 5, "output_tokens": 7, "cache_creation": {"ephemeral_1h_input_tokens": 3},
                     "iterations": [{"type": "compaction", "input_tokens": 9, "output_tokens": 1}]}),
    _set_in_message("model", "<synthetic>", "claude-opus-4-1", None, 4, "gpt-5"),
    _set_in_message("extra", {"deep": [[[[{"x": "\u00e9\u4e2d\U0001f600"}]]]], "n": 1e300}),
    _compaction, _set("subtype", "compact_boundary"), _extra_block, _not_an_event,
    _set("type", "assistant", "user", "progress", None, 3, "summary"), _set("payload", {"type": "codex"}),
    _set("requestId", None, 9, "req_same"), _set("timestamp", None, 5, "2026-01-01T00:00:00Z"),
]
"""One field of one event changed to something a log could hold."""


def _ids(lines: list[bytes]) -> list[str]:
    ids = []
    for raw in lines[:400]:
        try:
            u = json.loads(raw).get("uuid")
        except (ValueError, AttributeError):
            continue
        if isinstance(u, str):
            ids.append(u)
    return ids


def _one_change(lines: list[bytes], rng: random.Random, ids: list[str]) -> list[bytes]:
    k = rng.randrange(len(lines))
    op = rng.randrange(14)
    if op == 0:
        del lines[k]
    elif op == 1:
        lines.insert(k, lines[rng.randrange(len(lines))])  # a repeated line (a resumed session)
    elif op == 2 and k + 1 < len(lines):
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    elif op == 3:
        lines[k] = lines[k][: rng.randrange(len(lines[k]) + 1)]  # cut off (a log being written)
    elif op == 4:
        lines.insert(k, rng.choice([b"", b"   ", b"\t", b"\x1c", b"{} {}", b"NaN", b'{"a": NaN}']))
    elif op == 5:  # a run of subagent lines: a conversation of its own, which may hold the most results
        for j in range(k, min(len(lines), k + rng.randint(2, 60))):
            lines[j] = lines[j].replace(b'"isSidechain":false', b'"isSidechain":true')
    elif op == 6:
        lines = lines[: rng.randint(1, 40)]  # a short session: conversations tie
    elif op == 7:  # compacted last, and what follows holds a message or none
        after = {"type": "user", "uuid": "after", "parentUuid": "boundary", "isSidechain": False,
                 "message": {"role": "user", "content": rng.choice([[], "go on", [{"type": "text", "text": "x"}]])}}
        lines += [json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "boundary",
                              "logicalParentUuid": ids[-1] if ids else None}).encode(), json.dumps(after).encode()]
    elif op == 8:  # JSON only Python reads: the full read takes the line, NaN and all
        lines[k] = lines[k].replace(b'"output_tokens":', b'"output_tokens":NaN,"was":', 1)
    else:
        try:
            rec = json.loads(lines[k])
        except ValueError:
            return lines
        if isinstance(rec, dict):
            lines[k] = json.dumps(rng.choice(EDITS)(rec, rng, ids), ensure_ascii=rng.random() < 0.5).encode()
    return lines


def _mutate(lines: list[bytes], rng: random.Random) -> bytes:
    lines, ids = list(lines), _ids(lines)
    for _ in range(rng.randint(1, 6)):
        if lines:
            lines = _one_change(lines, rng, ids)
    data = b"\n".join(lines) + rng.choice([b"\n", b"", b"\n\n"])
    if rng.random() < 0.05:
        data = b"\xef\xbb\xbf" + data
    if rng.random() < 0.05:
        data = data.replace(b"\n", b"\r\n")
    return data


@pytest.mark.parametrize("seed", range(8))
def test_any_mutation_of_a_real_log_reads_the_same_or_is_left_to_the_full_read(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    logs = _lines()
    fast = 0
    for n in range(60):
        p = tmp_path / f"m{n}.jsonl"
        p.write_bytes(_mutate(rng.choice(logs), rng))
        fast += _same(p)
    # most mutations leave a log the usage-only read takes: the test exercises it, not only the hand-over
    assert fast >= 15, fast


def _copies(folder: Path, count: int, kinds: int) -> list[SessionFile]:
    """``count`` session files in ``folder`` (``0.jsonl``, ``1.jsonl``, ...), copies of the
    first ``kinds`` real logs in turn."""
    files = []
    for k in range(count):
        q = folder / f"{k}.jsonl"
        q.write_bytes(REAL[k % kinds].read_bytes())
        files.append(_file(q))
    return files


def test_a_listing_shared_among_processes_is_the_listing_read_here(tmp_path: Path, monkeypatch) -> None:
    sessions = sessions_module
    files = _copies(tmp_path, 48, 4)
    files.append(SessionFile("Claude Code", str(tmp_path / "gone.jsonl"), 0.0))  # deleted since it was listed
    used = []
    real_context = sessions._pool_context

    def context(found):
        ctx = real_context(found)
        used.append(ctx)
        return ctx

    monkeypatch.setattr(sessions, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(sessions, "_pool_context", context)
    shared = session_summaries(files, jobs=2)
    assert used and used[0] is not None  # the workers really read them
    here = session_summaries(files, jobs=1)
    assert len(used) == 1  # one job: no pool asked for
    assert shared == here
    assert [s.path for s in shared] == [f.path for f in files]
    assert shared[-1].error and "no such file" in shared[-1].error


_READ = sessions_module._calls_or_summary


def _dies_in_a_worker(f: SessionFile):
    """A worker killed mid-listing (out of memory): the listing is read here instead."""
    if str(os.getpid()) != os.environ.get("TOOLCLEAR_TEST_PARENT"):
        os._exit(9)
    return _READ(f)


def test_a_worker_that_dies_leaves_the_listing_read_here(tmp_path: Path, monkeypatch) -> None:
    files = _copies(tmp_path, 6, 6)
    here = []

    def read_here(f: SessionFile):
        here.append(f)
        return session_summary(f)

    monkeypatch.setenv("TOOLCLEAR_TEST_PARENT", str(os.getpid()))  # (a spawned worker's module is new)
    monkeypatch.setattr(sessions_module, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(sessions_module, "_calls_or_summary", _dies_in_a_worker)
    monkeypatch.setattr(sessions_module, "session_summary", read_here)
    got = session_summaries(files, jobs=2)
    monkeypatch.undo()
    assert here == files  # the pool broke, and this process read every file
    assert got == session_summaries(files, jobs=1)
    assert all(not s.error for s in got)


def _live_workers() -> set[int]:
    """This process's children that are still running (not exited), but multiprocessing's
    resource tracker, which outlives every pool by design. Read from /proc: the pool's
    own bookkeeping can list a worker another thread already reaped."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            cmdline = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields.get("PPid", "0")) == os.getpid() and not fields.get("State", "").strip().startswith("Z") \
                and b"resource_tracker" not in cmdline:
            found.add(int(status.parent.name))
    return found


def _slow_after_the_first(f: SessionFile):
    """A worker busy for a long time on every file but the first."""
    import time

    if not Path(f.path).name.startswith("0."):
        time.sleep(60)
    return _READ(f)


def test_ctrl_c_during_a_shared_listing_leaves_no_worker_behind(tmp_path: Path, monkeypatch) -> None:
    files = _copies(tmp_path, 16, 4)  # (the first, 0.jsonl, is the one read quickly)

    def interrupted(f: SessionFile, calls: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sessions_module, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(sessions_module, "_summary_of", interrupted)
    monkeypatch.setattr(sessions_module, "_calls_or_summary", _slow_after_the_first)
    before = _live_workers()
    with pytest.raises(KeyboardInterrupt):
        session_summaries(files, jobs=2)
    assert _live_workers() <= before
