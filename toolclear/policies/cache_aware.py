"""``cache-aware``: toolclear's own policy. Any base policy chooses what to clear; the
clear is made only when it pays for the prompt cache it breaks.

Clearing a message changes the prompt from that message on, so the next call writes
everything after it to the cache again (at the cache-write price) where it would have
read it (at the cache-read price). Measured on real Claude Code runs, that rewrite costs
more than the clear saves almost every time. So, before each model call, the base
policy's wanted edits are held back and made only when one of these holds:

- **the cache is cold anyway**: the call comes more than ``ttl_seconds`` after the reply
  before it (the cache has expired; the whole prompt is written whatever is cleared;
  by default the run's own cache lifetime: an hour when its log wrote the cache for an
  hour, else 5 minutes), or
- **it pays**: the tokens it removes, read from the cache on each of the ``horizon``
  calls expected after it, save more than rewriting the prompt from the first changed
  message costs: ``removed x read x horizon > suffix x (write - read)``, prices as
  multiples of the input price (Anthropic's: read 0.1, write 1.25 for the 5-minute cache
  and 2 for the hour's; the run's by default). ``horizon`` (10) is the payback period: a
  clear must pay back its rewrite within that many calls (a run may end sooner; the
  default was chosen on the corpus's real Claude Code runs, 2 to 20 tried, see
  docs/policies.md);

and in both cases only when it removes at least ``clear_at_least`` tokens, so it never
clears crumbs. What is held back is made at a later call, all at once, when it pays.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..counters import count_tokens
from ..errors import ConfigError
from ..model import Message, MessageStatus, reply_time
from ._checks import whole
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "CacheAwareConfig"]


@dataclass(frozen=True)
class CacheAwareConfig:
    """What to clear (``base``, a policy's name, with its ``threshold`` and ``keep`` when
    given) and when a clear pays."""

    base: str = "anthropic"
    threshold: int | None = None
    """The base policy's trigger (its ``threshold`` option); None: its default."""
    keep: int | None = None
    """What the base policy keeps (its ``keep`` option); None: its default."""
    clear_at_least: int = 1000
    ttl_seconds: int | None = None
    """How long the cache lives: a call longer than this after the last reply finds it
    cold. None: the run's own (an hour when its log wrote the cache for an hour, else 5
    minutes), as its cost is priced."""
    write_multiplier: float | None = None
    """A cache write's price over the input price. None: the run's (2 for an hour's cache,
    1.25 for 5 minutes)."""
    read_multiplier: float = 0.1
    horizon: int = 10
    """The calls a clear must pay back within (the calls expected after it at least)."""

    def __post_init__(self) -> None:
        if not isinstance(self.base, str) or not self.base or self.base.replace("-", "_") == "cache_aware":
            raise ConfigError("base: expected the name of another policy (e.g. anthropic, eino, swe-agent)")
        whole("clear_at_least", self.clear_at_least)
        whole("horizon", self.horizon, minimum=1)
        for name in ("threshold", "keep", "ttl_seconds"):
            if getattr(self, name) is not None:
                whole(name, getattr(self, name))
        for name in ("write_multiplier", "read_multiplier"):
            value = getattr(self, name)
            if value is None and name == "write_multiplier":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ConfigError(f"{name}: expected a number of at least 0, got {value!r}")
        if self.write_multiplier is not None and self.write_multiplier < self.read_multiplier:
            raise ConfigError("write_multiplier: a cache write costs at least what a cache read does")

    def base_config(self) -> Any:
        """The base policy's config, with ``threshold`` and ``keep`` set."""
        from . import preset_named  # the registry: this policy wraps any of its policies

        spec, preset = preset_named(self.base)
        if spec.name == "cache-aware":
            raise ConfigError("base: cache-aware cannot wrap itself")
        config = preset.make()
        for option in ("threshold", "keep"):
            value = getattr(self, option)
            if value is not None:
                field = spec.aliases.get(option, option)
                if not hasattr(config, field):
                    raise ConfigError(f"{option}: {self.base} has no such option")
                config = replace(config, **{field: value})
        if spec.needs_backend(config):
            raise ConfigError(f"base: {self.base} writes files as it clears (set its truncation off); cache-aware "
                              "holds clears back, so it takes a policy that only edits the history")
        return config


