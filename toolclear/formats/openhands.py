"""OpenHands event streams.

Three shapes: a trajectory (a JSON list of events, as saved from the UI or used as a
replay fixture), an object with a ``history`` event list, and evaluation output (JSON
Lines, one benchmark instance per line, each with its ``history``: one conversation per
instance).

Actions with ``tool_call_metadata`` are the model's tool calls (the calls of one model
response are merged into one assistant message); observations with it are the tool
results, whose ``content`` is what the model read. ``message`` actions are user or
assistant turns, the ``system`` action is the system prompt. Bookkeeping events
(agent state changes, "null" observations, recalls) are not part of the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..model import Message, ToolCall, Transcript
from ._base import Builder, FormatReader, compact_json, json_type, str_or_none
from ._doc import Document, Path

__all__ = ["OpenHandsFormat"]

_SKIP_ACTIONS = frozenset({"change_agent_state", "recall", "null"})
_SKIP_OBSERVATIONS = frozenset({"agent_state_changed", "null", "recall"})


def _is_event(e: Any) -> bool:
    return isinstance(e, dict) and ("action" in e or "observation" in e) and "source" in e


def _flat(events: list[Any], base: Path) -> Iterator[tuple[Path, Any]]:
    """(path, event) of a history: a flat event list, or the 2024 form of
    ``[action, observation]`` pairs (the resolver's ``output.jsonl``)."""
    for j, e in enumerate(events):
        if isinstance(e, list) and e and all(isinstance(x, dict) for x in e):
            for k, x in enumerate(e):
                yield base + (j, k), x
        else:
            yield base + (j,), e


def _event_id(e: dict[str, Any], path: Path) -> Any:
    """An event's id when it has a usable one, else its path (unique within the file)."""
    value = e.get("id")
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else path


def _events(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    items = [e for _, e in _flat(value, ())]
    return sum(map(_is_event, items)) * 2 >= len(items)


def _call_arguments(tcm: dict[str, Any], call_id: str, args: Any) -> str:
    """The arguments the model really sent, from the recorded model response."""
    resp = tcm.get("model_response")
    try:
        for choice in resp["choices"]:
            for call in choice["message"].get("tool_calls") or ():
                if call.get("id") == call_id:
                    value = call["function"]["arguments"]
                    return value if isinstance(value, str) else json.dumps(value)
    except (KeyError, TypeError, AttributeError):
        pass
    if isinstance(args, dict):
        args = {k: v for k, v in args.items() if k != "thought"}
    return compact_json(args) if args is not None else ""


class OpenHandsFormat(FormatReader):
    name = "openhands"
    label = "OpenHands events (trajectory JSON or evaluation output JSONL)"
    aliases = ("open-hands", "openhands-events")
    where_found = "trajectories saved from the UI; evaluation/.../output.jsonl"
    tool_result = "each observation answering a tool call (tool_call_metadata)"
    export_changes = "that observation's 'content'"
    expects = ("a list of OpenHands events (objects with 'source' and 'action' or 'observation'), an object "
               "with such a 'history', or JSON Lines of evaluation results each with a 'history'")

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if doc.kind == "json":
            return _events(v) or (isinstance(v, dict) and _events(v.get("history")))
        jl = doc.as_jsonl()
        if jl is None:
            return False
        recs = [r for _, r in jl.records()]
        return bool(recs) and all(isinstance(r, dict) and _events(r.get("history")) for r in recs)

    def read(self, doc: Document, source: str) -> list[Transcript]:
        v = doc.value
        if doc.kind == "json" and isinstance(v, list):
            return [self._read_events(doc, v, (), source, id="0", title="OpenHands trajectory")]
        if doc.kind == "json":
            iid = v.get("instance_id")
            return [self._read_events(doc, v["history"], ("history",), source, id=str(iid or "0"),
                                      title="OpenHands run")]
        jl = doc.as_jsonl()
        assert jl is not None
        out = []
        for i, rec in jl.records():
            iid = rec.get("instance_id")
            out.append(
                self._read_events(jl, rec["history"], (i, "history"), source,
                                  id=str(iid) if iid is not None else f"line {i + 1}",
                                  title=str(iid or f"line {i + 1}"), container="evaluation output")
            )
        return out

    @staticmethod
    def _answered(e: dict[str, Any], path: Path, call_of_event: dict[Any, ToolCall],
                  previous: tuple[Path, ToolCall] | None) -> ToolCall | None:
        """The synthetic call an observation answers: by its ``cause``, or as the
        second half of a 2024 ``[action, observation]`` pair."""
        cause = e.get("cause")
        if isinstance(cause, (int, str)) and not isinstance(cause, bool) and cause in call_of_event:
            return call_of_event.pop(cause)
        if previous is not None and previous[0][:-1] == path[:-1]:
            return previous[1]
        return None

    def _read_events(
        self,
        doc: Document,
        events: list[Any],
        base: Path,
        source: str,
        *,
        id: str,
        title: str,
        container: str = "",
    ) -> Transcript:
        b = Builder(doc)
        response_of: dict[int, str] = {}
        skipped = 0
        # actions of agents without function calling (2024) become calls their observations answer
        call_of_event: dict[Any, ToolCall] = {}
        previous: tuple[Path, ToolCall] | None = None
        synthetic = 0
        for path, e in _flat(events, base):
            if not isinstance(e, dict):
                b.warnings.append(f"{'/'.join(map(str, path))}: an event that is {json_type(e)}; skipped")
                continue
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
            if "action" in e:
                action = str_or_none(e.get("action"))
                text = args.get("content") if isinstance(args.get("content"), str) else e.get("message", "")
                if not isinstance(text, str):
                    text = ""
                if action == "system":
                    b.add(Message(role="system", content=text), (), path)
                elif action == "message" and tcm is None:
                    role = "user" if e.get("source") == "user" else "assistant"
                    b.add(Message(role=role, content=text), [path + ("args", "content")] if "content" in args else (), path)
                elif tcm is not None:
                    call_id = str(tcm.get("tool_call_id") or "")
                    name = str(tcm.get("function_name") or action or "")
                    call = ToolCall(id=call_id, name=name, arguments=_call_arguments(tcm, call_id, args))
                    thought = args.get("thought") if isinstance(args.get("thought"), str) else ""
                    resp = tcm.get("model_response")
                    rid = resp.get("id") if isinstance(resp, dict) else None
                    last = len(b.messages) - 1
                    if rid and response_of.get(last) == rid:
                        b.extend_calls(last, [call], thought)
                    else:
                        idx = b.add(Message(role="assistant", content=thought, tool_calls=(call,)), (), path)
                        if rid:
                            response_of[idx] = rid
                elif action in _SKIP_ACTIONS:
                    skipped += 1
                else:
                    thought = args.get("thought") if isinstance(args.get("thought"), str) else ""
                    rest = {k: v for k, v in args.items() if k != "thought"}
                    key = _event_id(e, path)
                    call = ToolCall(id=f"{action}-{'/'.join(map(str, key)) if isinstance(key, tuple) else key}",
                                    name=action or "action", arguments=compact_json(rest))
                    b.add(Message(role="assistant", content=thought, tool_calls=(call,)), (), path)
                    call_of_event[key] = call
                    synthetic += 1
                    previous = (path, call) if len(path) == len(base) + 2 else None
            else:
                obs = str_or_none(e.get("observation"))
                content = e.get("content")
                text = content if isinstance(content, str) else compact_json(content) if content is not None else ""
                if tcm is not None:
                    call_id = str(tcm.get("tool_call_id") or "")
                    name = str(tcm.get("function_name") or obs or "")
                    b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=name),
                          [path + ("content",)], path)
                elif obs in _SKIP_OBSERVATIONS:
                    skipped += 1
                elif (call := self._answered(e, path, call_of_event, previous)) is not None:
                    b.add(Message(role="tool", content=text, tool_call_id=call.id, tool_name=call.name),
                          [path + ("content",)], path)
                else:
                    b.add(Message(role="user", content=text), [path + ("content",)], path)
            if "action" not in e:
                previous = None
        if synthetic:
            b.notes.append(f"{synthetic} actions without function calling are read as tool calls, "
                           "each answered by the observation it caused")
        if skipped:
            b.notes.append(f"{skipped} bookkeeping events (agent state, recalls, empty observations) are skipped")
        return b.build(self.name, id=id, source=source, title=title, container=container)
