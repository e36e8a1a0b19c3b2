"""What every live adapter shares: the policy run before each model call, and a memo of
converted messages so a long history is not converted or counted again on every call.

Each call the agent hands over its whole history, almost always the list the previous
call left plus a few new messages. The memo remembers that list: a history that starts
with the same objects (checked object by object, in C) reuses their conversions, so
only the new messages are converted. Anything else is looked up by object: the memo
holds the objects, so an id cannot be reused while its entry lives, and an object
changed in place is noticed by its stamp (the fields the conversion read) and
converted again. The remembered prefix is not stamped again: an object the history
held at the previous call is taken as unchanged, as the frameworks never edit a
message in place (they replace it). The memo keeps at most about twice the current
history.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import count
from operator import is_
from typing import Any

from ..counters import get_counter
from ..errors import ConfigError
from ..model import Message
from ..policies import spec_for
from ..policies._engine import _visible
from ..result import Result
from ..runs.lab import apply, policy_name, replay

__all__ = ["Conversation", "Growing", "Live", "Memo"]


class Memo:
    """toolclear conversions of framework objects, reused while those objects
    (unchanged) stay in the agent's history. ``entries``: id -> (object, stamp,
    conversion), read directly by the adapters' hot loops; ``src``/``conv``: the
    history the previous call left and its conversions."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[Any, tuple[Any, ...], Any]] = {}
        self.src: list[Any] = []
        self.conv: list[Any] = []

    def known(self, messages: Sequence[Any]) -> int:
        """How many leading messages are, object for object, the history the previous
        call left (all of it, or 0)."""
        n = len(self.src)
        if n and len(messages) >= n and all(map(is_, messages, self.src)):
            return n
        return 0

    def put(self, source: Any, stamp: tuple[Any, ...], value: Any) -> None:
        """Remember what an edited object holds for the policy, including what the
        framework cannot show (eino's processed flag), for the next call."""
        self.entries[id(source)] = (source, stamp, value)

    def done(self, src: Sequence[Any], conv: Sequence[Any]) -> None:
        """End of one model call: ``src`` is the history the next call will start from,
        ``conv`` its conversions. Entries of objects no longer in it are dropped once
        they outnumber it."""
        self.src, self.conv = list(src), list(conv)
        if len(self.entries) > 2 * len(self.src) + 64:
            live = set(map(id, self.src))
            self.entries = {k: v for k, v in self.entries.items() if k in live}


class Growing:
    """A policy whose every call sees the previous call's history plus new messages: in
    the per-call mode (LangChain's, Anthropic's, masking, eino's clear policy) the raw
    history grows; with the edit kept (eino's clear policy, as eino runs it) what the
    previous call showed grows. One engine kept across calls advances over the new
    messages, O(new + changes) a call, as ``toolclear.replay`` does, instead of a
    fresh pass over the whole history; a history that is not the previous one grown
    starts a new engine. The tests check that each call shows what
    ``toolclear.apply`` shows."""

    def __init__(self, config: Any, counter: Any, tools: Sequence[Any], persist: bool = False) -> None:
        self.config, self.counter, self.tools, self.persist = config, counter, tools, persist
        self.seq: list[Message] = []
        self.shown: list[Message] = []
        self.engine: Any = None
        self.differs: set[int] = set()  # where shown is not seq
        self.touched: list[int] | None = None  # where this call may show differently from the previous one

    def __call__(self, before: Sequence[Message], known: int = 0, copy: bool = True) -> list[Message]:
        """What the model is shown of ``before``; per call, the caller may vouch that its
        first ``known`` messages are the previous call's objects (not checked again).
        ``copy=False``: the list kept for the next call, for a caller that only reads it
        before then."""
        # the history this call grows: the raw one (per call) or what the last call showed (kept)
        grown = self.shown if self.persist else self.seq
        n = len(grown)
        fresh = self.engine is None or len(before) < n or not (
            known >= n and not self.persist or all(map(is_, before, grown)))
        if fresh:
            self.seq, self.shown = list(before), list(before)  # a new or rewritten history
            self.differs = set()
            seq: Any = self.seq  # the engine reads this list as it grows
            # eino's clear policy advances over the growing list with the edit kept or not
            self.engine = spec_for(self.config).engine(seq, self.config, get_counter(self.counter), backend=None,
                                                       tools=self.tools, mode="single pass", persist=self.persist)
        else:
            self.seq += before[n:]
            self.shown += before[n:]
        seq, shown = self.seq, self.shown
        differs = self.differs
        self.touched = None  # (until the engine has advanced)
        delta = self.engine.advance(len(seq))
        for i, new in delta.items():
            if new is not None and _visible(seq[i], new):
                shown[i] = new
                differs.add(i)
            else:
                shown[i] = seq[i]
                differs.discard(i)
        self.touched = None if fresh else list(delta)
        return list(shown) if copy else shown


