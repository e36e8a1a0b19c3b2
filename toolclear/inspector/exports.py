"""Bytes for downloads: eino JSON, the report as CSV / JSON, offloaded files as a zip."""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..model import Message
from ..policies.offload import LocalDirBackend, OffloadRecord, StorageBackend, storage_name
from ..runs.report import ROW_FIELDS, csv_cell, json_bytes, table_csv

__all__ = ["csv_cell", "eino_json", "json_bytes", "offloaded_zip", "report_csv", "report_json", "table_csv"]




def eino_json(messages: Sequence[Message]) -> bytes:
    """The conversation as a JSON list of eino messages."""
    return json_bytes([m.to_dict() for m in messages])


def report_csv(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The per-message report as CSV (one row per message, ``ROW_FIELDS`` as columns)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(ROW_FIELDS), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_cell(row.get(k)) for k in ROW_FIELDS})
    return buf.getvalue().encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")


def report_json(report: Mapping[str, Any]) -> bytes:
    return json_bytes(report)


def _unique(name: str, taken: set[str]) -> str:
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}~{n}"
    taken.add(name)
    return name


def offloaded_zip(
    records: Iterable[OffloadRecord | None], backend: StorageBackend, transcript: tuple[str, bytes] | None = None
) -> bytes:
    """A zip of every offloaded result (and, if given, the reduced transcript beside
    them). Entry names are the names the results get on disk (``storage_name``):
    one-to-one and encodable, so no two results share an entry whatever their ids."""
    buf = io.BytesIO()
    taken: set[str] = set()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        if transcript is not None:
            name, data = transcript
            plain = name.replace("\\", "/").rsplit("/", 1)[-1]
            safe = plain if plain.isprintable() and plain not in ("", ".", "..") and plain.isascii() else "transcript"
            zf.writestr(_unique(safe, taken), data)
        for r in records:
            if r is None or not r.offloaded or r.path is None:
                continue
            content = backend.read(r.path)
            if isinstance(backend, LocalDirBackend):
                entry = backend.file(r.path).relative_to(backend.root).as_posix()
            else:
                entry = storage_name(r.path)
            zf.writestr(_unique(entry, taken), content.encode("utf-8", "surrogatepass"))
    return buf.getvalue()
