"""What the agent knew without a result, which no policy can make it lose: its tools and
their options, the libraries its code imports, its instructions file, and its own work
(the files it wrote and the names in what it wrote into them, after it wrote them)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..model import Message
from .refetch import edits, path_of, result_paths
from .terms import INSTRUCTION_FILES, library_names, message_terms, terms

__all__ = ["files_written", "known_names", "written_by_agent"]


def known_names(original: Sequence[Message]) -> frozenset[str]:
    """Names the agent knows without a result: its tools' names, its tools' options
    (``_option_values``), the libraries its code imports and their packages
    (``library_names``). A term that is one, or is qualified by one, is never lost."""
    return (frozenset(c.name for m in original for c in m.tool_calls)
            | frozenset(m.tool_name for m in original if m.tool_name)
            | _option_values(original) | library_names(original) | _instructions(original))


def files_written(original: Sequence[Message]) -> dict[str, int]:
    """The files the agent's own calls wrote (Edit, Write, ...), by their paths and each
    tail down to the file's name, with the first message that wrote each: after it, the
    agent knows what it changed (and a compaction's summary keeps that list, as Claude
    Code's does), so naming them again is not a loss."""
    out: dict[str, int] = {}
    for i, m in enumerate(original):
        for c in m.tool_calls:
            if not edits(c.name):
                continue
            path = path_of(c.arguments).strip("/")
            if not path:
                continue
            parts = path.split("/")
            for k in range(len(parts)):  # every tail, down to the file's own name
                out.setdefault("/".join(parts[k:]), i)
    return out


_NEW_TEXT = ("new_string", "new_str", "content", "file_text", "new_source")
"""Where a write call carries the text it writes (Claude Code's Edit, MultiEdit, Write and
NotebookEdit, the str_replace_editor of SWE-agent and OpenHands)."""


def _new_text(arguments: str) -> str:
    """The text a write call puts in its file: its new strings, or a patch's added lines."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        args = arguments
    if isinstance(args, str):  # a patch (Codex's apply_patch): what it adds
        return "\n".join(line[1:] for line in args.splitlines() if line.startswith("+") and not line.startswith("+++"))
    if not isinstance(args, dict):
        return ""
    out = [v for k in _NEW_TEXT if isinstance(v := args.get(k), str)]
    for e in args.get("edits") or ():
        if isinstance(e, dict) and isinstance(e.get("new_string"), str):
            out.append(e["new_string"])
    for k in ("input", "patch"):
        if isinstance(args.get(k), str):
            out.append(_new_text(json.dumps(args[k])))
    return "\n".join(out)


def written_by_agent(original: Sequence[Message]) -> dict[str, int]:
    """``files_written``, and the names the agent wrote in what its write calls put in a
    file (``buildinfo.Version`` in the code it wrote), each with the first message that
    wrote it: the agent knows what it wrote, and a compaction's summary reports it (the
    rounds judged such names after a compaction as not lost)."""
    out = files_written(original)
    for i, m in enumerate(original):
        for c in m.tool_calls:
            if edits(c.name):
                for t in terms(_new_text(c.arguments)):
                    if out.get(t, i) >= i:
                        out[t] = i
    return out


def _instructions(original: Sequence[Message]) -> frozenset[str]:
    """The terms of the agent's instructions file as a call read it (CLAUDE.md, AGENTS.md):
    the agent runs with that file in its system prompt, so what it says is not lost with
    the result that read it again."""
    out: set[str] = set()
    for i, path in result_paths(original).items():
        if path.rsplit("/", 1)[-1] in INSTRUCTION_FILES:
            out.update(message_terms(original[i]))
    return frozenset(out)


_OPTION = re.compile(r"[a-z]+(?:_[a-z]+)+")


def _option_values(original: Sequence[Message]) -> frozenset[str]:
    """Whole argument values of the agent's calls that are words joined by ``_``
    (``in_progress``, ``files_with_matches``): its tools' options, which it knows from
    their schemas, not from a result."""
    out: set[str] = set()
    for m in original:
        for c in m.tool_calls:
            if "_" not in c.arguments:
                continue
            try:
                args = json.loads(c.arguments)
            except (ValueError, RecursionError):
                continue
            if isinstance(args, dict):
                out.update(v for v in args.values() if isinstance(v, str) and _OPTION.fullmatch(v))
                for v in args.values():  # one level down: a list of todos, each with its status
                    if isinstance(v, list):
                        out.update(x for item in v if isinstance(item, dict) for x in item.values()
                                   if isinstance(x, str) and _OPTION.fullmatch(x))
    return frozenset(out)
