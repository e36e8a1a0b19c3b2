"""Gemini CLI's JSON Lines sessions read as its own loader reads them
(``loadConversationRecord`` in packages/core/src/services/chatRecordingService.ts):
records with a string id are messages (replacing an earlier one in place), ``$rewindTo``
drops from that id on (everything for an unknown id), ``$set.messages`` replaces the list."""

from __future__ import annotations

import json

import toolclear as tc

HEAD = {"sessionId": "s1", "projectHash": "h" * 64, "startTime": "2025-10-02T09:14:03.120Z"}


def session(*records: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in (HEAD, *records)).encode() + b"\n"


def user(mid: str, text: str) -> dict:
    return {"id": mid, "type": "user", "content": text}


def texts(data: bytes) -> list[str]:
    return [m.content for m in tc.load(data, "gemini-cli").messages]


def test_a_message_rewritten_keeps_its_place() -> None:
    assert texts(session(user("a", "one"), user("b", "two"), user("a", "one again"))) == ["one again", "two"]


def test_rewind_drops_from_the_id_on_and_a_message_after_it_is_appended() -> None:
    data = session(user("a", "one"), user("b", "two"), user("c", "three"), {"$rewindTo": "b"}, user("d", "four"),
                   user("b", "two again"))
    assert texts(data) == ["one", "four", "two again"]


def test_rewind_to_an_unknown_id_drops_everything_and_says_so() -> None:
    t = tc.load(session(user("a", "one"), {"$rewindTo": "zz"}, user("b", "two")), "gemini-cli")
    assert [m.content for m in t.messages] == ["two"]
    assert any("$rewindTo" in w and "Gemini CLI's own loader" in w for w in t.warnings)


def test_set_messages_is_a_checkpoint_that_replaces_the_list() -> None:
    data = session(user("a", "one"), user("b", "two"),
                   {"$set": {"messages": [user("x", "summary"), user("b", "two kept")]}}, user("c", "three"))
    assert texts(data) == ["summary", "two kept", "three"]


def test_a_set_record_with_an_id_is_a_message_as_gemini_cli_reads_it() -> None:
    # Gemini CLI checks for a message (a string id) before a $set: such a record is a message
    data = session(user("a", "one"), {"id": "a", "type": "user", "content": "replaced", "$set": {"x": 1}})
    assert texts(data) == ["replaced"]


def test_many_rewinds_stay_linear_in_the_work_done() -> None:
    """20,000 messages and 10,000 rewinds: each rewind costs what it drops (counted, not
    timed: the loader's list of keys is cut, never rebuilt)."""
    records = []
    for k in range(10_000):
        records += [user(f"m{k}", f"text {k}"), user(f"n{k}", f"more {k}"), {"$rewindTo": f"n{k}"}]
    t = tc.load(session(*records), "gemini-cli")
    assert len(t.messages) == 10_000


def _with_result(response: dict) -> bytes:
    call = {"id": "m2", "type": "gemini", "content": "", "toolCalls": [{
        "id": "c1", "name": "read", "args": {}, "status": "success",
        "result": [{"functionResponse": {"id": "c1", "name": "read", "response": response}}]}]}
    return session(user("m1", "hi"), call, {"id": "m3", "type": "gemini", "content": "done"})


def test_a_result_that_is_an_object_is_counted_whole_and_exports() -> None:
    """{"output": {...}}, a response of other fields, and an output beside a result: the
    model is sent every field, so every field is counted; clearing writes
    {"output": placeholder} and the file reads back with the placeholder."""
    for response in ({"output": {"a": 1, "b": "x" * 500}}, {"files": ["a"] * 200},
                     {"output": "short", "result": "y" * 900}):
        data = _with_result(response)
        t = tc.load(data, "gemini-cli")
        (tool,) = [m for m in t.messages if m.role == "tool"]
        assert json.loads(tool.content) == response
        r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
        back = tc.load(tc.dump(t, r.messages), "gemini-cli")
        (cleared,) = [m for m in back.messages if m.role == "tool"]
        assert cleared.content == tc.DEFAULT_PLACEHOLDER


def test_a_result_of_one_text_field_keeps_its_shape() -> None:
    t = tc.load(_with_result({"output": "o" * 300}), "gemini-cli")
    assert [m.content for m in t.messages if m.role == "tool"] == ["o" * 300]
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    out = json.loads(tc.dump(t, r.messages).decode().splitlines()[2])
    fr = out["toolCalls"][0]["result"][0]["functionResponse"]
    assert fr["response"] == {"output": tc.DEFAULT_PLACEHOLDER}
