"""One atomic writer for every file toolclear writes (the CLI's outputs, offloaded results)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(target: Path, data: bytes, *, mode: int | None = None,
                 guard: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext) -> None:
    """Write ``data`` to ``target`` all or nothing: a temporary file beside it, flushed to
    disk, given ``mode`` (no setuid, setgid or sticky bit ever carries over), then renamed
    over the target inside ``guard`` (the CLI holds Ctrl-C there). A failure, or an
    interrupt before the rename, leaves no temporary file and the target as it was."""
    fd, tmp = tempfile.mkstemp(prefix=".toolclear-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            if mode is not None:
                os.fchmod(fh.fileno(), mode & 0o777)
        with guard():
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
