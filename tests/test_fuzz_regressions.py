"""Inputs the fuzzer once crashed on (tests/data/fuzz) keep behaving."""

from __future__ import annotations

import sys

import pytest

from .conftest import DATA, ROOT

sys.path.insert(0, str(ROOT / "fuzz"))
import load_property

CASES = sorted((DATA / "fuzz").iterdir())


def test_there_are_regression_cases() -> None:
    assert CASES


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_fuzz_regression(path) -> None:
    load_property.check(path.read_bytes())
