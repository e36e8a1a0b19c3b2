"""smolagents memory dumps: steps, or the messages the agent sends.

Two shapes are read:

* the steps of ``agent.memory`` (``[step.dict() for step in agent.memory.steps]`` or
  ``get_full_steps()``): ``system_prompt`` and ``task`` steps, planning steps and
  action steps. An action step's ``model_output`` and ``tool_calls`` are the model's
  turn and its ``observations`` the tool result (answering the step's first call: the
  agent runs the calls of a step and reports them in one observation); its ``error``
  goes back as a user turn, as smolagents sends it. ``token_usage`` is the recorded usage.
* the messages of ``write_memory_to_messages()``: roles ``tool-call`` (the calls, as
  text) and ``tool-response`` (the observation; ``Call id: ...`` names the call when
  present, else it answers the latest call).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..model import Message, ToolCall, Transcript, Usage
from ._base import (
    Builder,
    FormatReader,
    as_dict,
    as_list,
    compact_json,
    content_text,
    str_or_none,
    token_count,
)
from ._doc import Document, Path

__all__ = ["SmolagentsFormat"]

_STEP_KEYS = ("step_number", "system_prompt", "task", "plan")
_CALL_ID = re.compile(r"""['"]id['"]\s*:\s*['"]([^'"]+)['"]""")
_CALL_NAME = re.compile(r"""['"]name['"]\s*:\s*['"]([^'"]+)['"]""")
_RESPONSE_ID = re.compile(r"\ACall id: (\S+)")


def _is_step(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in _STEP_KEYS)


def _steps(doc: Document) -> tuple[list[Any], Path] | None:
    v = doc.value
    if doc.kind != "json":
        return None
    base: Path = ()
    if isinstance(v, dict) and isinstance(v.get("steps"), list):
        v, base = v["steps"], ("steps",)
    if isinstance(v, list) and v and all(_is_step(s) for s in v) and any(
            isinstance(s, dict) and "step_number" in s for s in v):
        return v, base
    return None


def _messages(doc: Document) -> tuple[list[Any], Path] | None:
    v = doc.value
    if doc.kind != "json":
        return None
    base: Path = ()
    if isinstance(v, dict) and isinstance(v.get("messages"), list):
        v, base = v["messages"], ("messages",)
    if (isinstance(v, list) and v and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in v)
            and any(m.get("role") in ("tool-call", "tool-response") for m in v)):
        return v, base
    return None


def _is_messages(v: Any) -> bool:
    return (isinstance(v, list) and bool(v) and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in v)
            and any(m.get("role") in ("tool-call", "tool-response") for m in v))


def _benchmark_records(doc: Document) -> list[tuple[int, dict[str, Any]]] | None:
    """smolagents' benchmark output (examples/smolagents_benchmark/run.py): JSON Lines of
    records whose ``intermediate_steps`` are ``write_memory_to_messages()`` as dicts."""
    if doc.kind != "jsonl":
        return None
    recs = [(i, r) for i, r in doc.records() if isinstance(r, dict) and "intermediate_steps" in r]
    if recs and any(_is_messages(r["intermediate_steps"]) for _, r in recs):
        return recs
    return None


def _usage(step: dict[str, Any]) -> Usage | None:
    tu = step.get("token_usage")
    if not isinstance(tu, dict):
        return None
    n_in, n_out = tu.get("input_tokens"), tu.get("output_tokens")
    return Usage(input_tokens=token_count(n_in), output_tokens=token_count(n_out),
                 source="token_usage")


