"""SWE-agent ``.traj`` files and mini-swe-agent trajectories.

SWE-agent keeps what the model saw in ``history``. The function-calling variant has
assistant ``tool_calls`` and ``tool`` messages (with ``tool_call_ids``). Older histories
have no tool messages at all: the environment's observation comes back as a ``user``
turn. toolclear treats a user turn that directly answers an assistant turn with an
``action`` as that action's tool result, named after the command (the action's first
word), because that is the text the clearing policy is meant for; the task statement
and demonstrations stay user messages.

mini-swe-agent's trajectory holds an OpenAI message list in ``messages``; old versions
send observations as user turns too (tool name ``bash``).
"""

from __future__ import annotations

from typing import Any

from ..model import Message, Transcript
from ._base import Builder, FormatReader, content_text
from ._doc import Document
from .chat import Conversation, _note_roles_and_pairs, _openai_calls, _role, read_openai

__all__ = ["MiniSweAgentFormat", "SweAgentFormat"]


def _swe_meta(m: dict[str, Any]) -> dict[str, Any] | None:
    """What SWE-agent's ``LastNObservations`` reads of a history entry: its
    ``message_type``, ``is_demo`` and ``tags``, and what its mask would say (the lines of
    its text, the images it holds)."""
    if not any(k in m for k in ("message_type", "is_demo", "tags")):
        # older trajectories: only the entry's own role (an observation read as a tool
        # result is a user turn to SWE-agent's history processors)
        return {"role": m["role"]} if isinstance(m.get("role"), str) else None
    content = m.get("content")
    lines = images = 0
    if isinstance(content, str):
        lines = len(content.splitlines())
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                lines += len(part["text"].splitlines())
            elif isinstance(part, dict) and part.get("type") == "image_url":
                images += 1
    tags = m.get("tags")
    return {
        "role": m.get("role") if isinstance(m.get("role"), str) else None,  # the entry's own (a result may be read as tool)
        "message_type": m.get("message_type") if isinstance(m.get("message_type"), str) else None,
        "is_demo": bool(m.get("is_demo")),
        "tags": tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        "lines": lines,
        "images": images,
    }


def _command(action: Any) -> str:
    if not isinstance(action, str) or not action.strip():
        return ""
    return action.strip().split()[0]


class SweAgentFormat(FormatReader):
    name = "swe-agent"
    label = "SWE-agent trajectory (.traj)"
    aliases = ("sweagent", "swe-agent-traj", "traj")
    where_found = "trajectories/<user>/<run>/<instance>.traj"
    tool_result = (
        "role 'tool' messages; in older histories, a user turn answering an assistant action "
        "(the observation), named after the command"
    )
    export_changes = "the 'content' of each cleared history entry"
    expects = "an object with a 'history' list of messages and 'trajectory' / 'info' / 'environment'"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        return (
            doc.kind == "json"
            and isinstance(v, dict)
            and isinstance(v.get("history"), list)
            and all(isinstance(m, dict) and "role" in m for m in v["history"])
            and (
                any(k in v for k in ("trajectory", "info", "environment", "replay_config"))
                # a history-only .traj: SWE-agent's history items carry 'agent' / 'message_type'
                or set(v) == {"history"}
                or any("message_type" in m or "agent" in m for m in v["history"])
            )
        )

    def read(self, doc: Document, source: str) -> list[Transcript]:
        history = doc.value["history"]
        b = Builder(doc)
        has_tool_role = any(isinstance(m, dict) and m.get("role") == "tool" for m in history)
        observations = 0
        previous: dict[str, Any] | None = None
        for i, m in enumerate(history):
            path = ("history", i)
            role = _role(doc, m, path)
            content = content_text(m.get("content"), doc, path + ("content",))
            slot = [path + ("content",)]
            meta = _swe_meta(m)
            if role == "tool":
                ids = m.get("tool_call_ids")
                call_id = m.get("tool_call_id") or (ids[0] if isinstance(ids, list) and ids else "")
                call_id = call_id if isinstance(call_id, str) else ""
                b.add(Message(role="tool", content=content, tool_call_id=call_id,
                              tool_name=b.tool_name_for(call_id), meta=meta), slot, path)
            elif (
                role == "user"
                and not has_tool_role
                and previous is not None
                and previous.get("role") == "assistant"
                and _command(previous.get("action"))
                and not m.get("is_demo")
            ):
                b.add(Message(role="tool", content=content, tool_name=_command(previous.get("action")), meta=meta),
                      slot, path)
                observations += 1
            else:
                calls = _openai_calls(doc, m, path) if isinstance(m.get("tool_calls"), list) else ()
                b.add(Message(role=role, content=content, tool_calls=calls, meta=meta), slot, path)
            previous = m
        if observations:
            b.notes.append(
                f"{observations} observations sent as user turns are read as tool results "
                "(tool name: the command's first word)"
            )
        _note_roles_and_pairs(b)
        info = doc.value.get("info")
        instance = info.get("instance_id") if isinstance(info, dict) else None
        return [b.build(self.name, id=str(instance or "0"), source=source, title="SWE-agent history")]


class MiniSweAgentFormat(FormatReader):
    name = "mini-swe-agent"
    label = "mini-swe-agent trajectory (.traj.json)"
    aliases = ("mini", "minisweagent")
    where_found = "<output dir>/<instance>/<instance>.traj.json"
    tool_result = "role 'tool' messages; in old versions, user turns answering the assistant (tool 'bash')"
    export_changes = "the 'content' of each cleared message ('extra.raw_output' is left as it is)"
    expects = "an object with 'messages' and a 'trajectory_format' starting with mini-swe-agent"

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if doc.kind != "json" or not isinstance(v, dict) or not isinstance(v.get("messages"), list):
            return False
        fmt = v.get("trajectory_format")
        info = v.get("info")
        return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
            isinstance(info, dict) and "mini_version" in info
        )

    def read(self, doc: Document, source: str) -> list[Transcript]:
        messages = doc.value["messages"]
        b = Builder(doc)
        items = [(("messages", i), m) for i, m in enumerate(messages)]
        if any(isinstance(m, dict) and m.get("role") == "tool" for m in messages):
            read_openai(doc, Conversation(items), b, eino=False)
        else:
            previous = None
            for path, m in items:
                role = _role(doc, m, path)
                content = content_text(m.get("content"), doc, path + ("content",))
                if role == "user" and previous == "assistant":
                    b.add(Message(role="tool", content=content, tool_name="bash"), [path + ("content",)], path)
                else:
                    b.add(Message(role=role, content=content), [path + ("content",)], path)
                previous = role
            if any(m.role == "tool" for m in b.messages):
                b.notes.append("user turns answering the assistant are read as 'bash' tool results")
            _note_roles_and_pairs(b)
        instance = doc.value.get("instance_id")
        return [b.build(self.name, id=str(instance or "0"), source=source, title="mini-swe-agent run")]
