"""The README's live-adapter examples, executed as written."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from tests.live_support import in_thread

README = Path(__file__).resolve().parents[2] / "docs" / "live.md"
EXAMPLES = re.findall(r"<!-- live-example -->\n```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_an_example_per_adapter() -> None:
    assert len(EXAMPLES) == 3
    for module in ("langchain", "langgraph", "pydantic_ai"):
        assert any(f"toolclear.integrations.{module} import" in e for e in EXAMPLES)


@pytest.mark.parametrize("code", EXAMPLES, ids=["langchain", "langgraph", "pydantic-ai"])
def test_readme_example_runs(code: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # create_react_agent's notice
        # in a fresh thread: run_sync refuses an event loop another test left running
        in_thread(exec, compile(code, str(README), "exec"), {})
