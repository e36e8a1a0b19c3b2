"""Zip and tar archives of transcripts, read once, in one pass, within a budget.

An archive is listed once and its members are read in the order they are stored, each
archive opened once for all of them (a tar.gz is decompressed once, not once per
member). What is decompressed is budgeted: a member may grow to ``MEMBER_FLOOR`` bytes,
or ``RATIO`` times its compressed size when that is more; an archive as a whole to
``ARCHIVE_FLOOR`` or ``RATIO`` times its size. Past the budget a member is an error of
its own (a decompression bomb), as is a damaged, encrypted or oddly compressed member;
no link inside an archive is followed. The rest is read.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from typing import IO, NamedTuple

from ..limits import ARCHIVE_FLOOR, MEMBER_FLOOR, RATIO, how_to_raise

__all__ = ["ARCHIVE_FLOOR", "DAMAGED", "MEMBER_FLOOR", "RATIO", "Member", "is_archive", "list_members",
           "read_member", "read_members"]

DAMAGED = (OSError, KeyError, EOFError, RuntimeError, NotImplementedError, ValueError, tarfile.TarError,
           zipfile.BadZipFile, zlib.error)
"""What a damaged, encrypted or oddly compressed member raises: that member's error."""
_CHUNK = 1 << 20


class Member(NamedTuple):
    """A regular file inside an archive: its name and its place in the archive's order."""

    name: str
    position: int


class BudgetError(ValueError):
    """A member decompresses past its budget."""


def is_archive(path: str | os.PathLike[str]) -> bool:
    try:
        return zipfile.is_zipfile(path) or tarfile.is_tarfile(path)
    except DAMAGED:  # a truncated .gz: not an archive to list; reading it says what is wrong
        return False


def list_members(path: str | os.PathLike[str]) -> list[Member]:
    """The regular files of an archive, in the order they are stored (links, folders and
    devices left out)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return [Member(i.filename, k) for k, i in enumerate(zf.infolist()) if not i.is_dir()]
    limit = max(ARCHIVE_FLOOR, RATIO * os.path.getsize(path))
    with tarfile.open(path, mode="r|*") as tf:  # a stream: one pass, members not kept
        return [Member(m.name, k) for k, m in enumerate(_bounded(tf, path, limit)) if m.isfile()]


def _bounded(tf: tarfile.TarFile, path: str | os.PathLike[str], limit: int) -> Iterator[tarfile.TarInfo]:
    """The members of a tar stream, refused once the stream would have to decompress past
    ``limit`` bytes to reach the next header: tarfile skips a member's data itself (a link
    or an unwanted member whose header claims gigabytes of a compressed stream), and that
    decompression counts against no member's budget."""
    for m in tf:
        if m.offset_data + (m.size if m.isreg() or m.type not in tarfile.SUPPORTED_TYPES else 0) > limit:
            raise BudgetError(f"{os.fspath(path)}: its member {m.name!r} reaches past {limit:,} decompressed bytes, "
                              f"the budget for the archive's size (a decompression bomb?); not read "
                              f"({how_to_raise('ARCHIVE_FLOOR')})")
        yield m


def _capped(fh: IO[bytes], name: str, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = fh.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > limit:
            raise BudgetError(f"{name}: decompresses to more than {limit:,} bytes, past the budget for its size "
                              f"(a decompression bomb?); not read ({how_to_raise('MEMBER_FLOOR')})")
        parts.append(chunk)


def _member_limit(compressed: int, left: int) -> int:
    return min(max(MEMBER_FLOOR, RATIO * compressed), left)


def read_members(path: str | os.PathLike[str], wanted: Mapping[int, str]
                 ) -> Iterator[tuple[int, bytes | None, str | None]]:
    """(index, bytes, None) or (index, None, error) for every wanted member (index ->
    name for messages), in the archive's order, the archive read once."""
    size = os.path.getsize(path)
    budget = [max(ARCHIVE_FLOOR, RATIO * size)]  # what the archive may still decompress to
    if zipfile.is_zipfile(path):
        yield from _zip_members(path, wanted, budget)
    else:
        yield from _tar_members(path, wanted, size, budget)


def _take(fh: IO[bytes] | None, name: str, compressed: int, budget: list[int]) -> bytes:
    if fh is None:
        raise BudgetError(f"{name}: not a regular file (a link is not followed)")
    data = _capped(fh, name, min(max(MEMBER_FLOOR, RATIO * compressed), budget[0]))
    budget[0] -= len(data)
    return data


def _zip_members(path: str | os.PathLike[str], wanted: Mapping[int, str], budget: list[int]
                 ) -> Iterator[tuple[int, bytes | None, str | None]]:
    with zipfile.ZipFile(path) as zf:
        for k, info in enumerate(zf.infolist()):
            if k not in wanted:
                continue
            try:
                with zf.open(info) as fh:
                    data = _take(fh, wanted[k], info.compress_size, budget)
            except (BudgetError, *DAMAGED) as exc:
                yield k, None, _why(wanted[k], exc)
                continue
            yield k, data, None


def _tar_members(path: str | os.PathLike[str], wanted: Mapping[int, str], size: int, budget: list[int]
                 ) -> Iterator[tuple[int, bytes | None, str | None]]:
    seen = set()
    broke: BaseException | None = None
    try:
        with tarfile.open(path, mode="r|*") as tf:  # a stream: decompressed once, front to back
            for k, m in enumerate(_bounded(tf, path, budget[0])):
                if k not in wanted:
                    continue
                seen.add(k)
                try:
                    data = _take(tf.extractfile(m) if m.isfile() else None, wanted[k], size, budget)
                except (BudgetError, *DAMAGED) as exc:
                    yield k, None, _why(wanted[k], exc)
                    continue
                yield k, data, None
    except (BudgetError, *DAMAGED) as exc:  # the stream ends early, breaks or grows too far: the rest say so
        broke = exc
    for j, name in wanted.items():
        if j not in seen:
            yield j, None, _why(name, broke) if broke is not None else f"{name}: not found in the archive"


def read_member(path: str | os.PathLike[str], index: int, name: str) -> bytes:
    """One member's bytes (opening one run of a corpus); raises ValueError with why."""
    for _, data, error in read_members(path, {index: name}):
        if error is not None:
            raise BudgetError(error)
        assert data is not None
        return data
    raise BudgetError(f"{name}: not found in the archive")


def _why(name: str, exc: BaseException) -> str:
    if isinstance(exc, BudgetError):
        return str(exc)
    return f"{name}: cannot read it: {type(exc).__name__}: {exc}"
