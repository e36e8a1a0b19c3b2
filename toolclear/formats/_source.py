"""The only place toolclear reads files: turn a user's source into (name, bytes).

A ``str`` or ``os.PathLike`` is always a path (``"[draft] run.json"`` is a file name,
not JSON); text comes as ``bytes`` or through ``text=``. Only regular files are read:
a FIFO would block forever and ``/dev/zero`` never ends, so both are refused, and a
stream is read up to ``MAX_BYTES`` and no further.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..errors import TranscriptError
from ..limits import MAX_SOURCE_BYTES, how_to_raise

__all__ = ["MAX_BYTES", "Source", "read_source", "read_stream"]

Source = str | bytes | bytearray | memoryview | os.PathLike[str] | Any
"""A path, the bytes of a transcript, or a binary file object."""

MAX_BYTES = MAX_SOURCE_BYTES
"""The most toolclear reads from one source (``limits.MAX_SOURCE_BYTES``, 2 GiB): past
it a stream is refused rather than read without bound."""

_CHUNK = 1 << 20


def _too_big(label: str, limit: int) -> TranscriptError:
    return TranscriptError(
        f"larger than {limit:,} bytes, the most toolclear reads from one source "
        f"({how_to_raise('MAX_SOURCE_BYTES')})", source=label
    )


def read_stream(stream: Any, label: str, limit: int = MAX_BYTES) -> bytes:
    """Read a binary stream to its end, refusing one longer than ``limit`` bytes."""
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "surrogatepass")
        if not isinstance(chunk, (bytes, bytearray)):
            raise TranscriptError("the stream did not give bytes", source=label)
        if not chunk:
            return b"".join(parts)
        parts.append(bytes(chunk))
        total += len(chunk)
        if total > limit:
            raise _too_big(label, limit)


def _read_path(path: Path, label: str, limit: int) -> bytes:
    if "\x00" in str(path):
        raise TranscriptError("a file name cannot contain a NUL character", source=repr(str(path)))
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise TranscriptError("is a folder, not a transcript file", source=label)
        if not stat.S_ISREG(info.st_mode):
            kind = (
                "a named pipe (FIFO)" if stat.S_ISFIFO(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "not a regular file"
            )
            raise TranscriptError(
                f"is {kind}, not a regular file; save the transcript to a file first (or pipe it to '-')",
                source=label,
            )
        if info.st_size > limit:
            raise _too_big(label, limit)
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, open does not hang
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise TranscriptError("is not a regular file", source=label)
            data = fh.read()  # one buffer of the file's size (a stream's chunks would double the peak)
        if len(data) > limit:  # grew since the stat
            raise _too_big(label, limit)
        return data
    except TranscriptError:
        raise
    except FileNotFoundError:
        raise TranscriptError("no such file", source=label) from None
    except PermissionError:
        raise TranscriptError("permission denied", source=label) from None
    except OSError as exc:
        raise TranscriptError(f"cannot read: {exc.strerror or exc}", source=label) from None
    except ValueError as exc:  # e.g. an embedded NUL the OS refused
        raise TranscriptError(f"not a usable file name: {exc}", source=repr(label)) from None


def read_source(
    source: Source, name: str | None = None, *, text: str | None = None, limit: int = MAX_BYTES
) -> tuple[str, bytes]:
    """Read a path, bytes, text (``text=``) or binary file object; the name is for error messages."""
    if text is not None:
        if source is not None:
            raise TranscriptError("give either a source or text=, not both")
        if not isinstance(text, str):
            raise TranscriptError(f"text= takes a str, got {type(text).__name__}")
        return name or "<text>", text.encode("utf-8", "surrogatepass")
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > limit:
            raise _too_big(name or "<bytes>", limit)
        return name or "<bytes>", data
    if isinstance(source, (str, os.PathLike)):
        try:
            path = Path(source)
        except TypeError as exc:
            raise TranscriptError(f"not a usable path: {exc}") from None
        label = name or str(path)
        return label, _read_path(path, label, limit)
    read = getattr(source, "read", None)
    if callable(read):
        label = str(name or getattr(source, "name", None) or "<stream>")
        return label, read_stream(source, label, limit)
    raise TranscriptError(
        f"cannot read a transcript from {type(source).__name__}; give a path, bytes, a binary file, "
        "or text=..."
    )
