"""OpenHands event streams.

Three shapes: a trajectory (a JSON list of events, as saved from the UI or used as a
replay fixture), an object with a ``history`` event list, and evaluation or resolver
output (JSON Lines, one benchmark instance or issue per line, each with its ``history``:
one conversation per line; a run that failed early has an empty one). 2024 files may
hold ``[action, observation]`` pairs and events without ``source``.

Actions with ``tool_call_metadata`` are the model's tool calls (the calls of one model
response are merged into one assistant message); observations with it are the tool
results, whose ``content`` is what the model read. ``message`` actions are user or
assistant turns, the ``system`` action is the system prompt, a recall observation
(workspace context) a user turn. Bookkeeping events (agent state changes, "null"
events, recall requests) are not part of the conversation. Each message notes its place
in the agent's view of events, which OpenHands' observation masking counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..model import Message, ToolCall, Transcript
from ._base import Builder, FormatReader, as_dict, compact_json, json_type, str_or, str_or_none
from ._doc import Document, Path

__all__ = ["OpenHandsFormat"]

_SKIP_ACTIONS = frozenset({"change_agent_state", "recall", "null"})
_SKIP_OBSERVATIONS = frozenset({"agent_state_changed", "null"})
_OUT_OF_VIEW_ACTIONS = frozenset({"change_agent_state", "null"})
_OUT_OF_VIEW_OBSERVATIONS = frozenset({"agent_state_changed", "null"})


def _in_view(e: dict[str, Any]) -> bool:
    """Whether OpenHands' agent keeps the event in its view (``StateTracker``'s filter
    drops null events, agent-state changes and hidden events); every kept event counts
    once toward the observation-masking window."""
    if str_or_none(e.get("action")) in _OUT_OF_VIEW_ACTIONS or (
            "action" not in e and str_or_none(e.get("observation")) in _OUT_OF_VIEW_OBSERVATIONS):
        return False
    return not any(d.get("hidden") is True for d in (e, as_dict(e.get("args")), as_dict(e.get("extras"))))


_V1_KINDS = frozenset({
    "ActionEvent", "ObservationEvent", "MessageEvent", "SystemPromptEvent", "UserRejectObservation",
    "AgentErrorEvent", "CondensationSummaryEvent", "Condensation", "CondensationRequest",
    "ConversationStateUpdateEvent", "PauseEvent", "TokenEvent", "ConversationErrorEvent",
})


def _is_v1(e: Any) -> bool:
    """An event of OpenHands V1 (software-agent-sdk): typed by its ``kind``."""
    return isinstance(e, dict) and str_or_none(e.get("kind")) in _V1_KINDS


_EVENT_FIELDS = ("source", "args", "extras", "message", "content", "cause", "thought", "command", "code")


_META = frozenset({"action", "observation", "id", "timestamp", "source", "cause", "message", "tool_call_metadata",
                   "llm_metrics", "is_confirmed", "security_risk", "keep_prompt", "kernel_init_code", "blocking",
                   "hidden", "confirmation_state", "images_urls", "wait_for_response"})
"""An action's own fields that are not what the model asked for (runtime bookkeeping)."""


def _args(e: dict[str, Any], path: Path) -> tuple[dict[str, Any], Path]:
    """An action's arguments and where they are: its ``args``, or, in events written
    without one (the resolver's output of late 2024: the action's fields at the top),
    the action's own fields but its bookkeeping."""
    if isinstance(e.get("args"), dict):
        return e["args"], path + ("args",)
    if "args" in e:
        return {}, path + ("args",)
    top = {k: v for k, v in e.items() if k not in _META}
    if "wait_for_response" in e:
        top["wait_for_response"] = e["wait_for_response"]
    return top, path


def _is_event(e: Any) -> bool:
    """An event: V1's typed one, or an action / observation (named by a string) with one
    of the fields events carry; early 2024 files write events without ``source``."""
    if _is_v1(e):
        return True
    if not isinstance(e, dict):
        return False
    named = isinstance(e.get("action"), str) or isinstance(e.get("observation"), str)
    return named and any(k in e for k in _EVENT_FIELDS)


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
    resp: Any = tcm.get("model_response")
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


def _v1_text(value: Any, path: Path) -> tuple[str, list[Path]]:
    """(text, paths of its strings) of V1 content: a TextContent, a list of them, or a string."""
    if isinstance(value, str):
        return value, [path]
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"], [path + ("text",)]
        return compact_json(value), []
    if isinstance(value, list):
        texts, paths = [], []
        for j, part in enumerate(value):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                if part["text"]:  # an emptied part (see _v1_observation) adds nothing
                    texts.append(part["text"])
                paths.append(path + (j, "text"))
            else:
                texts.append(compact_json(part))
        return "\n".join(texts), paths
    return "", []


