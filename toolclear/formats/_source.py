"""The only place toolclear reads files: turn a user's source into (name, bytes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import TranscriptError

__all__ = ["Source", "read_source"]

Source = str | bytes | bytearray | memoryview | os.PathLike[str] | Any
"""A path, the bytes or text of a transcript, or a binary file object."""


def _looks_like_text(value: str) -> bool:
    head = value.lstrip()[:1]
    return head in ("{", "[") or "\n" in value or value.strip() == ""


def read_source(source: Source, name: str | None = None) -> tuple[str, bytes]:
    """Read a path, bytes, text or file object; the name is for error messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return name or "<bytes>", bytes(source)
    if isinstance(source, str) and _looks_like_text(source):
        return name or "<text>", source.encode("utf-8", "surrogatepass")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = name or str(path)
        try:
            if path.is_dir():
                raise TranscriptError("is a folder, not a transcript file", source=label)
            return label, path.read_bytes()
        except FileNotFoundError:
            raise TranscriptError("no such file", source=label) from None
        except PermissionError:
            raise TranscriptError("permission denied", source=label) from None
        except OSError as exc:
            raise TranscriptError(f"cannot read: {exc.strerror or exc}", source=label) from None
    read = getattr(source, "read", None)
    if callable(read):
        label = name or getattr(source, "name", None) or "<stream>"
        data = read()
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        if not isinstance(data, (bytes, bytearray)):
            raise TranscriptError("the stream did not give bytes", source=str(label))
        return str(label), bytes(data)
    raise TranscriptError(
        f"cannot read a transcript from {type(source).__name__}; give a path, bytes, text or a file"
    )
