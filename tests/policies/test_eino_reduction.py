"""Every reference vector of eino's reduction middleware must pass (REDUCTION.md §9).

The vectors were recorded by running eino's own Go code; tests/data holds a copy
(``eino_reduction_vectors.jsonl.gz`` and its README), so the tests run on a fresh clone alone.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest

import toolclear as tc
from toolclear.policies import eino_reduction as rd

from ..conftest import DATA

with gzip.open(DATA / "eino_reduction_vectors.jsonl.gz", "rt", encoding="utf-8") as _fh:
    CASES = [json.loads(line) for line in _fh]
CLEAR = [c for c in CASES if c["kind"] == "clear"]
TRUNC = [c for c in CASES if c["kind"] == "trunc"]

_UUID = re.compile(r"00000000-0000-4000-8000-(\d{12})")
_ANY_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def _no_uuids(value: Any) -> Any:
    return json.loads(_ANY_UUID.sub("{uuid}", json.dumps(value)))


class Recorder:
    """A backend that records writes in order, last write wins (eino's in-memory one)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.order: list[str] = []

    def write(self, path: str, content: str) -> str:
        self.files[path] = content
        self.order.append(path)
        return path

    def read(self, location: str) -> str:
        return self.files[location]

    def list(self) -> list[str]:
        return sorted(self.files)


def ids():
    """Deterministic real-shaped UUIDs (36 characters, so counts match eino's); the
    vectors write the n-th as {uuidn}."""
    n = 0

    def new() -> str:
        nonlocal n
        n += 1
        return f"00000000-0000-4000-8000-{n:012d}"
    return new


def placeholders(value: Any) -> Any:
    return json.loads(_UUID.sub(lambda m: "{uuid%d}" % int(m.group(1)), json.dumps(value)))


def norm_message(d: dict) -> dict:
    """Missing optional strings as "", missing lists and maps as empty (REDUCTION.md §8)."""
    out = {k: v for k, v in d.items() if v not in ("", [], {}, None)}
    if "tool_calls" in out:
        out["tool_calls"] = [{**c, "function": {k: v for k, v in (c.get("function") or {}).items() if v}}
                             for c in out["tool_calls"]]
    for key in ("user_input_multi_content", "assistant_output_multi_content"):
        if key in out:
            out[key] = [norm_part(p) for p in out[key]]
    out.setdefault("content", "")
    return out


def norm_part(p: dict) -> dict:
    return {k: (norm_part(v) if isinstance(v, dict) else v) for k, v in p.items() if v not in ("", [], {}, None)}


def config_of(case: dict) -> rd.EinoReductionConfig:
    return rd.EinoReductionConfig.from_dict(case["config"])


def _no_uuids_braced(value: Any) -> Any:
    return json.loads(re.sub(r"\{uuid\d+\}", "{uuid}", json.dumps(value)))


def test_vector_file_is_complete() -> None:
    assert len(CLEAR) == 213 and len(TRUNC) == 132
    modes = {c["mode"] for c in TRUNC}
    assert modes == {"invokable", "enhanced", "stream", "enhanced_stream"}  # nothing skipped
    assert sum("multi_content_result" in c.get("tags", ()) for c in CLEAR) > 0


@pytest.mark.parametrize("case", CLEAR, ids=[c["id"] for c in CLEAR])
def test_clear_vector(case: dict) -> None:
    config = config_of(case)
    assert config.effective() == case["effective_config"]
    new_id = ids()
    state: tuple[tc.Message, ...] = ()
    for call, expected in zip(case["calls"], case["expected"], strict=True):
        state = state + tuple(tc.Message.from_dict(m) for m in call["messages"])
        state_in = state
        backend = Recorder() if case["config"]["backend"] else None
        step = rd.clear_step(state, config, backend=backend, tools=case["tools"], new_id=new_id)
        if "error" in expected:
            assert step.error == expected["error"]
            with pytest.raises(tc.ConfigError, match=re.escape(expected["error"])):
                tc.apply(state_in, config, Recorder() if case["config"]["backend"] else None, case["tools"])
            return
        assert step.error is None
        got = placeholders([norm_message(m.to_dict()) for m in step.messages])
        assert got == [norm_message(m) for m in expected["messages"]]
        assert step.applied == expected["applied"]
        assert step.tokens_before == expected["tokens_before"]
        assert step.tokens_after == expected["tokens_after"]
        assert placeholders(step.files) == expected["files"]
        assert placeholders(list(step.write_order)) == expected["write_order"]
        if backend is not None:
            assert placeholders(backend.order) == expected["write_order"]  # the backend really received them
        # the public step, toolclear.apply, gives the same (its UUIDs are random: compared as {uuid})
        public_backend = Recorder() if case["config"]["backend"] else None
        done = tc.apply(state_in, config, public_backend, case["tools"])
        want = [norm_message(m) for m in expected["messages"]]
        assert _no_uuids([norm_message(m.to_dict()) for m in done.messages]) == _no_uuids_braced(want)
        assert _no_uuids(dict(done.files)) == _no_uuids_braced(expected["files"])
        if public_backend is not None:
            assert _no_uuids(public_backend.order) == _no_uuids_braced(expected["write_order"])
        state = step.messages  # our own output is the next call's state, as in an agent


@pytest.mark.parametrize("case", TRUNC, ids=[c["id"] for c in TRUNC])
def test_trunc_vector(case: dict) -> None:
    config = config_of(case)
    backend = Recorder() if case["config"]["backend"] else None
    expected = case["expected"]
    given = case["result"] if "result" in case else case["chunks"]
    if "construct_error" in expected:
        with pytest.raises(tc.ConfigError, match="backend must be set"):
            tc.truncate(given, case["call_id"], case["tool_name"], config, backend, mode=case["mode"])
        return
    done = tc.truncate(given, case["call_id"], case["tool_name"], config, backend, mode=case["mode"],
                       new_id=ids())
    want = expected["result"] if "result" in case else expected.get("chunks", [])  # an empty stream: no key
    got = placeholders(done.result)
    if case["mode"] == "enhanced":
        assert [norm_part(p) for p in got] == [norm_part(p) for p in want]
    elif case["mode"] == "enhanced_stream":
        assert [[norm_part(p) for p in c] for c in got] == [[norm_part(p) for p in c] for c in want]
    else:
        assert got == want
    assert placeholders(done.files) == expected["files"]
    assert placeholders(list(done.write_order)) == expected["write_order"]
    if backend is not None:
        assert placeholders(backend.files) == expected["files"]


REPLAY_CONFIGS = [
    rd.EinoReductionConfig(max_tokens_for_clear=400, max_length_for_trunc=600),
    rd.EinoReductionConfig(max_tokens_for_clear=400, clear_retention_suffix_limit=2, clear_at_least_tokens=60,
                           max_length_for_trunc=300, clear_exclude_tools=("grep",)),
    rd.EinoReductionConfig(max_tokens_for_clear=1, skip_truncation=True, tool_config={"bash": {"skip_clear": True}}),
    rd.EinoReductionConfig(max_tokens_for_clear=200, clear_retention_suffix_limit=-1, skip_truncation=True),
]


@pytest.mark.parametrize("k", range(len(REPLAY_CONFIGS)))
def test_replay_equals_eino_step_by_step_with_a_backend(k: int) -> None:
    """The fast replay (each round worked once) sends, saves and reports exactly what
    eino's own step sends when called before every model call with the state carried:
    re-clears after plain replies, rewritten files, fresh UUIDs for empty ids."""
    import random as _random

    from .test_langchain import generate

    config = REPLAY_CONFIGS[k]
    rng = _random.Random(k)
    for _ in range(30):
        msgs = generate(rng)
        if rng.random() < 0.3:  # some calls without ids
            msgs = [m if m.role != "tool" or rng.random() > 0.3 else tc.Message("tool", m.content, tool_name=m.tool_name)
                    for m in msgs]
            msgs = [tc.Message(m.role, m.content, tool_calls=tuple(
                tc.ToolCall("", c.name, c.arguments) if not any(
                    r.role == "tool" and r.tool_call_id == c.id for r in msgs) else c for c in m.tool_calls))
                if m.tool_calls else m for m in msgs]
        backend = None if config.skip_truncation else Recorder()
        rp = tc.replay(msgs, config, backend=backend)
        # eino itself: truncation as each tool returns, then the clear phase before each call
        ref_backend = None if config.skip_truncation else Recorder()
        state: tuple[tc.Message, ...] = ()
        files: dict[str, str] = {}
        for step in rp.steps:
            for m in msgs[len(state): step.call_index]:
                if m.role == "tool" and not config.skip_truncation:
                    done = tc.truncate(m.content, m.tool_call_id, m.tool_name, config, ref_backend)
                    files.update(done.files)
                    m = m.with_content(done.result) if done.truncated else m
                state += (m,)
            one = rd.clear_step(state, config, backend=ref_backend)
            files.update(one.files)
            state = one.messages
            assert step.context_tokens == sum(tc.count_tokens(state))
        assert _no_uuids([m.to_dict() for m in rp.messages]) == _no_uuids([m.to_dict() for m in state])
        assert _no_uuids(dict(rp.files)) == _no_uuids(files)
        if ref_backend is not None:
            assert _no_uuids(backend.files) == _no_uuids(ref_backend.files)


def test_the_overwrite_is_reported() -> None:
    """REDUCTION.md C5 on a run: a plain reply, then more rounds; the re-clear writes the
    placeholder over a saved original, and the result says so."""
    msgs = [tc.Message("user", "go")]
    for k in range(6):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", "read_file", "{}"),)),
                 tc.Message("tool", f"result {k} " + "x" * 400, tool_call_id=f"c{k}", tool_name="read_file")]
        if k == 1:
            msgs += [tc.Message("assistant", "done with part one"), tc.Message("user", "go on")]
    backend = Recorder()
    rp = tc.replay(msgs, rd.EinoReductionConfig(max_tokens_for_clear=150, skip_truncation=False,
                                                max_length_for_trunc=10_000), backend=backend)
    # rounds after the plain reply (c2 on) are cleared again at each later call: c2's file
    # first holds its result, then the placeholder; c0 and c1, before the reply, keep theirs
    assert rp.notes and "overwrote" in rp.notes[0] and "/tmp/clear/c2" in rp.notes[0]
    assert backend.files["/tmp/clear/c2"].startswith("<persisted-output>Tool result saved to: /tmp/clear/c2")
    assert backend.order.count("/tmp/clear/c2") == 2 and backend.files["/tmp/clear/c0"].startswith("result 0")


