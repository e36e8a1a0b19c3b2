"""toolclear policies as the OpenAI Agents SDK's ``RunConfig(call_model_input_filter=...)``.

The SDK keeps its own items and sends what the filter returns for that one call, so
this is the per-call mode (``toolclear.replay(..., persist=False)``). The items are read
and written back by toolclear's ``openai-responses`` format, exactly as a saved session
is, so every field of an item the policy leaves alone is kept and a cleared output
keeps its item's shape. Instructions are not items; they are per-call overhead.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import TranscriptError
from ..formats._base import Binding, Builder, Origins
from ..formats._doc import Document, parse
from ..formats.responses import CALLS, OpenAIResponsesFormat, read_item
from ..model import Message, Transcript
from ..result import Result
from ._live import Conversation, Live

__all__ = ["call_model_input_filter", "from_items"]


def _item(item: Any) -> Any:
    # the SDK's models dumped as it dumps them; anything else is left for the reader to name
    return item if isinstance(item, dict) or not hasattr(item, "model_dump") else \
        item.model_dump(exclude_unset=True, mode="json")


def _dicts(items: Sequence[Any]) -> list[Any]:
    """The items as dicts (the SDK hands over dicts, checked in C; its models are dumped)."""
    return list(items) if set(map(type, items)) <= {dict} else [i if i.__class__ is dict else _item(i) for i in items]


def from_items(items: Sequence[Any]) -> Transcript:
    """Agents SDK input items (dicts or the SDK's models) read as a saved session is."""
    data = json.dumps([_item(i) for i in items], default=str).encode()
    return OpenAIResponsesFormat().read(parse(data), "Agents SDK input")[0]


class _Items(Conversation):
    """One conversation's items at the previous call (by value) and what they read as."""

    def __init__(self, growing: Any) -> None:
        super().__init__(growing)
        # the items as of the previous call, by value: for the items every call since has
        # repeated, the dicts first seen (the SDK's equal copies stay the SDK's, freed
        # when it drops them), then the newer ones; extended in place as the run grows
        self.values: list[Any] = []
        self.read: Builder | None = None
        self.starts: list[int] = []  # the item each message of ``read`` begins at
        self.same = 0  # leading items equal to the previous call's
        self.grown = False  # this call's items are the previous call's (by value) and more
        self.packed = 0  # leading items copied side by side (``messages``)
        self.fed = False  # the previous call's messages went through the policy
        self.shown_len = -1  # how many messages the previous call showed (-1: none)
        self.edited: list[Any] = []  # the previous call's items as sent (edited or not)
        self.changed: set[int] = set()  # messages the policy shows changed


class _ItemsLive(Live):
    """The filter: the policy on the items of each call, read as a saved session is.

    The SDK rebuilds most items on every call (its own models dumped to new dicts), so
    objects cannot be matched by identity; their values can, cheaply, because the
    dumps share the strings (an item changed in place between calls is not noticed;
    the SDK replaces items). Items equal to the previous call's are not read again
    (a later call item joins the last reply in place, as reading them afresh does), so a
    call reads only its new items, as ``toolclear.load`` reads a saved session. A call
    touches the history only where it must: the items compared in one pass in C, the
    policy's engine told which messages are the previous call's, and only the messages
    it shows differently looked at."""

    _latest: tuple[list[Any], _Items] | None = None  # the first items of the latest call, its conversation

    def new_conversation(self) -> Conversation:
        return _Items(super().new_conversation().growing)

    def messages(self, state: _Items, items: list[Any]) -> tuple[Builder, Document, int]:
        """This call's items read (only the new ones), their document, and how many
        leading messages are the objects the policy's engine saw on the previous call."""
        values, old = state.values, state.read
        n = len(values)
        # the previous call's items and more: compared by value in one pass in C (the SDK's
        # dicts are new, their strings shared); a model (not a dict) is never equal to one
        grown = old is not None and len(items) >= n and (items[:n] == values if len(items) > n else items == values)
        keep, first, same = 0, 0, 0
        if grown and old is not None:
            values.extend(_dicts(items[n:]))  # the SDK's copies of the repeated items stay the SDK's
            if len(values) - state.packed > len(values) >> 3:
                # copies side by side in memory, compared faster than the SDK's scattered dicts
                # (a fifth less time in a Runner, whose turns leave little of them cached)
                values[:] = [dict(d) if d.__class__ is dict else d for d in values]
                state.packed = len(values)
            same = first = n
            # every message as read (a later call item joins the last reply in place, as
            # reading afresh does)
            keep = len(old.messages)
        else:
            raw = _dicts(items)
            if old is not None:
                same = next((j for j, (a, b) in enumerate(zip(raw, values)) if a != b), min(len(raw), n))
                # those wholly made of unchanged items but the last
                keep = max(0, bisect_right(state.starts, same) - 1)
            values = state.values = raw if raw is not items else list(items)  # our own: extended in place
        state.same, state.grown = same, grown
        # (the previous call's document is not used again: its list grows into this one's)
        doc = Document("json", values, b"")
        starts: list[int] = []
        tail: tuple[Sequence[Any], Sequence[Any]] = ((), ())
        last = None
        if keep and old is not None:
            last, starts = old.messages[keep - 1], state.starts
        if grown and keep and old is not None:
            # the previous call's reading, handed over: the same calls, messages and places
            b = old
            b.doc = doc
        else:
            b = Builder(doc)
            if keep and old is not None:
                # its messages wholly made of unchanged items, handed over, not copied
                tail = (old.messages[keep:], old.slots[keep:])
                b.messages, b.slots, b.blanks = old.messages, old.slots, old.blanks
                del b.messages[keep:], b.slots[keep:], b.blanks[keep:]
                b.origins = Origins(False, blank=keep)
                for m in b.messages:
                    for c in m.tool_calls:
                        if c.id:
                            b._calls[c.id] = c.name
                first = starts[keep] if keep < len(starts) else n
                del starts[keep:]
        for j in range(first, len(values)):
            item = values[j]
            if not isinstance(item, dict):
                raise TranscriptError("expected a Responses item (an object)", where=f"Agents SDK input item {j}")
            k = len(b.messages)
            read_item(doc, item, (j,), b)
            starts.extend([j] * (len(b.messages) - k))
        for i, m, slot in zip(range(keep, len(b.messages)), *tail):  # a message read again as it was stays
            if b.messages[i] == m and b.slots[i] == slot:           # the same object
                b.messages[i] = m
        state.read, state.starts = b, starts
        # the messages the policy's engine saw last call, as the same objects
        return b, doc, (keep if last is b.messages[keep - 1] else keep - 1) if keep and state.fed else 0

    def edit(self, items: Sequence[Any]) -> list[Any] | None:
        """The items as the policy leaves them, or None when the model would see no change."""
        with self.lock:
            return self._edit(items if items.__class__ is list else list(items))

    def _conversation_of(self, items: list[Any]) -> _Items:
        """Conversations told apart by their first items' values (the SDK rebuilds items;
        it dumps them with their keys in one order, so their repr is a key)."""
        head = _dicts(items[:2])
        latest = self._latest
        if latest is not None and latest[0] == head:  # the latest call's conversation (the most recent kept)
            return latest[1]
        state = self.conversation(repr(head))
        assert isinstance(state, _Items)
        self._latest = (head, state)
        return state

    def _edit(self, items: list[Any]) -> list[Any] | None:
        state = self._conversation_of(items)
        try:
            b, doc, known = self.messages(state, items)
        except BaseException:  # read part way: the next call reads its items afresh
            state.read, state.values, state.packed, state.fed = None, [], 0, False
            raise
        growing = state.growing
        # the messages as read, not copied where only the engine reads them (no report given)
        before = b.messages if growing is not None and self.on_result is None else tuple(b.messages)
        state.fed = False
        shown = self.shown(before, state, known, copy=False)
        state.fed = True
        if state.grown and growing is not None and growing.touched is not None and 0 <= state.shown_len <= len(shown):
            # the previous call's items as sent, grown by the new ones: only the messages the
            # engine shows differently from the previous call (newly changed, or changed
            # back) are looked at, so a call costs what changed, not the whole history
            look: Sequence[int] = sorted(growing.touched)
            edited = state.edited[:state.same] + items[state.same:]
        else:
            look = range(len(shown))
            edited = list(items)
            state.changed = set()
        changed: list[int] = []
        starts = state.starts
        for i in look:
            a, s = before[i], shown[i]
            if a is not s and (a.content != s.content or a.tool_calls != s.tool_calls):
                changed.append(i)
                state.changed.add(i)
            elif i in state.changed:  # shown as it is again: its items as the SDK gave them
                state.changed.discard(i)
                end = starts[i + 1] if i + 1 < len(starts) else len(items)
                edited[starts[i]:end] = items[starts[i]:end]
        if changed:
            self._apply(state, b, doc, items, before, shown, changed, edited)
        state.shown_len, state.edited = len(shown), edited
        return list(edited) if state.changed else None

    @staticmethod
    def _apply(state: _Items, b: Builder, doc: Document, items: Sequence[Any], before: Sequence[Message],
               shown: Sequence[Any], changed: list[int], edited: list[Any]) -> None:
        """Write the policy's edit of each changed message into ``edited``."""
        copies = state.copies  # item index -> (the item, the message shown for it, its edited copy)
        if len(copies) > 2 * len(items) + 64:
            copies.clear()
        get, starts, value = copies.get, state.starts, doc.value
        same = state.same  # items known equal to the previous call's, by the comparison that read them
        todo: list[int] = []
        for i in changed:  # the same edit of an equal item at the same place as on the previous call: its copy
            if shown[i].tool_calls != before[i].tool_calls:  # clear_tool_inputs: the call items' arguments
                end = starts[i + 1] if i + 1 < len(starts) else len(items)
                _clear_arguments(shown[i], value, edited, items, starts[i], end)
                continue
            j = starts[i]
            hit = get(j)
            # the SDK hands over new dicts on every call: matched by value (their strings are shared)
            if hit is not None and hit[1] is shown[i] and (j < same or hit[0] == value[j]):
                edited[j] = hit[2]
            else:
                todo.append(i)
        if todo:
            binding = Binding(doc, b.slots, before, b.blanks)  # read at the changed messages only
            at = {starts[i]: i for i in todo if b.slots[i] and b.slots[i][0][0] == starts[i]}  # item -> its message
            for path, new in binding.edits(shown, "Agents SDK input", todo).items():
                j = path[0]
                edited[j] = _set(edited[j] if edited[j] is not items[j] else value[j], path[1:], new)
                if j in at:
                    copies[j] = (value[j], shown[at[j]], edited[j])


def _clear_arguments(message: Any, value: list[Any], edited: list[Any], items: Sequence[Any], start: int,
                     end: int) -> None:
    """Write an assistant message's new call arguments (Anthropic's ``clear_tool_inputs``)
    into its call items: a function call's ``arguments``, a custom tool call's ``input``
    (both strings). The structured inputs of the SDK's other tools (a shell call's
    ``action``, an apply_patch ``operation``) have required fields, so they are sent as
    they were."""
    new_args = {c.id: c.arguments for c in message.tool_calls}
    for j in range(start, end):
        item = edited[j] if edited[j] is not items[j] else value[j]
        if not isinstance(item, dict):
            continue
        field = CALLS.get(str(item.get("type")))
        call_id = str(item.get("call_id") or item.get("callId") or item.get("id") or "")
        if field in ("arguments", "input") and call_id in new_args and isinstance(item.get(field), str) \
                and item[field] != new_args[call_id]:
            edited[j] = {**item, field: new_args[call_id]}


def _set(value: Any, path: Sequence[Any], new: Any) -> Any:
    """A copy of ``value`` with ``path`` set to ``new`` (what is not on the path is shared)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    out = list(value)
    out[head] = _set(value[head], rest, new)
    return out


def call_model_input_filter(config: Any, *, on_result: Callable[[Result], None] | None = None, counter: Any = None,
                            backend: Any = None, tools: Sequence[Any] = ()) -> Callable[[Any], Any]:
    """A ``call_model_input_filter`` running ``config`` (any toolclear policy) on the
    items of each model call; ``on_result`` receives each call's ``Result``."""
    live = _ItemsLive(config, on_result=on_result, counter=counter, backend=backend, tools=tools, per_call=True)

    def filter_input(data: Any) -> Any:
        from agents.run_config import ModelInputData

        model_data = data.model_data
        if not model_data.input:
            return model_data
        edited = live.edit(model_data.input)
        return model_data if edited is None else ModelInputData(input=edited, instructions=model_data.instructions)

    return filter_input
