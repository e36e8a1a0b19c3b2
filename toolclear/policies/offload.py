"""Large-result offloading: store one huge tool result, hand the model a notice.

Faithful to eino's ``ToolResultOffloading`` (pinned by the conformance vectors):

* the decision is ``tokens(result) > 4 * limit``. eino's field comment speaks of
  characters, but with the default counter this means **more than 16 x limit UTF-8
  bytes**: 320,001 bytes at the default limit of 20,000;
* the path is ``/large_tool_result/<tool_call_id>`` with the id pasted in as is;
* the notice is filled in one pass and shows the first 10 lines (split on ``\\n`` only,
  each cut to 1000 code points; a line over 65,535 bytes silently ends the sample).

Storage is a small protocol: ``MemoryBackend`` keeps the reference's virtual paths;
``LocalDirBackend`` writes real files, atomically, and never outside its root whatever
a tool-call id holds. A failed write leaves the result in the conversation.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from .._files import atomic_write
from ..counters import DEFAULT_COUNTER, TokenCounter, count_tokens, get_counter, utf8_len
from ..errors import ConfigError, OffloadError
from ..model import Message

__all__ = [
    "DEFAULT_OFFLOADING_TOKEN_LIMIT",
    "DEFAULT_READ_FILE_TOOL_NAME",
    "LocalDirBackend",
    "MemoryBackend",
    "OffloadRecord",
    "Offloaded",
    "StorageBackend",
    "ToolResultOffloadingConfig",
    "default_path",
    "notice",
    "offload",
    "offload_messages",
]

DEFAULT_OFFLOADING_TOKEN_LIMIT = 20_000
DEFAULT_READ_FILE_TOOL_NAME = "read_file"
_SAMPLE_LINES = 10
_LINE_CODE_POINTS = 1000
_MAX_LINE_BYTES = 65_535  # bufio.Scanner's default token size, less the newline


def default_path(tool_call_id: str) -> str:
    """eino's default path: the call id pasted in as is (it may even be empty)."""
    return "/large_tool_result/" + tool_call_id


@dataclass(frozen=True, slots=True)
class ToolResultOffloadingConfig:
    """Settings of the offloading policy, taken literally (0 means 0)."""

    offloading_token_limit: int = DEFAULT_OFFLOADING_TOKEN_LIMIT
    """A result is offloaded when its tokens exceed 4 x this (the reference's real rule)."""

    read_file_tool_name: str = DEFAULT_READ_FILE_TOOL_NAME
    """The tool the notice tells the model to read the file with."""

    path_generator: Callable[[str], str] | None = None
    """Maps a tool-call id to a path; ``None`` means ``/large_tool_result/<id>``."""

    token_counter: str | TokenCounter = DEFAULT_COUNTER
    """A counter name or a callable ``Message -> int``."""

    def __post_init__(self) -> None:
        limit = self.offloading_token_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ConfigError(f"offloading_token_limit: expected a whole number >= 0, got {limit!r}")
        if not isinstance(self.read_file_tool_name, str):
            raise ConfigError(f"read_file_tool_name: expected a string, got {self.read_file_tool_name!r}")
        if self.path_generator is not None and not callable(self.path_generator):
            raise ConfigError("path_generator: expected a callable id -> path or None")

    def trigger_note(self) -> str:
        """What the limit means in bytes: eino's comment and its code disagree."""
        limit = self.offloading_token_limit
        return (f"eino's comment says a result is offloaded above {4 * limit:,} characters (4 × limit). "
                f"The real trigger is tokens > 4 × limit, i.e. more than {16 * limit:,} UTF-8 bytes "
                f"(≈ {4 * limit:,} tokens). At eino's default limit (20,000) that is 320,001 bytes.")

    @classmethod
    def from_eino(
        cls,
        offloading_token_limit: int = 0,
        read_file_tool_name: str = "",
        path_generator: Callable[[str], str] | None = None,
        token_counter: str | TokenCounter | None = None,
    ) -> ToolResultOffloadingConfig:
        """Read settings the way eino does: 0 and "" mean the defaults."""
        return cls(
            offloading_token_limit=offloading_token_limit or DEFAULT_OFFLOADING_TOKEN_LIMIT,
            read_file_tool_name=read_file_tool_name or DEFAULT_READ_FILE_TOOL_NAME,
            path_generator=path_generator,
            token_counter=token_counter or DEFAULT_COUNTER,
        )

    @property
    def trigger_tokens(self) -> int:
        """Results with more tokens than this are offloaded (4 x the limit)."""
        return 4 * self.offloading_token_limit


