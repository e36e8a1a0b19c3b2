"""Which toolclear modules a module imports: read from its syntax tree, for the tests
that hold the layering (tests/test_architecture.py) and the policies' floor
(tests/policies/test_registry.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imports_of(path: Path, package: str) -> set[str]:
    """Every toolclear module ``path`` imports, lazily or not, absolute or relative
    (``from .. import checks`` is ``toolclear.policies._checks``)."""
    found = set()
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # an annotation's import is not a dependency: nothing runs it
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names]
            modules = [m for m in subs if _is_module(m)]
            found.update(modules if modules else [base])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m == "toolclear" or m.startswith("toolclear.")}


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (ROOT / rel.with_suffix(".py")).is_file() or (ROOT / rel / "__init__.py").is_file()