class _Sums:
    """A Fenwick tree of per-message numbers that grows with the run: a range's sum in
    O(log n), so each call's decision costs what changed, not the whole history."""

    def __init__(self) -> None:
        self.tree: list[int] = [0]

    def _grow(self, n: int) -> None:
        while len(self.tree) <= n:
            k = len(self.tree)  # the new node covers (k - lowbit(k), k]: the sum of that range so far
            low = k & -k
            self.tree.append(self._prefix(k - 1) - self._prefix(k - low))

    def add(self, i: int, value: int) -> None:
        self._grow(i + 1)
        k = i + 1
        while k < len(self.tree):
            self.tree[k] += value
            k += k & -k

    def _prefix(self, n: int) -> int:
        total, k = 0, min(n, len(self.tree) - 1)
        while k > 0:
            total += self.tree[k]
            k -= k & -k
        return total

    def between(self, a: int, b: int) -> int:
        """The sum over indices a .. b - 1."""
        return self._prefix(b) - self._prefix(a)


class CacheAwareEngine:
    """The base policy's engine, advanced call by call, with its edits held back until
    they pay (see the module's docstring). What is pending (wanted but not shown), the
    tokens it would remove, and the tokens of the wanted prompt are kept up to date as
    the base policy's edits arrive, so a call costs O(changes x log n)."""

    def __init__(self, messages: Sequence[Message], config: CacheAwareConfig, counter: Any, **kw: Any) -> None:
        # a live adapter hands over its list, read as it grows: kept, not copied
        from . import spec_for

        self.msgs, self.config, self.counter = messages, config, counter
        base = config.base_config()
        self.base = spec_for(base).engine(messages, base, counter, **kw)
        self.wanted: dict[int, Message] = {}  # what the base policy shows instead
        self.shown: dict[int, Message] = {}  # what is sent instead
        self.pending: dict[int, int] = {}  # wanted but not shown -> tokens it would remove (shown - wanted)
        self.removed = 0  # their sum
        self.firsts: list[int] = []  # a heap of pending indices (stale ones skipped)
        self.prefix = [0]  # the original messages' tokens, prefix sums
        self.saving = _Sums()  # per message: original tokens - wanted tokens
        self.calls = 0
        self.last_reply: float | None = None
        self.scan = 0
        self.made = 0  # clears made
        self.held = 0  # calls at which a wanted clear was held back
        from ..cost.logfacts import _writes_one_hour  # the run's cache, as its cost is priced

        hour = _writes_one_hour(messages)
        self.ttl = config.ttl_seconds if config.ttl_seconds is not None else (3600 if hour else 300)
        self.write = config.write_multiplier if config.write_multiplier is not None else (2.0 if hour else 1.25)

    @property
    def offset(self) -> Any:
        return getattr(self.base, "offset", None)

    @offset.setter
    def offset(self, value: Any) -> None:  # a trigger counting the whole prompt, calibrated
        if hasattr(self.base, "offset"):
            self.base.offset = value

    def _count(self, m: Message) -> int:
        return count_tokens([m], self.counter)[0]

    def _original(self, i: int) -> int:
        return self.prefix[i + 1] - self.prefix[i]

    def _tokens(self, i: int, view: dict[int, Message]) -> int:
        m = view.get(i)
        return self._original(i) if m is None else self._count(m)

    def _want(self, i: int, new: Message | None) -> None:
        """The base policy now shows ``new`` (None: the original) for message ``i``."""
        old = self.wanted.get(i)
        if new is None:
            self.wanted.pop(i, None)
        else:
            self.wanted[i] = new
        self.saving.add(i, self._tokens(i, {i: old} if old is not None else {}) - self._tokens(i, self.wanted))
        self.removed -= self.pending.pop(i, 0)
        if self.wanted.get(i) is not self.shown.get(i):
            diff = self._tokens(i, self.shown) - self._tokens(i, self.wanted)
            self.pending[i] = diff
            self.removed += diff
            heapq.heappush(self.firsts, i)

    def _first_pending(self) -> int:
        while self.firsts[0] not in self.pending:
            heapq.heappop(self.firsts)
        return self.firsts[0]

    def advance(self, length: int) -> dict[int, Message | None]:
        msgs, c = self.msgs, self.config
        if length > self.scan:
            for n in count_tokens(msgs[self.scan:length], self.counter):
                self.prefix.append(self.prefix[-1] + n)
        while self.scan < length:
            m = msgs[self.scan]
            if m.role == "assistant" and (t := reply_time(m)) is not None:
                self.last_reply = t
            self.scan += 1
        for i, new in sorted(self.base.advance(length).items()):
            self._want(i, None if new is None or new is msgs[i] else new)
        self.calls += 1
        if not self.pending:
            return {}
        reply = msgs[length] if length < len(msgs) else None
        now = reply_time(reply) if reply is not None and reply.role == "assistant" else None
        cold = now is not None and self.last_reply is not None and now - self.last_reply > self.ttl
        pays = False
        if not cold and self.removed > 0:
            first = self._first_pending()
            suffix = self.prefix[length] - self.prefix[first] - self.saving.between(first, length)
            pays = self.removed * c.read_multiplier * c.horizon > suffix * (self.write - c.read_multiplier)
        if self.removed < c.clear_at_least or not (cold or pays):
            self.held += 1
            return {}
        delta: dict[int, Message | None] = {}
        for i in self.pending:
            new = self.wanted.get(i)
            delta[i] = new
            if new is None:
                self.shown.pop(i, None)
            else:
                self.shown[i] = new
        self.pending.clear()
        self.firsts.clear()
        self.removed = 0
        self.made += 1
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        status: MessageStatus = self.base.status(index, changed)
        if not changed and status is MessageStatus.CLEARED:
            return MessageStatus.KEPT  # the base would have cleared it: held back
        return status