def _v1_observation(obs: dict[str, Any], path: Path) -> tuple[str, list[Path], list[Path]]:
    """(text, slot, blanks) of a V1 observation: its ``content`` parts (newer SDKs) or its
    ``output`` string (older ones). The first text part takes a new text, the others are
    emptied, so the observation stays a list of text parts."""
    if "content" in obs:
        text, paths = _v1_text(obs["content"], path + ("content",))
        return text, paths[:1], paths[1:]
    for key in ("output", "text", "result"):
        if isinstance(obs.get(key), str):
            return obs[key], [path + (key,)], []
    return compact_json(obs), [], []


class _EventReader:
    """Events of OpenHands before V1, one at a time: actions with ``tool_call_metadata``
    are calls (those of one model response join one message), observations with it are
    their results; without function calling (2024), an action becomes a call that the
    observation it caused answers."""

    def __init__(self, b: Builder, base: Path) -> None:
        self.b = b
        self.base = base
        self.response_of: dict[int, str] = {}
        self.call_of_event: dict[Any, ToolCall] = {}
        self.previous: tuple[Path, ToolCall] | None = None  # the action of a [action, observation] pair
        self.skipped = 0
        self.synthetic = 0
        self.view = 0  # events of the agent's view so far
        self.position: dict[int, int] = {}  # message -> view position of its event
        self.observed: set[int] = set()  # messages that are observations
        self.event_of: dict[int, Any] = {}  # message -> the id of the event it was read from
        self.summary: int | None = None  # the message holding the latest condensation's summary

    def event(self, e: dict[str, Any], path: Path) -> None:
        """Read one event, noting where it stands in the agent's view."""
        before = len(self.b.messages)
        if "action" in e:
            self.action(e, path)
        else:
            self.observation(e, path)
        if len(self.b.messages) > before:
            self.position[before] = self.view
            if "action" not in e:
                self.observed.add(before)
            for k in range(before, len(self.b.messages)):
                self.event_of.setdefault(k, e.get("id"))
        if _in_view(e):
            self.view += 1

    def placed(self) -> None:
        """Give each message its view position and the view's length up to the next
        message (what OpenHands' masking window counts)."""
        b = self.b
        starts = [self.position.get(i, -1) for i in range(len(b.messages))]
        for i in range(len(starts)):  # a message without an event of its own shares the last one's place
            if starts[i] < 0:
                starts[i] = starts[i - 1] if i else 0
        ends = starts[1:] + [self.view]
        for i, m in enumerate(b.messages):
            b.messages[i] = replace(m, meta={**(m.meta or {}), "openhands_event": starts[i], "openhands_view": ends[i],
                                             "openhands_observation": i in self.observed})

    def action(self, e: dict[str, Any], path: Path) -> None:
        b = self.b
        args, args_path = _args(e, path)
        self.previous = None
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        action = str_or_none(e.get("action"))
        text = str_or(args.get("content"), str_or(e.get("message")))
        thought = str_or(args.get("thought"))
        if action == "system":
            b.add(Message(role="system", content=text), (), path)
        elif action == "condensation":
            self.condensation(args, args_path, path)
        elif action == "message" and tcm is None:
            source = e.get("source")
            if source is None:  # early 2024 events name no source: the agent's messages ask for a reply
                role = "assistant" if args.get("wait_for_response") is True else "user"
            else:
                role = "user" if source == "user" else "assistant"
            b.add(Message(role=role, content=text), [args_path + ("content",)] if "content" in args else (), path)
        elif tcm is not None:
            call_id = str(tcm.get("tool_call_id") or "")
            call = ToolCall(id=call_id, name=str(tcm.get("function_name") or action or ""),
                            arguments=_call_arguments(tcm, call_id, args))
            rid = str_or_none(as_dict(tcm.get("model_response")).get("id"))
            last = len(b.messages) - 1
            if rid and self.response_of.get(last) == rid:
                b.extend_calls(last, [call], thought)
            else:
                idx = b.add(Message(role="assistant", content=thought, tool_calls=(call,)), (), path)
                if rid:
                    self.response_of[idx] = rid
        elif action in _SKIP_ACTIONS:
            self.skipped += 1
        else:
            key = _event_id(e, path)
            call = ToolCall(id=f"{action}-{'/'.join(map(str, key)) if isinstance(key, tuple) else key}",
                            name=action or "action",
                            arguments=compact_json({k: v for k, v in args.items() if k != "thought"}))
            b.add(Message(role="assistant", content=thought, tool_calls=(call,)), (), path)
            self.call_of_event[key] = call
            self.synthetic += 1
            self.previous = (path, call)

    def condensation(self, args: dict[str, Any], args_path: Path, path: Path) -> None:
        """A ``CondensationAction``: the events it forgets leave the agent's view (an id
        list, or a first and last id) and its summary, if any, takes the latest one's
        place. Read as a compaction that names what it dropped."""
        ids = args.get("forgotten_event_ids")
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        if isinstance(ids, list):
            forgotten = {i for i in ids if isinstance(i, int) and not isinstance(i, bool)}
        elif isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool) \
                and not isinstance(end, bool):
            forgotten = set(range(start, end + 1)) if end - start < 10_000_000 else set()
        else:
            forgotten = set()
        summary = args.get("summary") if isinstance(args.get("summary"), str) else None
        dropped = [k for k, ev in self.event_of.items() if ev in forgotten]
        if summary is not None and self.summary is not None:
            dropped.append(self.summary)  # the new summary takes the place of the old one
        facts = {"trigger": "", "summary": summary is not None, "dropped": tuple(sorted(dropped)),
                 "source": "openhands condensation"}
        k = self.b.add(Message(role="user", content=summary or "", meta={"compaction": facts}),
                       [args_path + ("summary",)] if summary is not None else (), path)
        if summary is not None:
            self.summary = k

    def observation(self, e: dict[str, Any], path: Path) -> None:
        b = self.b
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        obs = str_or_none(e.get("observation"))
        content = e.get("content")
        text = content if isinstance(content, str) else compact_json(content) if content is not None else ""
        slots = [path + ("content",)]
        if tcm is not None:
            b.add(Message(role="tool", content=text, tool_call_id=str(tcm.get("tool_call_id") or ""),
                          tool_name=str(tcm.get("function_name") or obs or "")), slots, path)
        elif obs == "recall":  # workspace context the agent is given as a user turn
            b.add(Message(role="user", content=text), slots, path)
        elif obs in _SKIP_OBSERVATIONS:
            self.skipped += 1
        elif (answered := self._answered(e, path)) is not None:
            b.add(Message(role="tool", content=text, tool_call_id=answered.id, tool_name=answered.name), slots, path)
        else:
            b.add(Message(role="user", content=text), slots, path)
        self.previous = None

    def _answered(self, e: dict[str, Any], path: Path) -> ToolCall | None:
        """The synthetic call an observation answers: by its ``cause``, or as the
        second half of a 2024 ``[action, observation]`` pair."""
        cause = e.get("cause")
        if isinstance(cause, (int, str)) and not isinstance(cause, bool) and cause in self.call_of_event:
            return self.call_of_event.pop(cause)
        if self.previous is not None and "cause" not in e:
            before, call = self.previous
            pair = len(before) == len(self.base) + 2 and before[:-1] == path[:-1]  # [action, observation]
            # a flat history of events without ids or causes (the resolver's output.jsonl
            # of late 2024): the observation right after an action answers it
            flat = len(before) == len(path) and before[:-1] == path[:-1] and path[-1] == before[-1] + 1
            if pair or flat:
                return call
        return None


