"""What every live adapter shares: the policy run before each model call, and a memo of
converted messages so a long history is not converted or counted again on every call.

The memo is keyed by the identity of the framework's objects and holds them, so an id
cannot be reused while its entry lives; each call keeps only the entries that call
used, so it never holds more than the current history. An object changed in place is
noticed by its stamp (the fields the conversion read) and converted again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..lab import apply
from ..model import Message
from ..result import Result

__all__ = ["Live", "Memo"]


class Memo:
    """toolclear messages converted from framework objects, reused while those objects
    (unchanged) stay in the agent's history."""

    def __init__(self) -> None:
        self._old: dict[int, tuple[Any, tuple[Any, ...], Any]] = {}
        self._new: dict[int, tuple[Any, tuple[Any, ...], Any]] = {}

    def get(self, source: Any, stamp: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """The conversion of ``source``, made once while its stamp holds."""
        key = id(source)
        hit = self._old.get(key) if key not in self._new else self._new[key]
        if hit is not None and hit[0] is source and hit[1] == stamp:
            self._new[key] = hit
            return hit[2]
        value = make()
        self._new[key] = (source, stamp, value)
        return value

    def put(self, source: Any, stamp: tuple[Any, ...], value: Any) -> None:
        """Remember what an edited object holds for the policy, including what the
        framework cannot show (eino's processed flag), for the next call."""
        self._new[id(source)] = (source, stamp, value)

    def done(self) -> None:
        """End of one model call: forget what it did not use."""
        self._old, self._new = self._new, {}


class Live:
    """A toolclear policy config run before each live model call. ``on_result`` gets
    each call's ``Result``: what was cleared, the tokens before and after."""

    def __init__(self, config: Any, *, counter: Any = None, on_result: Callable[[Result], None] | None = None,
                 backend: Any = None, tools: Sequence[Any] = ()) -> None:
        from ..lab import policy_name

        policy_name(config)  # a clear error now, not at the first model call
        self.config, self.counter, self.on_result = config, counter, on_result
        self.backend, self.tools = backend, tuple(tools)

    def run(self, messages: Sequence[Message]) -> Result:
        result = apply(messages, self.config, self.backend, self.tools, counter=self.counter)
        if self.on_result is not None:
            self.on_result(result)
        return result

    @staticmethod
    def changes(before: Sequence[Message], result: Result) -> list[int]:
        """Indices whose message the policy changed on this call."""
        return [i for i, (a, b) in enumerate(zip(before, result.messages)) if a is not b and (
            a.content != b.content or a.tool_calls != b.tool_calls)]
