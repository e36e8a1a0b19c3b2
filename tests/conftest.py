"""Shared fixtures: the copied corpus and conformance vectors, and no tiktoken downloads."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "corpus"
SAMPLES = ROOT / "sample_data"

CORPUS_FILES = sorted(
    p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in {".json", ".jsonl", ".traj", ".yaml"}
)
SAMPLE_FILES = sorted(p for p in SAMPLES.iterdir() if p.suffix in {".json", ".jsonl"})


def load_vectors(kind: str | None = None) -> list[dict]:
    with gzip.open(DATA / "eino_vectors.jsonl.gz", "rt", encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    return [c for c in cases if kind is None or c["kind"] == kind]


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.fixture(autouse=True)
def _no_tiktoken_downloads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must never reach the network through tiktoken (it would hang here)."""
    try:
        import tiktoken.load
    except ImportError:  # pragma: no cover
        return
    real = tiktoken.load.read_file

    def guarded(path: str) -> bytes:
        if "://" in path:
            raise RuntimeError(f"offline: tiktoken tried to download {path}")
        return real(path)

    monkeypatch.setattr(tiktoken.load, "read_file", guarded)


def hypothesis_examples(default: int) -> int:
    """Examples per property: small in CI, TOOLCLEAR_HYPOTHESIS_EXAMPLES=1000 for the long run."""
    return int(os.environ.get("TOOLCLEAR_HYPOTHESIS_EXAMPLES", default))