class SmolagentsFormat(FormatReader):
    name = "smolagents"
    label = "smolagents memory (steps or tool-call / tool-response messages)"
    aliases = ("smol", "smolagent")
    where_found = ("what you save from agent.memory.steps / get_full_steps() or write_memory_to_messages(); the "
                   "benchmark's output (JSON Lines with intermediate_steps)")
    tool_result = "an action step's observations; a 'tool-response' message"
    export_changes = "that step's 'observations' / that message's text"
    expects = "a list of smolagents steps (with 'step_number') or of messages with tool-call / tool-response roles"

    def sniff(self, doc: Document) -> bool:
        return _steps(doc) is not None or _messages(doc) is not None or _benchmark_records(doc) is not None

    def read(self, doc: Document, source: str) -> list[Transcript]:
        records = _benchmark_records(doc)
        if records is not None:
            return self._read_benchmark(doc, source, records)
        b = Builder(doc)
        steps = _steps(doc)
        if steps is not None:
            self._read_steps(doc, b, *steps)
        else:
            found = _messages(doc)
            assert found is not None
            self._read_messages(doc, b, *found)
        return [b.build(self.name, source=source, title="smolagents run")]

    @staticmethod
    def _read_steps(doc: Document, b: Builder, steps: list[Any], base: Path) -> None:
        for i, step in enumerate(steps):
            path = base + (i,)
            if isinstance(step.get("system_prompt"), str):
                b.add(Message(role="system", content=step["system_prompt"]), (), path)
            elif "task" in step and "step_number" not in step:
                b.add(Message(role="user", content=content_text(step.get("task"), doc, path + ("task",))), (), path)
            elif "plan" in step and "step_number" not in step:
                b.add(Message(role="assistant", content=str_or_none(step.get("plan")) or ""), (), path)
            elif "step_number" in step:
                raw = as_list(step.get("tool_calls"))
                calls = []
                for k, c in enumerate(raw):
                    if not isinstance(c, dict):
                        continue
                    fn = as_dict(c.get("function"))
                    args = fn.get("arguments")
                    calls.append(ToolCall(id=str_or_none(c.get("id")) or f"step{step['step_number']}-{k}",
                                          name=str_or_none(fn.get("name")) or str_or_none(c.get("name")) or "",
                                          arguments=args if isinstance(args, str) else compact_json(args or {})))
                output = step.get("model_output")
                text = output if isinstance(output, str) else "" if output is None else compact_json(output)
                index = b.add(Message(role="assistant", content=text, tool_calls=tuple(calls)), (), path)
                usage = _usage(step)
                if usage is not None:
                    b.set_usage(index, usage)
                obs = step.get("observations")
                if obs is not None and obs != []:
                    # a string as a rule; a list or object (a tool's structured output) counts as its
                    # JSON, and a cleared one is written back as the placeholder string
                    first = calls[0] if calls else ToolCall(id=f"step{step['step_number']}", name="python")
                    if not calls:  # a code agent: the step's code is its one call
                        b.messages[index] = Message(role="assistant", content=text, tool_calls=(first,),
                                                    usage=usage)
                    b.add(Message(role="tool", content=obs if isinstance(obs, str) else compact_json(obs),
                                  tool_call_id=first.id, tool_name=first.name), [path + ("observations",)], path)
                if step.get("error") is not None:
                    b.add(Message(role="user", content=f"Error:\n{compact_json(step['error'])}"), (), path)
        if any(m.role == "tool" for m in b.messages):
            b.notes.append("each action step's observations answer the step's first tool call")

    def _read_benchmark(self, doc: Document, source: str, records: list[tuple[int, dict[str, Any]]]
                        ) -> list[Transcript]:
        """One conversation per record (a benchmark question), as tau-bench's runs are."""
        out, skipped = [], 0
        for i, rec in records:
            steps = rec["intermediate_steps"]
            if not _is_messages(steps) and not (isinstance(steps, list) and steps and all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) for m in steps)):
                skipped += 1  # a 'vanilla' run (the answer only) or an error: nothing the agent kept
                continue
            b = Builder(doc)
            self._read_messages(doc, b, steps, (i, "intermediate_steps"))
            question = str_or_none(rec.get("question")) or ""
            out.append(b.build(self.name, id=f"line {i + 1}", source=source,
                               title=question[:80] or "smolagents benchmark run",
                               container="smolagents benchmark output (JSON Lines)"))
        if skipped and out:
            out[0] = replace(out[0], notes=(*out[0].notes, f"{skipped} record(s) hold no agent messages (a "
                                            "'vanilla' run's answer, or an error) and are not conversations"))
        return out

    @staticmethod
    def _read_messages(doc: Document, b: Builder, messages: list[Any], base: Path) -> None:
        latest = ""
        for i, m in enumerate(messages):
            path = base + (i,)
            role = m["role"]
            content = m.get("content")
            text = content_text(content, doc, path + ("content",))
            if isinstance(content, str):
                slots: list[Path] = [path + ("content",)]
            elif isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and isinstance(
                    content[0].get("text"), str):
                slots = [path + ("content", 0, "text")]
            else:
                slots = []
            if role == "tool-call":
                ids, names = _CALL_ID.findall(text), _CALL_NAME.findall(text)
                calls = tuple(ToolCall(id=cid, name=names[k] if k < len(names) else "")
                              for k, cid in enumerate(ids)) or (ToolCall(id=f"call-{i}", name="tool"),)
                latest = calls[0].id
                b.add(Message(role="assistant", content=text, tool_calls=calls), (), path)
            elif role == "tool-response":
                named = _RESPONSE_ID.match(text)
                call_id = named.group(1) if named else latest
                b.add(Message(role="tool", content=text, tool_call_id=call_id, tool_name=b.tool_name_for(call_id)),
                      slots, path)
            else:
                b.add(Message(role=role, content=text), slots, path)
