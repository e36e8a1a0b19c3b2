"""toolclear.corpus.archives: archives read once, in one pass, within a budget; every damaged
or oversized member its own error, the rest read."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

import toolclear as tc
from toolclear.corpus import archives

from ..conftest import CORPUS

GOOD = next((CORPUS / "eino").glob("*.jsonl")).read_bytes()
CONFIG = [tc.ClearToolResultConfig()]


def zip_of(path, members: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)


def test_a_zip_is_opened_once_to_list_and_once_to_read(tmp_path, monkeypatch) -> None:
    zip_of(tmp_path / "runs.zip", [(f"r{k}.jsonl", GOOD) for k in range(40)])
    corpus = tc.load_corpus(tmp_path / "runs.zip")
    opened = []
    real = zipfile.ZipFile.__init__

    def counting(self, *args, **kwargs):
        opened.append(args[0] if args else kwargs.get("file"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counting)
    sweep = tc.sweep_corpus(corpus, CONFIG, engine="serial")
    assert len(sweep.table) == 40 and not sweep.errors
    assert len(opened) == 1  # not once per member


def test_a_tar_gz_is_decompressed_once(tmp_path, monkeypatch) -> None:
    path = tmp_path / "runs.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for k in range(30):
            info = tarfile.TarInfo(f"r{k}.jsonl")
            info.size = len(GOOD)
            tf.addfile(info, io.BytesIO(GOOD))
    corpus = tc.load_corpus(path)
    opened = []
    real = tarfile.open

    def counting(*args, **kwargs):
        opened.append(kwargs.get("mode", args[1] if len(args) > 1 else "r"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tarfile, "open", counting)
    sweep = tc.sweep_corpus(corpus, CONFIG, engine="serial")
    assert len(sweep.table) == 30 and not sweep.errors
    assert opened == ["r|*"]  # one streaming pass for all thirty


def test_two_members_of_one_name_are_both_read(tmp_path) -> None:
    other = next((CORPUS / "eino").glob("*.jsonl"), None)
    second = sorted((CORPUS / "eino").glob("*.jsonl"))[-1].read_bytes()
    assert other is not None
    with pytest.warns(UserWarning):  # zipfile warns of the duplicate name: it is what we test
        zip_of(tmp_path / "dup.zip", [("run.jsonl", GOOD), ("run.jsonl", second)])
    corpus = tc.load_corpus(tmp_path / "dup.zip")
    assert [f.label for f in corpus.files] == ["dup.zip!run.jsonl", "dup.zip!run.jsonl~2"]
    assert [f.read() for f in corpus.files] == [GOOD, second]
    sweep = tc.sweep_corpus(corpus, CONFIG, engine="serial")
    assert set(sweep.table["file"]) == {"dup.zip!run.jsonl", "dup.zip!run.jsonl~2"}


def test_a_decompression_bomb_is_its_own_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(archives, "MEMBER_FLOOR", 1 << 20)
    monkeypatch.setattr(archives, "ARCHIVE_FLOOR", 8 << 20)
    zip_of(tmp_path / "bomb.zip", [("ok.jsonl", GOOD), ("bomb.jsonl", b"0" * (64 << 20)), ("ok2.jsonl", GOOD)])
    corpus = tc.load_corpus(tmp_path / "bomb.zip")
    sweep = tc.sweep_corpus(corpus, CONFIG, engine="serial")
    assert set(sweep.table["file"]) == {"bomb.zip!ok.jsonl", "bomb.zip!ok2.jsonl"}
    (label, error), = sweep.errors
    assert label == "bomb.zip!bomb.jsonl" and "decompression bomb" in error


def test_a_link_inside_a_tar_is_not_followed(tmp_path) -> None:
    path = tmp_path / "links.tar"
    with tarfile.open(path, "w") as tf:
        info = tarfile.TarInfo("big.bin")
        info.size = len(GOOD)
        tf.addfile(info, io.BytesIO(GOOD))
        link = tarfile.TarInfo("run.json")
        link.type, link.linkname = tarfile.SYMTYPE, "big.bin"
        tf.addfile(link)
    assert [m.name for m in archives.list_members(path)] == ["big.bin"]
    assert tc.load_corpus(path).files == ()


def test_a_truncated_tar_gz_names_the_members_it_could_not_reach(tmp_path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for k in range(3):
            info = tarfile.TarInfo(f"r{k}.jsonl")
            info.size = len(GOOD)
            tf.addfile(info, io.BytesIO(GOOD + b" " * 50_000 * k))
    whole = buf.getvalue()
    path = tmp_path / "runs.tar.gz"
    path.write_bytes(whole)
    corpus = tc.load_corpus(path)
    path.write_bytes(whole[: len(whole) * 2 // 3])  # damaged after it was listed
    sweep = tc.sweep_corpus(corpus, CONFIG, engine="serial")
    swept, failed = set(sweep.table["file"]), {label for label, _ in sweep.errors}
    assert swept | failed == {f.label for f in corpus.files} and failed and not swept & failed
