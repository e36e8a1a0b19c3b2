"""Bytes for downloads: eino JSON, the report as CSV / JSON, offloaded files as a zip."""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

from .formats._doc import JsonStyle
from .model import Message
from .offload import LocalDirBackend, MemoryBackend, OffloadRecord, StorageBackend
from .report import ROW_FIELDS

__all__ = ["eino_json", "json_bytes", "offloaded_zip", "report_csv", "report_json"]


_PRETTY = JsonStyle(indent=2, item_sep=",", key_sep=": ", ensure_ascii=False)


def json_bytes(value: Any) -> bytes:
    """UTF-8 JSON, indented, non-ASCII kept as is; a lone surrogate (which UTF-8 cannot
    hold) is kept as its escape, so the value reads back exactly."""
    return (_PRETTY.dumps(value) + "\n").encode("utf-8")


def eino_json(messages: Sequence[Message]) -> bytes:
    """The conversation as a JSON list of eino messages."""
    return json_bytes([m.to_dict() for m in messages])


def report_csv(rows: Iterable[dict[str, Any]]) -> bytes:
    """The per-message report as CSV (one row per message, ``ROW_FIELDS`` as columns)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(ROW_FIELDS), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in ROW_FIELDS})
    return buf.getvalue().encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")


def report_json(report: dict[str, Any]) -> bytes:
    return json_bytes(report)


def _arcname(path: str, taken: set[str]) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    name = "/".join(parts) or "offloaded"
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}~{n}"
    taken.add(name)
    return name


def offloaded_zip(
    records: Iterable[OffloadRecord | None], backend: StorageBackend, transcript: tuple[str, bytes] | None = None
) -> bytes:
    """A zip of every offloaded result (and, if given, the reduced transcript beside them)."""
    buf = io.BytesIO()
    taken: set[str] = set()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        if transcript is not None:
            name, data = transcript
            zf.writestr(_arcname(name, taken), data)
        for r in records:
            if r is None or not r.offloaded or r.path is None:
                continue
            if isinstance(backend, MemoryBackend):
                content = backend.files[r.path]
            elif isinstance(backend, LocalDirBackend):
                content = backend.read(r.path)
            else:
                raise TypeError(f"cannot read offloaded files back from {type(backend).__name__}")
            path = r.path
            if isinstance(backend, LocalDirBackend):
                path = str(r.path)[len(str(backend.root)) :]
            zf.writestr(_arcname(path, taken), content.encode("utf-8", "surrogatepass"))
    return buf.getvalue()
