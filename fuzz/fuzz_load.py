"""Coverage-guided fuzzing of toolclear.load for every format (atheris / libFuzzer).

    pip install atheris
    python fuzz/fuzz_load.py -max_total_time=600 -rss_limit_mb=4096 fuzz/work   # 10 minutes

Seeds: the real corpus, the samples and the bad-input corpus (cut to 64 KB each), copied
into the work folder on first run. The property: ``load_all`` either reads the input or
raises ``TranscriptError`` (never any other exception); what it reads is written back
unchanged, and clearing everything then writing and reading again gives the cleared
contents. A crash leaves its input as ``crash-*`` for the regression tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
with atheris.instrument_imports():
    import load_property

    import toolclear  # noqa: F401  (instrumented for coverage)

ROOT = Path(__file__).resolve().parents[1]
def seed(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        return
    sources = [*(ROOT / "tests" / "data" / "corpus").rglob("*.*"), *(ROOT / "sample_data").glob("*.json*"),
               *(ROOT / "tests" / "data" / "bad").glob("*.*")]
    for i, path in enumerate(sorted(sources)):
        if path.suffix in (".md", ".py"):
            continue
        (work / f"seed-{i:03d}-{path.name}").write_bytes(path.read_bytes()[:65536])


def test_one_input(data: bytes) -> None:
    load_property.check(data)


def main() -> None:
    args = [a for a in sys.argv[1:] if a.startswith("-")]
    dirs = [a for a in sys.argv[1:] if not a.startswith("-")] or [str(ROOT / "fuzz" / "work")]
    seed(Path(dirs[0]))
    atheris.Setup([sys.argv[0], *args, *dirs], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