@runtime_checkable
class StorageBackend(Protocol):
    """Where offloaded results go. ``write`` returns where the content really is;
    ``read`` gives back what was written there and ``list`` every location written
    (exports read through them, whatever the backend)."""

    def write(self, path: str, content: str) -> str: ...

    def read(self, location: str) -> str: ...

    def list(self) -> list[str]: ...


class MemoryBackend:
    """Keeps offloaded results in ``files`` (path -> content), like eino's in-memory
    backend; a different result under a path already used goes to ``path~2``, ... so
    nothing is overwritten."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def write(self, path: str, content: str) -> str:
        target, n = path, 1
        while target in self.files and self.files[target] != content:
            n += 1
            target = f"{path}~{n}"
        self.files[target] = content
        return target

    def read(self, location: str) -> str:
        try:
            return self.files[location]
        except KeyError:
            raise OffloadError(f"nothing was offloaded to {location!r}") from None

    def list(self) -> list[str]:
        return sorted(self.files)


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{i}" for i in range(10)] + [f"lpt{i}" for i in range(10)]
)


def _safe_name(name: str) -> str:
    """The name itself when it is a plain file name, else a hash of it: one-to-one, and
    a hashed name can never equal a plain one (plain names never start 'sha256-')."""
    if (
        _SAFE_NAME.fullmatch(name)
        and not name.startswith("sha256-")
        and name.split(".")[0].lower() not in _WINDOWS_DEVICES
    ):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return "sha256-" + digest


def storage_name(path: str) -> str:
    """The relative file name a virtual offload path is stored under, on disk and in
    zips: ``<dir>/<name>``, one-to-one and always encodable (see ``LocalDirBackend``)."""
    parts = path.lstrip("/").split("/", 1)
    if len(parts) == 2 and _SAFE_NAME.fullmatch(parts[0]) and _safe_name(parts[0]) == parts[0]:
        folder, rest = parts
    else:
        folder, rest = "offloaded", path
    return f"{folder}/{_rest_name(rest)}"


def _rest_name(rest: str) -> str:
    """One file name for the rest of the path: itself when plain; plain names joined by
    '+' when it has several (eino's ``clear/<id>``: ``clear+<id>``; '+' is never in a
    plain name, so this stays one-to-one); else a hash."""
    segments = rest.split("/")
    if len(segments) > 1 and all(_safe_name(s) == s for s in segments) and len(rest) <= 128:
        return "+".join(segments)
    return _safe_name(rest)


class LocalDirBackend:
    """Writes offloaded results as files under ``root``.

    A path ``/<dir>/<rest>`` goes to ``root/<dir>/<name>``: ``<dir>`` is kept when it is a
    plain name (``large_tool_result``), and ``<rest>`` (the call id with the default
    paths) becomes one file name: itself when it is a plain name, else
    ``sha256-<hex of it>``. So ``../``, absolute paths, NUL, backslashes, empty and very
    long ids all land inside ``root``, two different ids never share a file, and a
    repeated id with a different result gets ``~2``, ``~3``, ... Writes are atomic: a
    temporary file in the same folder, flushed and renamed over the target.

    ``write`` returns the virtual path (``/large_tool_result/<id>``, or ``<path>~2`` for a
    second result under it), as eino's notice says, never this machine's folder: the
    same run gives the same notice wherever it is stored. ``file`` maps it to the disk.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(os.fspath(root)))
        self._files: dict[str, Path] = {}

    def locate(self, path: str) -> Path:
        """The file a virtual path maps to (before de-duplication)."""
        return self.root / storage_name(path)

    def write(self, path: str, content: str) -> str:
        data = content.encode("utf-8", "surrogatepass")
        base = self.locate(path)
        folder = base.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            real = Path(os.path.realpath(folder))
            if real != self.root and self.root not in real.parents:
                raise OffloadError(f"refusing to write outside {self.root}: {folder} leads to {real}")
            target, n, exists = base, 1, True
            while True:
                taken = self._files.get(path if n == 1 else f"{path}~{n}")
                if taken is not None and taken != target:
                    # that location already names another file (an id that itself ends in ~2): one
                    # location, one result, or reading the notice's path returns the wrong result
                    n += 1
                    target = base.with_name(f"{base.name}~{n}")
                    continue
                try:
                    info = os.lstat(target)
                except FileNotFoundError:
                    exists = False
                    break
                if stat.S_ISLNK(info.st_mode):
                    raise OffloadError(f"refusing to write through the symbolic link {target}")
                if not stat.S_ISREG(info.st_mode):
                    # a FIFO or device planted here would block or swallow the write
                    raise OffloadError(f"refusing to write over {target}: it is not a regular file")
                if info.st_size == len(data) and _read_regular(target) == data:
                    break
                n += 1
                target = base.with_name(f"{base.name}~{n}")
            if not exists:
                atomic_write(target, data)
        except OffloadError:
            raise
        except OSError as exc:
            raise OffloadError(f"could not write {base}: {exc.strerror or exc}") from exc
        virtual = path if n == 1 else f"{path}~{n}"
        self._files[virtual] = target
        return virtual

    def file(self, location: str) -> Path:
        """The file on disk behind a location ``write`` returned or ``list`` gave (a path
        inside the root is taken as it is); never a file outside the root."""
        found = self._files.get(location)
        if found is None:
            given = Path(location)
            inside = given.is_absolute() and (self.root in given.parents)
            # a path as ``list`` gives it is taken literally, but only a plain one: with a
            # '..' or '.' segment ('../large_tool_result/victim') it is an id, stored under
            # its own name, never another call's file that the path happens to reach
            plain = all(seg not in ("", ".", "..") for seg in location.strip("/").split("/"))
            found = given if inside and plain else self.root / location.lstrip("/") if plain else self.locate(location)
            if not found.exists():
                found = self.locate(location)
        real = Path(os.path.realpath(found))
        if self.root not in real.parents:
            raise OffloadError(f"{location} is not inside {self.root}")
        return real

    def read(self, location: str) -> str:
        """Read back a result this backend wrote (by the location ``write`` returned)."""
        real = self.file(location)
        try:
            return _read_regular(real).decode("utf-8", "surrogatepass")
        except OSError as exc:
            raise OffloadError(f"could not read {location}: {exc.strerror or exc}") from exc

    def list(self) -> list[str]:
        """Every offloaded file under the root as ``/<path inside the root>`` (temporary
        files of unfinished writes excluded)."""
        if not self.root.is_dir():
            return []
        return sorted(
            "/" + p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
            if p.is_file() and not p.is_symlink() and not p.name.startswith(".toolclear-")
        )


