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


SLOW_MODULES = {"test_bad_inputs.py", "test_app.py", "test_app_policies.py", "test_app_sequences.py",
                "test_app_corpus.py", "test_plugin_policy.py", "test_live_langchain.py"}
"""Whole modules marked ``slow``: the bad-input corpus (files of tens of MB), the app
under AppTest, a plugin installed with pip, a real LangGraph agent per case."""
SLOW_TESTS = {
    "test_process_engine_gives_the_same_table", "test_dask_engine_on_a_real_local_cluster",
    "test_a_script_without_the_main_guard_is_told_what_to_do", "test_sigterm_stops_a_process_sweep_and_its_workers",
    "test_damaged_members_on_the_dask_engine_and_through_the_cli",
    "test_a_dask_scheduler_that_never_answers_is_one_line_not_a_hang",
    "test_losses_equal_the_definition_rebuilt_at_every_call", "test_real_ctrl_c_never_leaves_a_temp_file_and_reports_truly",
    "test_real_cassette_edit_changes_only_the_cleared_blocks", "test_yaml_bomb_is_refused_fast_and_small",
    "test_every_instrumentation_recorded_anew_reads_the_same", "test_the_app_offers_it_with_its_knobs",
    "test_every_policy_keeps_pairs_through_every_export", "test_inspect_of_many_tiny_messages_peaks_within_30_times_the_file",
}
"""Single tests marked ``slow``: worker processes, a Dask cluster, real signals, the
definition of a loss rebuilt at every call, instrumentations recorded anew."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` and ``e2e`` in one place: ``-m "not slow and not e2e"`` is the quick run
    (README, "Tests"); CI (``scripts/test.sh``) runs everything."""
    for item in items:
        path = Path(str(item.fspath))
        if "e2e" in path.parts:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)
        elif path.name in SLOW_MODULES or item.originalname in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
