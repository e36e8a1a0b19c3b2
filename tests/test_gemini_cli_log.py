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
