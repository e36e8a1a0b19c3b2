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


def gemini(mid: str, text: str = "", calls: tuple[tuple[str, str, str], ...] = (), tokens: int = 0) -> dict:
    rec: dict = {"id": mid, "type": "gemini", "content": text, "model": "gemini-2.5-pro",
                 "toolCalls": [{"id": cid, "name": name, "args": {"path": cid},
                                "result": [{"functionResponse": {"id": cid, "name": name,
                                                                 "response": {"output": out}}}],
                                "status": "success"} for cid, name, out in calls]}
    if tokens:
        rec["tokens"] = {"input": tokens, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": tokens + 10}
    return rec


SNAPSHOT = "<state_snapshot>\n<overall_goal>fix the bug</overall_goal>\n</state_snapshot>"


def compressed_session(*after: dict) -> bytes:
    """A session in the records Gemini CLI writes around a chat compression (tryCompressChat
    starts a chat on [environment, summary, acknowledgement, kept turns] and the recorder's
    updateMessagesFromHistory appends them as one ``$set.messages``)."""
    before = [user("env1", "This is the Gemini CLI. We are setting up the context."), user("u1", "fix the bug"),
              gemini("g1", calls=(("r1", "read_file", "x" * 4000),), tokens=2000),
              gemini("g2", calls=(("r2", "read_file", "y" * 4000),), tokens=3000),
              user("u2", "now the tests"), gemini("g3", "running them", tokens=4000)]
    compacted = [user("env2", "This is the Gemini CLI. We are setting up the context."), user("s1", SNAPSHOT),
                 {"id": "a1", "type": "gemini", "content": "Got it. Thanks for the additional context!"},
                 user("u2", "now the tests"), gemini("g3", "running them", tokens=4000)]
    return session(*before, {"$set": {"messages": compacted, "lastUpdated": "2026-08-01T00:00:00Z"}},
                   gemini("g4", calls=(("r3", "run_shell_command", "ok"),), tokens=1200), *after)


def test_a_chat_compression_keeps_what_it_left_out_and_records_the_compaction() -> None:
    t = tc.load(compressed_session(), "gemini-cli")
    contents = [m.content for m in t.messages]
    assert "x" * 4000 in contents and SNAPSHOT in contents  # the history before it and the summary
    assert any("chat compression" in n for n in t.notes)
    r = tc.recorded(t)
    (c,) = r.compactions
    assert c.source == "gemini-cli compression" and c.trigger == ""
    dropped = {t.messages[i].content for i in c.dropped}
    assert {"x" * 4000, "y" * 4000, "fix the bug"} <= dropped
    assert "now the tests" not in dropped and "running them" not in dropped  # the turns it kept
    assert c.summary_tokens > 0 and c.tokens_before == 4000  # the last recorded prompt before it
    kept_env = contents.index("This is the Gemini CLI. We are setting up the context.", 1)
    assert kept_env not in c.dropped  # the new environment turn is part of the compacted context


def test_a_checkpoint_after_a_compression_keeps_the_history_it_left_out() -> None:
    masked = [user("env2", "This is the Gemini CLI. We are setting up the context."), user("s1", SNAPSHOT),
              {"id": "a1", "type": "gemini", "content": "Got it. Thanks for the additional context!"},
              user("u2", "now the tests"), gemini("g3", "running them", tokens=4000),
              gemini("g4", calls=(("r3", "run_shell_command", "<masked>"),), tokens=1200)]
    t = tc.load(compressed_session({"$set": {"messages": masked}}), "gemini-cli")
    contents = [m.content for m in t.messages]
    assert "x" * 4000 in contents and "<masked>" in contents and "ok" not in contents
    assert len(tc.recorded(t).compactions) == 1


def test_a_session_without_a_snapshot_is_a_plain_checkpoint() -> None:
    t = tc.load(compressed_session(), "gemini-cli")
    plain = tc.load(session(user("a", "one"), {"$set": {"messages": [user("b", "two")]}}), "gemini-cli")
    assert [m.content for m in plain.messages] == ["two"] and not tc.recorded(plain).compactions
    assert tc.losses(tc.recorded(t)).judged


def test_clearing_a_compressed_session_writes_every_copy_and_reads_back() -> None:
    t = tc.load(compressed_session(), "gemini-cli")
    r = tc.apply(t, tc.parse_policy("eino:tool_result_token_threshold=10,keep_recent_tokens=5"))
    back = tc.load(tc.dump(t, r.messages), "gemini-cli")
    assert [m.content for m in back.messages] == [m.content for m in r.messages]
    assert len(tc.recorded(back).compactions) == 1