class Conversation:
    """What an adapter remembers of one conversation between its calls: the converted
    history (``memo``), the policy's engine when it is advanced call by call
    (``growing``), and copies of edited framework messages reused while the same edit
    holds (``copies``)."""

    def __init__(self, growing: Growing | None) -> None:
        self.memo = Memo()
        self.growing = growing
        self.copies: dict[int, tuple[Any, Message, Any]] = {}


class Live:
    """A toolclear policy config run before each live model call. ``on_result`` gets
    each call's ``Result``: what was cleared, the tokens before and after.
    ``per_call``: the agent does not keep the edits (each call's history is the raw
    one). Unless a report is asked for, the policy is advanced call by call
    (``Growing``) where it can be: every policy per call, eino's clear policy when the
    edits are kept.

    One adapter is often built once and shared by many conversations (an app's agent
    serving several users, in threads or tasks): what it remembers is kept per
    conversation, told apart by its first messages, for the 64 most recent ones, and
    its calls take turns."""

    _KEEP = 64

    def __init__(self, config: Any, *, counter: Any = None, on_result: Callable[[Result], None] | None = None,
                 backend: Any = None, tools: Sequence[Any] = (), per_call: bool = False) -> None:
        name = policy_name(config)  # a clear error now, not at the first model call
        self.config, self.counter, self.on_result = config, counter, on_result
        self.backend, self.tools, self.per_call = backend, tuple(tools), per_call
        self.lock = threading.Lock()
        self.stateful = spec_for(config).stateful  # defined call by call: one engine per conversation
        if self.stateful and not per_call:
            raise ConfigError(f"{name} decides each call on the history as the agent recorded it, which an agent "
                              "that keeps the edits no longer holds: run it per call (persist=False)")
        self.advanced = self.stateful or on_result is None and (
            name in ("eino", "anthropic", "langchain", "masking") if per_call else name == "eino")
        self._conversations: OrderedDict[Any, tuple[tuple[Any, ...], Conversation]] = OrderedDict()

    def new_conversation(self) -> Conversation:
        growing = Growing(self.config, self.counter, self.tools, not self.per_call) if self.advanced else None
        return Conversation(growing)

    def conversation(self, key: Any, anchors: tuple[Any, ...] = ()) -> Conversation:
        """The state of the conversation known by ``key``: a value, or the ids of its
        first messages, held as ``anchors`` so the ids are not reused while it lives."""
        hit = self._conversations.get(key)
        if hit is not None and len(hit[0]) == len(anchors) and all(map(is_, hit[0], anchors)):
            self._conversations.move_to_end(key)
            return hit[1]
        conv = self.new_conversation()
        self._conversations[key] = (anchors, conv)
        while len(self._conversations) > self._KEEP:
            self._conversations.popitem(last=False)
        return conv

    def conversation_of(self, messages: Sequence[Any]) -> Conversation:
        """The state of the conversation these framework messages belong to, told apart
        by its first two messages (the first alone is often a shared system prompt)."""
        anchors = tuple(messages[:2])
        return self.conversation(tuple(map(id, anchors)), anchors)

    def run(self, messages: Sequence[Message]) -> Result:
        if self.stateful:  # what a call is sent depends on the calls before: the run replayed up to it
            result = replay(messages, self.config, backend=self.backend, tools=self.tools, counter=self.counter)
        else:
            result = apply(messages, self.config, self.backend, self.tools, counter=self.counter)
        if self.on_result is not None:
            self.on_result(result)
        return result

    def shown(self, messages: Sequence[Message], conv: Conversation | None = None,
              known: int = 0, copy: bool = True) -> Sequence[Message]:
        """What the model is shown instead of ``messages`` (eino's processed flags included);
        ``known`` and ``copy`` as ``Growing`` takes them."""
        if conv is not None and conv.growing is not None:
            out = conv.growing(messages, known, copy)
            if self.stateful and self.on_result is not None:
                self.run(messages)  # the report: the run replayed up to this call (what the engine says)
            return out
        return self.run(messages).messages

    @staticmethod
    def changes(before: Sequence[Message], shown: Sequence[Message], conv: Conversation | None = None) -> list[int]:
        """Indices whose message the policy changed on this call (an engine advanced
        call by call knows where to look)."""
        if conv is not None and conv.growing is not None and conv.growing.shown is not None:
            return [i for i in sorted(conv.growing.differs)
                    if (a := before[i]).content != (b := shown[i]).content or a.tool_calls != b.tool_calls]
        return [i for i, a, b in zip(count(), before, shown)
                if a is not b and (a.content != b.content or a.tool_calls != b.tool_calls)]