def test_replay_without_a_backend_needs_skip_truncation() -> None:
    with pytest.raises(tc.ConfigError, match="backend must be set"):
        tc.replay([tc.Message("user", "x")], rd.EinoReductionConfig())


def test_per_call_replay_names_only_messages_whose_text_changed() -> None:
    """persist=False runs eino's reduction afresh before every call: a call's changed
    messages are those the model sees differently from the previous call, not the
    assistant messages eino only flags as processed."""
    msgs = [tc.Message("user", "go")]
    for k in range(8):
        msgs += [tc.Message("assistant", f"step {k}", tool_calls=(tc.ToolCall(f"c{k}", "read", "{}"),)),
                 tc.Message("tool", f"result {k} " + "x" * 400, tool_call_id=f"c{k}", tool_name="read")]
    msgs.append(tc.Message("assistant", "done"))
    config = tc.EinoReductionConfig(skip_truncation=True, max_tokens_for_clear=300, clear_retention_suffix_limit=1)
    result = tc.replay(msgs, config, persist=False)
    previous: list[tc.Message] = []
    for step in result.model_call_steps:
        view = list(tc.apply(msgs[:step.call_index], config).messages)
        was = previous + list(msgs[len(previous):step.call_index])
        differs = {i for i, (a, b) in enumerate(zip(was, view))
                   if (a.content, a.tool_calls) != (b.content, b.tool_calls)}
        assert set(step.cleared_indices) == differs, step.call_index
        previous = view
    assert any(step.cleared_indices for step in result.steps)