def _record_id(rec: dict[str, Any]) -> Any:
    """A record's name: an evaluation's ``instance_id``, or the resolver's issue as
    ``owner/repo#number``."""
    if rec.get("instance_id") is not None:
        return rec["instance_id"]
    issue = as_dict(rec.get("issue"))
    number = rec.get("number", issue.get("number"))
    if number is not None:
        repo = "/".join(str(issue[k]) for k in ("owner", "repo") if isinstance(issue.get(k), str))
        return f"{repo}#{number}" if repo else f"#{number}"
    return None


class OpenHandsFormat(FormatReader):
    name = "openhands"
    label = "OpenHands events (trajectory JSON or evaluation output JSONL)"
    aliases = ("open-hands", "openhands-events")
    where_found = ("trajectories saved from the UI; evaluation/.../output.jsonl (2024 ones too: [action, "
                   "observation] pairs); the resolver's output/output.jsonl; V1 (software-agent-sdk) event lists")
    tool_result = ("each observation answering a tool call (tool_call_metadata; without function calling, the "
                   "action it names as its cause; V1: ObservationEvent)")
    export_changes = "that observation's 'content'"
    expects = ("a list of OpenHands events (objects with 'source' and 'action' or 'observation'), an object "
               "with such a 'history', or JSON Lines of evaluation results each with a 'history'")

    def sniff(self, doc: Document) -> bool:
        v = doc.value
        if doc.kind == "json":
            return _events(v) or (isinstance(v, dict) and (_events(v.get("history")) or _events(v.get("events"))))
        jl = doc.as_jsonl()
        if jl is None:
            return False
        recs = [r for _, r in jl.records()]
        if recs and all(_is_v1(r) for r in recs):  # a V1 event log, one event per line
            return True
        # one issue or instance per line; a run that failed early has an empty history
        return (bool(recs) and all(isinstance(r, dict) and isinstance(r.get("history"), list) for r in recs)
                and any(_events(r["history"]) for r in recs))

    def read(self, doc: Document, source: str) -> list[Transcript]:
        v = doc.value
        if doc.kind == "json" and isinstance(v, list):
            return [self._read_events(doc, v, (), source, id="0", title="OpenHands trajectory")]
        if doc.kind == "json":
            key = "history" if _events(v.get("history")) else "events"
            iid = v.get("instance_id", v.get("id"))
            return [self._read_events(doc, v[key], (key,), source, id=str(iid or "0"),
                                      title="OpenHands run")]
        jl = doc.as_jsonl()
        assert jl is not None
        recs = list(jl.records())
        if recs and all(_is_v1(r) for _, r in recs):
            b = Builder(jl)
            self._read_v1(b, [((i,), r) for i, r in recs])
            return [b.build(self.name, id="0", source=source, title="OpenHands V1 events")]
        out = []
        for i, rec in jl.records():
            iid = _record_id(rec)
            out.append(
                self._read_events(jl, rec["history"], (i, "history"), source,
                                  id=str(iid) if iid is not None else f"line {i + 1}",
                                  title=str(iid or f"line {i + 1}"), container="evaluation output")
            )
        return out

    @staticmethod
    def _read_v1(b: Builder, events: list[tuple[Path, Any]]) -> None:
        """OpenHands V1 (software-agent-sdk) events, as ``events_to_messages`` sends them:
        actions of one LLM response form one assistant message, observations (and
        rejections, agent errors) are its tool results, messages and the system prompt
        are text; condensations and state updates are bookkeeping."""
        response_of: dict[int, str] = {}
        skipped = 0
        for path, e in events:
            if not isinstance(e, dict):
                b.warnings.append(f"{'/'.join(map(str, path))}: an event that is {json_type(e)}; skipped")
                continue
            kind = str_or_none(e.get("kind"))
            if kind == "ActionEvent":
                call_raw = as_dict(e.get("tool_call"))
                call_id = str_or_none(e.get("tool_call_id")) or str_or_none(call_raw.get("id")) or ""
                name = str_or_none(e.get("tool_name")) or str_or_none(call_raw.get("name")) or ""
                args = call_raw.get("arguments")
                call = ToolCall(id=call_id, name=name,
                                arguments=args if isinstance(args, str) else compact_json(args or {}))
                thought, _ = _v1_text(e.get("thought"), path + ("thought",))
                rid = str_or_none(e.get("llm_response_id"))
                last = len(b.messages) - 1
                if rid and response_of.get(last) == rid:
                    b.extend_calls(last, [call], thought)
                else:
                    idx = b.add(Message(role="assistant", content=thought, tool_calls=(call,)), (), path)
                    if rid:
                        response_of[idx] = rid
            elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
                call_id = str_or_none(e.get("tool_call_id")) or ""
                name = str_or_none(e.get("tool_name")) or b.tool_name_for(call_id)
                if kind == "ObservationEvent":
                    obs = as_dict(e.get("observation"))
                    text, slots, blanks = _v1_observation(obs, path + ("observation",))
                elif kind == "UserRejectObservation":
                    reason = str_or_none(e.get("rejection_reason")) or ""
                    text, slots, blanks = f"Action rejected: {reason}", [], []
                else:
                    text, slots, blanks = str_or_none(e.get("error")) or "", [path + ("error",)], []
                b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=name), slots, path,
                      blanks=blanks)
            elif kind == "MessageEvent":
                msg = as_dict(e.get("llm_message"))
                role = str_or_none(msg.get("role")) or ("user" if e.get("source") == "user" else "assistant")
                text, _ = _v1_text(msg.get("content"), path + ("llm_message", "content"))
                b.add(Message(role=role, content=text), (), path)
            elif kind == "SystemPromptEvent":
                text, _ = _v1_text(e.get("system_prompt"), path + ("system_prompt",))
                b.add(Message(role="system", content=text), (), path)
            else:
                skipped += 1
        if skipped:
            b.notes.append(f"{skipped} V1 bookkeeping events (condensations, state updates, tokens) are skipped")

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
        if any(_is_v1(e) for _, e in _flat(events, base)):
            self._read_v1(b, list(_flat(events, base)))
            return b.build(self.name, id=id, source=source, title=title, container=container)
        reader = _EventReader(b, base)
        for path, e in _flat(events, base):
            if not isinstance(e, dict):
                b.warnings.append(f"{'/'.join(map(str, path))}: an event that is {json_type(e)}; skipped")
            else:
                reader.event(e, path)
        reader.placed()
        if reader.synthetic:
            b.notes.append(f"{reader.synthetic} actions without function calling are read as tool calls, "
                           "each answered by the observation it caused")
        if reader.skipped:
            b.notes.append(f"{reader.skipped} bookkeeping events (agent state, recall requests, empty "
                           "observations) are skipped")
        return b.build(self.name, id=id, source=source, title=title, container=container)
