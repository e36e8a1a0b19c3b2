"""toolclear policies as a pydantic-ai history processor: ``Agent(capabilities=[capability(config)])``
in pydantic-ai 2 (``ProcessHistory(history_processor(config))``), or
``Agent(history_processors=[history_processor(config)])`` in pydantic-ai 1.

pydantic-ai writes what a history processor returns back into the run's history, so
the edit persists: every later call sees the same cleared prefix and the prompt cache
holds (``toolclear.replay(..., persist=True)`` simulates it). Messages are read as
``toolclear.load`` reads a saved ``all_messages_json()``, so both count the same.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, count
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, ToolCallPart

from ..formats.pydantic_ai import read_model_message
from ..model import Message
from ..result import Result
from ._live import Live

__all__ = ["capability", "from_pydantic_ai", "history_processor"]

_Read = tuple[tuple[Message, int | None], ...]


def _read(m: ModelMessage) -> _Read:
    return tuple(read_model_message(ModelMessagesTypeAdapter.dump_python([m], mode="json")[0]))


def _stamp(m: ModelMessage) -> tuple[Any, ...]:
    return tuple(m.parts)


def from_pydantic_ai(messages: Sequence[ModelMessage]) -> list[Message]:
    """pydantic-ai messages as toolclear messages (one per part the policy sees)."""
    return [msg for m in messages for msg, _ in _read(m)]


def _edited(m: ModelMessage, read: _Read, after: Sequence[Message]) -> ModelMessage:
    parts: list[Any] = list(m.parts)
    for (before, j), new in zip(read, after):
        if new is before:
            continue
        if j is not None and new.content != before.content:
            parts[j] = dataclasses.replace(parts[j], content=new.content)
        if isinstance(m, ModelResponse) and new.tool_calls != before.tool_calls:
            calls = iter(new.tool_calls)
            # a part sent with its provider id is replayed from the provider's stored copy
            # (OpenAI Responses), so an edited part drops the id
            parts = [dataclasses.replace(p, args=next(calls).arguments, id=None) if isinstance(p, ToolCallPart) else p
                     for p in parts]
    edited: Any = m
    return dataclasses.replace(edited, parts=parts) if parts != list(m.parts) else m


class _PydanticAILive(Live):
    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        with self.lock:
            return self._call(messages)

    def _call(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        state = self.conversation_of(messages)
        memo = state.memo
        k = memo.known(messages)
        reads: list[_Read] = memo.conv[:k]
        entries = memo.entries
        for m in messages[k:]:  # one probe and one compare per message not in the known prefix
            key, stamp = id(m), tuple(m.parts)
            hit = entries.get(key)
            if hit is None or hit[0] is not m or hit[1] != stamp:
                hit = entries[key] = (m, stamp, _read(m))
            reads.append(hit[2])
        before = [msg for r in reads for msg, _ in r]
        after = self.shown(before, state)
        out = list(messages)
        changed = [i for i, a, b in zip(count(), before, after) if a is not b]
        if changed:
            ends = list(accumulate(map(len, reads)))
            for i in sorted({bisect_right(ends, c) for c in changed}):
                r = reads[i]
                start = ends[i] - len(r)
                out[i] = _edited(messages[i], r, after[start:ends[i]])
                # the history keeps the edit (pydantic-ai persists it), flags and all
                reads[i] = tuple((a, j) for a, (_, j) in zip(after[start:ends[i]], r))
                memo.put(out[i], _stamp(out[i]), reads[i])
        memo.done(out, reads)
        return out


def history_processor(config: Any, *, on_result: Callable[[Result], None] | None = None, counter: Any = None,
                      backend: Any = None, tools: Sequence[Any] = ()) -> Callable[[list[ModelMessage]], list[ModelMessage]]:
    """A history processor running ``config`` (any toolclear policy) before each model
    request; ``on_result`` receives each call's ``Result``."""
    return _PydanticAILive(config, on_result=on_result, counter=counter, backend=backend, tools=tools)


def capability(config: Any, **kw: Any) -> Any:
    """pydantic-ai 2's form: a ``ProcessHistory`` capability running ``history_processor(config, **kw)``."""
    from pydantic_ai.capabilities import ProcessHistory

    return ProcessHistory(history_processor(config, **kw))
