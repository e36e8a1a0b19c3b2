"""The README is a front page and the docs are the reference: their Python examples run
as written on a real session, their links resolve, and the CLI reference is what the
parser prints."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SESSION = ROOT / "tests" / "data" / "corpus" / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl"
PAGES = sorted((ROOT / "docs").glob("*.md"))


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for heading in ("## Install", "## The first three commands", "## Tests", "## Documentation"):
        assert heading in text
    assert "bash scripts/test.sh" in text and "bash scripts/inspector.sh" in text
    assert (ROOT / ".ci" / "run").read_text().count("scripts/test.sh") == 1  # CI runs the README's command


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.name}: {target}"


@pytest.mark.parametrize("page", [README, ROOT / "docs" / "library.md"], ids=lambda p: p.name)
def test_the_library_examples_run_as_written(page: Path, tmp_path, monkeypatch) -> None:
    blocks = [b for b in _python_blocks(page) if 'load("session.jsonl")' in b]
    assert blocks
    shutil.copy(SESSION, tmp_path / "session.jsonl")
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, str(page), "exec"), {})
        assert (tmp_path / "reduced.jsonl").stat().st_size > 0


def _reference() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.reference())


def test_docs_cli_md_is_current() -> None:
    """Rerun `python scripts/cli_reference.py` after changing an option or a command."""
    assert (ROOT / "docs" / "cli.md").read_text() == _reference()
    for command in ("sessions", "advise", "inspect", "compare", "report", "reduce", "corpus", "app", "policies"):
        assert f"### toolclear {command}\n" in _reference()


def test_the_benchmarks_print_their_options_and_run_one_group() -> None:
    import subprocess
    import sys

    run = ROOT / "benchmarks" / "run.py"
    done = subprocess.run([sys.executable, str(run), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--only GROUP" in done.stdout and "toolclear benchmarks" not in done.stdout
    done = subprocess.run([sys.executable, str(run), "--only", "media"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "what" not in line]
    assert len(rows) == 1 and "cost() with images" in rows[0]


def test_the_policy_table_holds_every_built_in_policy() -> None:
    """docs/policies.md's table of dollars and losses on the same real runs
    (scripts/policy_table.py) has a row for every built-in policy."""
    from toolclear.policies import BUILT_IN

    text = (ROOT / "docs" / "policies.md").read_text()
    table = text[text.index("| `--policy` | net $ saved |"):].split("\n\n")[0]
    rows = [line.split("`")[1].split(":")[0] for line in table.splitlines()[2:] if line.startswith("| `")]
    presets = {p.name: s.name for s in BUILT_IN for p in s.presets}
    assert {presets[r] for r in rows} == {s.name for s in BUILT_IN}
