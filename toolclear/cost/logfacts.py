"""What a log recorded about its model calls, read once per transcript.

Where the agent compacted its context (Claude Code's summaries), which calls recorded
usage, each call's time, prompt, output and cache reads as arrays, where the log's
cache was dropped (``cache_resets``), whether it wrote 1-hour entries, and where
thinking sits: facts of the run, the same for every replay of it, that pricing and
calibration read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, NamedTuple

from .._kept import KeptFor
from ..model import Message, reply_time, utf8_len
from ..result import Result

__all__ = ["COMPACTION_TEXT", "SYNTHETIC_MODEL", "LogCompaction", "cache_resets", "codex_kept_users", "compactions_of",
           "context_before", "log_compactions"]


COMPACTION_TEXT = "This session is being continued from a previous conversation"
"""How Claude Code's compaction summary starts: calls after it no longer send what came before."""


SYNTHETIC_MODEL = "<synthetic>"
"""The model Claude Code names on replies it makes up itself (an interrupted turn, an
API error shown to the user): no API call was made, nothing was billed."""


def _is_compaction(m: Message) -> bool:
    return bool(m.meta and "compaction" in m.meta) or (m.role == "user" and m.content.startswith(COMPACTION_TEXT))


def compactions_of(messages: Sequence[Message]) -> tuple[int, ...]:
    """Where the log's agent compacted its context: the first message after each
    compaction (Claude Code's summary, Codex's), as the readers mark it or by Claude
    Code's summary text in a log written back in another format. Kept per transcript:
    the app asks on every slider move (a scan of 100,000 messages is 13 ms)."""
    return _compactions_kept.get(messages, lambda: tuple(i for i, m in enumerate(messages) if _is_compaction(m)))


_compactions_kept: KeptFor[tuple[int, ...]] = KeptFor(8)


CODEX_USER_MESSAGES_KEPT = 20_000
"""Codex's ``COMPACT_USER_MESSAGE_MAX_TOKENS`` (codex-rs/core/src/compact.rs, 0100b103)."""
CODEX_SESSION_PREFIXES = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>",
                          "<INSTRUCTIONS>")
"""User messages Codex's ``collect_user_messages`` leaves out: the session's own context,
which its initial context sends again."""


def codex_kept_users(users: Iterable[tuple[int, str]]) -> list[int]:
    """Which of the user messages ``(index, text)`` a Codex compaction keeps: the latest
    first, while their tokens (bytes / 4, rounded up) fit in 20,000, leaving out the
    session's own context. Codex cuts the one that does not fit to what is left; here it
    is left out whole. The one rule the Codex reader and ``codex-compact`` follow."""
    kept: list[int] = []
    left = CODEX_USER_MESSAGES_KEPT
    for i, text in reversed(list(users)):
        if text.startswith(CODEX_SESSION_PREFIXES):
            continue
        if left <= 0:
            break
        n = (utf8_len(text) + 3) // 4
        if n > left:
            break
        kept.append(i)
        left -= n
    return kept


class LogCompaction(NamedTuple):
    """One compaction as the log records it."""

    position: int
    """The first message after it (the summary where the log holds one)."""
    trigger: str
    pre_tokens: int
    """The context before it as the log records it (0: not recorded)."""
    summary: bool
    """The message at ``index`` is the summary."""
    kept: tuple[int, ...]
    """Messages before it the compacted context still holds (Codex keeps the latest
    user messages)."""
    source: str
    dropped: tuple[int, ...] | None = None
    """The messages it removed where the log names them (OpenHands' forgotten events);
    None: every message before it but ``kept``."""


_log_compactions_kept: KeptFor[tuple[LogCompaction, ...]] = KeptFor(4)


def log_compactions(messages: Sequence[Message]) -> tuple[LogCompaction, ...]:
    """Every compaction the log records, in order, with what it says of each (read once
    per transcript: the replay, its pricing and its losses each ask)."""
    return _log_compactions_kept.get(messages, lambda: _read_compactions(messages))


def _read_compactions(messages: Sequence[Message]) -> tuple[LogCompaction, ...]:
    out = []
    for i in _log_facts(messages)[0]:
        m = messages[i]
        facts = (m.meta or {}).get("compaction") or {}
        summary = m.content.startswith(COMPACTION_TEXT) or bool(facts.get("summary"))
        named = facts.get("dropped")
        billed = m.usage.compaction if m.usage is not None else None  # Anthropic's usage.iterations
        pre = int(facts.get("pre_tokens") or 0) or (billed.prompt_tokens if billed is not None else 0)
        out.append(LogCompaction(i, str(facts.get("trigger") or ""), pre, summary,
                                 tuple(facts.get("kept") or ()), str(facts.get("source") or "claude-code summary"),
                                 tuple(named) if named is not None else None))
    return tuple(out)


def _cut_before_each(cuts: Any, ends: Any) -> Any:
    """``calibration.cut_before`` for every call at once: the last compaction strictly
    before each of ``ends`` (0: none); ``cuts`` ascending."""
    import numpy as np

    cuts_a = np.asarray(cuts, dtype=np.int64)
    if not len(cuts_a):
        return np.zeros_like(ends)
    pos = np.searchsorted(cuts_a, ends, side="left")
    return np.where(pos > 0, cuts_a[np.maximum(pos - 1, 0)], 0)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with the app and pandas
        return None
    return numpy


_log_facts_kept: KeptFor[tuple[tuple[int, ...], tuple[int, ...]]] = KeptFor(4)


def _log_facts(messages: Sequence[Message]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where the log compacted its context, and which messages recorded usage: read
    once per transcript (as its token counts are), since a sweep or the app prices many
    replays of the same run."""
    def read() -> tuple[tuple[int, ...], tuple[int, ...]]:
        usage = list(map(attrgetter("usage"), messages))
        recorded = tuple(i for i, u in enumerate(usage) if u is not None) if usage.count(None) < len(usage) else ()
        return compactions_of(messages), recorded
    return _log_facts_kept.get(messages, read)


def context_before(messages: Sequence[Message], position: int, pre_tokens: int = 0) -> int:
    """The context a compaction at ``position`` summarised, as the log says it: its own
    figure where it records one (``pre_tokens``: Claude Code's ``preTokens``), else the
    prompt of the last recorded call before it; 0 when the log says neither."""
    if pre_tokens:
        return pre_tokens
    from bisect import bisect_left

    recorded = _log_facts(messages)[1]
    k = bisect_left(recorded, position) - 1
    while k >= 0:
        u = messages[recorded[k]].usage
        if u is not None and u.prompt_tokens:
            return u.prompt_tokens
        k -= 1
    return 0


class _LogArrays(NamedTuple):
    """Per message of a transcript, what its log recorded: the call's time (nan:
    unknown), its output tokens (-1: not recorded) and its prompt tokens (0: none)."""

    time: Any
    out: Any
    prompt: Any
    read: Any
    """Tokens read from the cache (0: none)."""
    billed: Any
    """An API call the provider billed: an assistant message with a prompt, not made up
    by the client (Claude Code's ``<synthetic>`` replies)."""
    assistant: Any
    """The assistant messages (each a model call)."""


_log_arrays_kept: KeptFor[_LogArrays] = KeptFor(4)


def _log_arrays(messages: Sequence[Message]) -> _LogArrays:
    """The recorded usage as arrays, read once per transcript: every replay of a run
    prices the same recorded calls."""
    import numpy as np

    def read() -> _LogArrays:
        n = len(messages)
        time, out, prompt = np.full(n, np.nan), np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
        read, billed = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        at = list(_log_facts(messages)[1])
        if at:
            stamps = [reply_time(messages[i]) for i in at]
            usage = [u for i in at if (u := messages[i].usage) is not None]  # all: they recorded usage
            time[at] = [np.nan if t is None else t for t in stamps]
            out[at] = [u.output_tokens if u.output_tokens or u.prompt_tokens else -1 for u in usage]
            prompt[at] = [u.prompt_tokens for u in usage]
            read[at] = [u.cache_read_tokens for u in usage]
            billed[at] = [messages[i].role == "assistant" and u.model != SYNTHETIC_MODEL and u.prompt_tokens > 0
                          for i, u in zip(at, usage)]
        assistant = np.fromiter((m.role == "assistant" for m in messages), dtype=bool, count=n)
        return _LogArrays(time, out, prompt, read, billed, assistant)
    return _log_arrays_kept.get(messages, read)


_resets_kept: KeptFor[dict[int, int]] = KeptFor(8)


def cache_resets(messages: Sequence[Message], ttl: int, cuts: Sequence[int] = ()) -> dict[int, int]:
    """The calls at which the log's cache held far less than the call before it left
    there (message index -> the tokens it read): a call that read less than half of the
    previous call's prompt, within the cache's lifetime and with no compaction between.
    The client or the provider dropped the cached prefix there (Claude Code does on some
    new user turns and on a resumed session, keeping only its system prompt and tools);
    it is a fact of the run, as its call times are, so a simulated run, with or without a
    policy, finds no more than that in the cache at that call."""
    cut_list = tuple(sorted(cuts))
    np = _numpy()

    def read() -> dict[int, int]:
        if np is not None:
            return _cache_resets_np(messages, ttl, cut_list)
        return _cache_resets_loop(messages, ttl, cut_list)
    if not isinstance(messages, tuple):
        return read()
    return _resets_kept.get(messages, read, extra=(ttl, cut_list))


def _cache_resets_np(messages: Sequence[Message], ttl: int, cut_list: tuple[int, ...]) -> dict[int, int]:
    """``cache_resets`` over the recorded calls at once (the loop is the reference)."""
    import numpy as np

    la = _log_arrays(messages)
    at = np.flatnonzero(la.billed)
    if len(at) < 2:
        return {}
    now, then = la.time[at[1:]], la.time[at[:-1]]
    fresh = ~(now - then > ttl)  # an unknown time on either side: fresh
    cuts_a = np.asarray(cut_list, dtype=np.int64)
    cut_between = np.searchsorted(cuts_a, at[1:], side="right") > np.searchsorted(cuts_a, at[:-1], side="right")
    read = la.read[at[1:]]
    hit = fresh & ~cut_between & (2 * read < la.prompt[at[:-1]])
    return dict(zip(at[1:][hit].tolist(), read[hit].tolist()))


def _cache_resets_loop(messages: Sequence[Message], ttl: int, cut_list: tuple[int, ...]) -> dict[int, int]:
    """``cache_resets`` one recorded call at a time."""
    from bisect import bisect_right

    out: dict[int, int] = {}
    prev: tuple[int, int, float | None] | None = None
    for i in _log_facts(messages)[1]:
        m = messages[i]
        u = m.usage
        if m.role != "assistant" or u is None or u.model == SYNTHETIC_MODEL or u.prompt_tokens <= 0:
            continue
        now = reply_time(m)
        if prev is not None:
            j, held, then = prev
            cut_between = bisect_right(cut_list, i) > bisect_right(cut_list, j)
            fresh = now is None or then is None or now - then <= ttl
            if fresh and not cut_between and 2 * u.cache_read_tokens < held:
                out[i] = u.cache_read_tokens
        prev = (i, u.prompt_tokens, now)
    return out


_one_hour_kept: KeptFor[bool] = KeptFor(4)


def _writes_one_hour(messages: Sequence[Message]) -> bool:
    """Whether most of what the log wrote to the cache was written for an hour (read
    once per transcript)."""
    def read() -> bool:
        total = one_h = 0
        for i in _log_facts(messages)[1]:  # the messages that recorded usage
            u = messages[i].usage
            if u is not None:
                total += u.cache_write_tokens
                one_h += min(u.cache_write_1h_tokens, u.cache_write_tokens)
        return total > 0 and 2 * one_h > total
    return _one_hour_kept.get(messages, read)


def _log_of(result: Result) -> Sequence[Message]:
    """The messages as the log holds them (their usage), index for index with the replay's."""
    seen = result._seen
    return seen if seen and len(seen) == len(result.messages) else result.messages


_has_thinking: KeptFor[bool] = KeptFor(8)


def _thinking_facts(messages: Sequence[Message], counts: Sequence[int],
                    log: Sequence[Message] | None = None) -> tuple[list[int], list[int]] | None:
    """(thinking tokens before each message, the last user turn before each message),
    or None when no message holds thinking. A message's thinking tokens are its count's
    share of the thinking's characters. ``log``: the run as recorded, asked whether it
    holds thinking at all (a policy only ever takes thinking away), so the answer is
    kept for the run, not for each replay's messages (which the cache would keep alive)."""
    probe = log if log is not None else messages
    if not _has_thinking.get(probe, lambda: any(m.meta and m.meta.get("thinking") for m in probe)):
        return None
    think = [0]
    last_user = [0]
    turn = 0
    for i, (m, c) in enumerate(zip(messages, counts)):
        parts = (m.meta or {}).get("thinking") if m.role == "assistant" else None
        chars = sum(map(len, parts)) if parts else 0
        think.append(think[-1] + (round(c * min(1.0, chars / max(1, len(m.content)))) if chars else 0))
        if m.role == "user":
            turn = i
        last_user.append(turn)
    return think, last_user