def test_the_retention_end_is_found_incrementally_as_the_reference_walks_it() -> None:
    """The replay keeps the calling messages as the state grows instead of walking back
    from the end at every call (quadratic on a run whose later calls carry no tool
    calls); at every length it finds what reduction.go's walk finds."""
    import random

    from toolclear.policies._eino_reduction_parts import retention_end

    rng = random.Random(5)
    for trial in range(60):
        retention = rng.choice([0, 1, 2, 3, 5])
        engine = rd.ReductionEngine((), rd.EinoReductionConfig(skip_truncation=True), None, (), False)
        state: list[tc.Message] = []
        for i in range(rng.randint(0, 80)):
            kind = rng.random()
            if kind < 0.3:
                m = tc.Message("assistant", "", tool_calls=(tc.ToolCall(id=f"c{i}", name="ls"),))
            elif kind < 0.5:
                m = tc.Message("assistant", "thinking aloud")
            elif kind < 0.8:
                m = tc.Message("tool", "out", tool_call_id=f"c{i - 1}")
            else:
                m = tc.Message("user", "go on")
            state.append(m)
            if rng.random() < 0.5:
                assert engine._retention_end(state, retention) == retention_end(state, retention), (trial, i)
        assert engine._retention_end(state, retention) == retention_end(state, retention)


def test_a_flagged_message_writes_what_its_dict_with_the_flag_would() -> None:
    """Flagging a message that keeps no source dict (read without one, or kept by its
    shape) makes no copy of it: its ``_raw`` is built key by key when read. Written back
    it is the message's dict with eino's flag in ``extra``, before and after a change."""
    from toolclear.model import Message, ShapedRaw, ToolCall
    from toolclear.policies._eino_reduction_parts import PROCESSED_FLAG, _flagged, is_flagged

    read = [Message("assistant", "x", tool_calls=(ToolCall("a", "ls", "{}"),)),
            Message("tool", "r", tool_call_id="a", tool_name="ls"), Message("user", ""),
            Message.from_dict({"content": "c", "role": "user", "name": "n"}),
            Message.from_dict({"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "ls"}}]})]
    for m in read:
        flagged = _flagged(m)
        assert isinstance(flagged._raw, ShapedRaw) and is_flagged(flagged) and _flagged(flagged) is flagged
        want = {**m.to_dict(), "extra": {PROCESSED_FLAG: True}}
        for got, expected in ((flagged.to_dict(), want), (flagged.with_content("[gone]").to_dict(),
                                                           {**want, "content": "[gone]"})):
            assert got == expected and list(got) == list(expected)
    held = Message.from_dict({"role": "tool", "content": "r", "extra": {"k": 1}})
    assert _flagged(held)._raw == {"role": "tool", "content": "r", "extra": {"k": 1, PROCESSED_FLAG: True}}
