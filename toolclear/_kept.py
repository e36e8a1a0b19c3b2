"""Values worked out once from an immutable sequence and kept while it is in use."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["KeptFor", "Same"]

V = TypeVar("V")


class KeptFor(Generic[V]):
    """What was worked out from a tuple (a transcript's messages, its prefix sums),
    kept for the ``size`` most recent ones: a sweep, the app and pricing ask again and
    again for the same transcript. Keyed by the tuple's id and holding the tuple, so the
    id cannot be reused while its entry lives; anything but a tuple could change under
    the entry and is worked out afresh. Safe to share between threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, Hashable], tuple[Any, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, source: Any, make: Callable[[], V], extra: Hashable = None) -> V:
        """``make()``'s value for ``source`` (and ``extra``, e.g. a counter's name)."""
        if not isinstance(source, tuple):
            return make()
        key = (id(source), extra)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] is source:
                self._items.move_to_end(key)
                return hit[1]
        value = make()
        with self._lock:
            self._items[key] = (source, value)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def values_for(self, source: Any) -> list[V]:
        """What is kept for ``source``, under any ``extra``."""
        with self._lock:
            return [v for (i, _), (src, v) in self._items.items() if i == id(source) and src is source]


class Same:
    """A part of a ``KeptFor`` key that matches only the very same object (a mapping
    or a long tuple kept elsewhere: hashing its contents on every lookup cost more than
    the value kept); it holds the object, so its id cannot be reused meanwhile."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj
