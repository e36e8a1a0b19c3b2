"""Re-fetch: the agent made the same call again (or read the same file again) after the
policy cleared or a compaction dropped the earlier result, so it needed that result,
whatever names a summary kept. Part of ``losses``."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from ..model import Message

__all__ = ["REFETCHED", "edits", "path_in", "path_of", "refetched"]


REFETCHED = "(fetched again)"
"""The term a lost reference holds when the agent made the same call again (or read the
same file) after its earlier result was cleared or compacted away: it paid to get it back,
so it needed it, whatever names a summary kept."""

_PATH_KEYS = ("file_path", "path", "filename", "file", "absolute_path", "target_file")
_READS = ("read", "view", "open", "cat", "get_file")
_WRITES = ("write", "edit", "replace", "create", "patch", "insert", "delete", "move", "rename")
"""Tools whose name says they change files: a read after one is new content, not a re-fetch."""


def path_of(arguments: str) -> str:
    """The file a call's raw arguments name (``path_in`` of them parsed), or "" when they
    are not JSON or name none."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return ""
    return path_in(args)


def result_paths(original: Sequence[Message]) -> dict[int, str]:
    """Result index -> the file its call named (``path_of``), for every result whose call
    named one."""
    calls = {c.id: c for m in original for c in m.tool_calls if c.id}
    return {i: p for i, m in enumerate(original)
            if m.role == "tool" and (c := calls.get(m.tool_call_id)) is not None and (p := path_of(c.arguments))}


def path_in(args: Any) -> str:
    """The file a call's parsed arguments name (``file_path``, ``path``, ...), or ""."""
    if isinstance(args, dict):
        for key in _PATH_KEYS:
            if isinstance(args.get(key), str) and args[key]:
                return str(args[key])
    return ""


def _call_keys(name: str, arguments: str) -> list[tuple[str, str]]:
    """What makes two calls fetch the same thing: the same tool with the same arguments,
    or a read of the same file (whatever else its arguments say: an offset, a limit)."""
    if any(w in name.lower() for w in _READS) and (path := path_of(arguments)):
        return [("<file>", path)]  # a read of a file: by the file, which a write makes new
    return [(name, " ".join(arguments.split()))]


_FAILED = ("<tool_use_error>", "<system-reminder>Warning: the file exists but is shorter", "Error: ",
           "File does not exist")
"""How a tool's result says it failed (Claude Code's forms): nothing was fetched."""


def _failed(content: str) -> bool:
    return content.lstrip().startswith(_FAILED)


def edits(name: str) -> bool:
    """Whether a tool's name says it changes files (Edit, Write, apply_patch, ...)."""
    low = name.lower()
    return any(w in low for w in _WRITES)


def _writes(name: str, arguments: str) -> str | None:
    """The file a call changes ("" when it may change any: a shell command), or None
    when its name says it only reads."""
    if edits(name):
        return path_of(arguments)
    low = name.lower()
    if any(w in low for w in ("bash", "shell", "exec", "run", "command", "terminal")):
        return ""
    return None


def refetched(original: Sequence[Message], cleared_at: Sequence[int | None], facts: Any) -> list[tuple[int, int]]:
    """(call, result) for each result fetched again by a later call while it was out of
    that call's context: each result charged once (at the first re-fetch). Only the
    latest earlier result of the same call is charged: it is the one fetched again (an
    older read of the same file was superseded by it). Which call re-fetches which
    result is the same for every replay of a run: found once and kept on ``facts`` (the
    run's facts, ``losses._RunFacts``)."""
    out: list[tuple[int, int]] = []
    charged: set[int] = set()
    for k, i in _refetch_pairs(original, facts):
        at = cleared_at[i] if i < len(cleared_at) else None
        if at is not None and at <= k and i not in charged:
            charged.add(i)
            out.append((k, i))
    return out


def _after_writes(m: Message, latest: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """What is still current after an assistant message's calls: a write makes its file
    new, and a write or a shell command may change what any command prints (tests run
    again after an edit), so no same-call repeat after it is a re-fetch."""
    for c in m.tool_calls:
        changed = _writes(c.name, c.arguments)
        if changed is None:
            continue
        if changed:
            latest.pop(("<file>", changed), None)
        latest = {key: i for key, i in latest.items() if key[0] == "<file>"}
    return latest


def _refetch_pairs(original: Sequence[Message], facts: Any) -> Iterable[tuple[int, int]]:
    """Every (call, the latest earlier result of the same call or the same file read,
    with no write to that file between, and for a repeated command no command between
    that may have changed things), in call order, kept with the run's other facts."""
    if facts.refetch is not None:
        return zip(*facts.refetch)
    call_of: dict[str, list[tuple[str, str]]] = {}
    latest: dict[tuple[str, str], int] = {}  # key -> the latest earlier result
    pairs: list[tuple[int, int]] = []
    for k, m in enumerate(original):
        if m.role == "assistant" and m.tool_calls:
            for c in m.tool_calls:
                if edits(c.name):
                    continue  # a write made again (the first failed) fetches nothing
                keys = _call_keys(c.name, c.arguments)
                for key in keys:
                    i = latest.get(key, -1)
                    if i >= 0:
                        pairs.append((k, i))
                if c.id:
                    call_of[c.id] = keys
            latest = _after_writes(m, latest)
        elif m.role == "tool":
            if _failed(m.content):
                continue  # an error fetched nothing: making the call again is not fetching it back
            for key in call_of.get(m.tool_call_id, ()):
                latest[key] = k
    # kept as two int64 arrays: as tuples, 50,000 pairs took 6 MB
    facts.refetch = (array("q", (k for k, _ in pairs)), array("q", (i for _, i in pairs)))
    return pairs