def _engine(messages: Any, config: CacheAwareConfig, counter: Any, **kw: Any) -> CacheAwareEngine:
    return CacheAwareEngine(messages, config, counter, **kw)


def _why_nothing(config: CacheAwareConfig, sizes: Any) -> str:
    return (f"{config.base} wanted nothing cleared, or no clear it wanted paid for the cache it breaks (nor came "
            "after the cache expired) while removing at least "
            f"{config.clear_at_least:,} tokens.")


def _spec() -> PolicySpec:
    return PolicySpec(
        name="cache-aware",
        config=CacheAwareConfig,
        engine=_engine,
        presets=(Preset("cache-aware", "toolclear cache-aware",
                        "toolclear's own: the base policy chooses what to clear, and a clear is made only when the "
                        "cache is cold anyway or the tokens it removes, over the calls expected after it, save "
                        "more than rewriting the cached prompt costs.", CacheAwareConfig,
                        knobs=(Knob("clear_at_least", "Clear at least (tokens)", "tokens",
                                    "clear_at_least: a clear that removes fewer tokens is not made."),
                               Knob("horizon", "Pays back within (calls)", "steps",
                                    "horizon: a clear is made when it pays back its cache rewrite within this "
                                    "many calls.")),),),
        aliases={"at_least": "clear_at_least", "ttl": "ttl_seconds", "policy": "base"},
        describe=lambda c: f"cache-aware {c.base}" + (f" {c.threshold:,}" if c.threshold is not None else "")
        + (f"/{c.keep:,}" if c.keep is not None else ""),
        changed_noun="message(s) changed when it paid",
        stateful=True,
        why_nothing=_why_nothing,
    )


SPEC = _spec()
"""toolclear's cache-aware policy, as the registry lists it."""