def _read_regular(path: Path) -> bytes:
    """A regular file's bytes; opening never blocks (O_NONBLOCK) and anything else is refused."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OffloadError(f"{path} is not a regular file")
        return fh.read()


def _content_sample(result: str) -> str:
    data = result.encode("utf-8", "surrogatepass")
    if not data:
        return ""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    out = []
    for n, line in enumerate(lines[:_SAMPLE_LINES], start=1):
        if len(line) > _MAX_LINE_BYTES:
            break
        if line.endswith(b"\r"):
            line = line[:-1]
        text = line.decode("utf-8", "surrogatepass")[:_LINE_CODE_POINTS]
        out.append(f"{n}: {text}\n")
    return "".join(out)


def notice(tool_call_id: str, file_path: str, read_file_tool_name: str, result: str) -> str:
    """The text the model receives instead of an offloaded result (one-pass fill)."""
    name = read_file_tool_name
    return (
        f"Tool result too large, the result of this tool call {tool_call_id} was saved in the "
        f"filesystem at this path: {file_path}\n"
        f"You can read the result from the filesystem by using the '{name}' tool, but make sure "
        f"to only read part of the result at a time.\n"
        f"You can do this by specifying an offset and limit in the '{name}' tool call.\n"
        f"For example, to read the first 100 lines, you can use the '{name}' tool with "
        f"offset=0 and limit=100.\n"
        f"\n"
        f"Here are the first 10 lines of the result:\n"
        f"{_content_sample(result)}"
    )


@dataclass(frozen=True, slots=True)
class Offloaded:
    """What offloading one tool result did."""

    offloaded: bool
    path: str | None
    """Where the full result is (None when not offloaded)."""
    message: str
    """What the model receives: the notice when offloaded, else the result unchanged."""
    token_count: int = 0
    error: str | None = None
    """Why the write failed; the result then stays in the conversation."""


def offload(
    result: str,
    tool_call_id: str,
    tool_name: str,
    config: ToolResultOffloadingConfig | None = None,
    backend: StorageBackend | None = None,
) -> Offloaded:
    """Offload one tool result if it is too large; write it only when offloaded."""
    config = config or ToolResultOffloadingConfig()
    probe = Message(role="tool", content=result, tool_call_id=tool_call_id, tool_name=tool_name)
    tokens = count_tokens((probe,), get_counter(config.token_counter))[0]
    if tokens <= config.trigger_tokens:
        return Offloaded(False, None, result, tokens)
    gen = config.path_generator or default_path
    backend = backend if backend is not None else MemoryBackend()
    try:
        path = gen(tool_call_id)
        if not isinstance(path, str):
            raise OffloadError(f"path_generator returned {path!r}, not a string")
        where = backend.write(path, result)
    except (OSError, ValueError) as exc:
        return Offloaded(False, None, result, tokens, error=f"{type(exc).__name__}: {exc}")
    return Offloaded(
        True, where, notice(tool_call_id, where, config.read_file_tool_name, result), tokens
    )


@dataclass(frozen=True, slots=True)
class OffloadRecord:
    """Per tool result of a pipeline run: whether and where it was offloaded."""

    index: int
    offloaded: bool
    path: str | None
    tokens: int
    bytes: int
    error: str | None = None
    original: Message | None = field(default=None, repr=False, compare=False)


def offload_messages(
    messages: Sequence[Message],
    config: ToolResultOffloadingConfig,
    backend: StorageBackend | None = None,
) -> tuple[tuple[Message, ...], tuple[OffloadRecord | None, ...]]:
    """Offload every tool result as it arrives; returns the new messages and, per
    message, a record (None for messages that are not tool results)."""
    backend = backend if backend is not None else MemoryBackend()
    out: list[Message] = []
    records: list[OffloadRecord | None] = []
    for i, m in enumerate(messages):
        if m.role != "tool":
            out.append(m)
            records.append(None)
            continue
        done = offload(m.content, m.tool_call_id, m.tool_name, config, backend)
        out.append(m.with_content(done.message) if done.offloaded else m)
        records.append(
            OffloadRecord(
                index=i,
                offloaded=done.offloaded,
                path=done.path,
                tokens=done.token_count,
                bytes=utf8_len(m.content),
                error=done.error,
                original=m,
            )
        )
    return tuple(out), tuple(records)
