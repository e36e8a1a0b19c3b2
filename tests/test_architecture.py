"""The layers of docs/architecture.md, held: each part of toolclear imports only the
parts below it, but for the few couplings the document names (each a lazy import)."""

from __future__ import annotations

from pathlib import Path

from .import_graph import imports_of

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "toolclear"

FLOOR = {"errors", "limits", "model", "schema", "counters", "result", "_gc", "_kept", "_files"}
LAYERS = [FLOOR, {"policies"}, {"cost"}, {"formats"}, {"runs"}, {"corpus"}, {"inspector", "cli", "integrations"}]
"""Lowest first: a part may import its own layer's floor modules and anything lower."""

ALLOWED_UP = {
    ("toolclear.policies", "toolclear.cost.logfacts"),  # the log's facts (compactions, usage) stand on the data alone
    ("toolclear.policies", "toolclear.cost.windows"),  # and so do the models' context windows
    ("toolclear.cost.billing", "toolclear.runs.losses"),  # Cost.losses: the net saving weighs what was lost
}
"""(importer prefix, imported module) pairs allowed to reach up a layer."""


def layer_of(module: str) -> int:
    part = module.split(".")[1] if "." in module else ""
    for n, layer in enumerate(LAYERS):
        if part in layer:
            return n
    return len(LAYERS)  # toolclear itself, __main__: the top


def _modules() -> list[tuple[Path, str]]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((path, module))
    return out


def test_every_part_imports_only_the_parts_below_it() -> None:
    offenders = []
    for path, module in _modules():
        mine = layer_of(module)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for used in imports_of(path, package) - {"toolclear"}:
            if layer_of(used) <= mine or any(module.startswith(a) and used == b for a, b in ALLOWED_UP):
                continue
            offenders.append(f"{module} imports {used}")
    assert not offenders, offenders


def test_the_top_level_tells_the_architecture_in_a_dozen_lines() -> None:
    """The packages are the parts; the modules beside them are the floor (and the entry
    points): a newcomer reads the layout from ``ls toolclear/``."""
    modules = {p.stem for p in PKG.glob("*.py")} - {"__init__", "__main__"}
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    assert modules <= FLOOR | {"cli"}, modules - FLOOR
    assert packages == {"policies", "cost", "formats", "runs", "corpus", "inspector", "integrations"} | (
        {"cli"} if "cli" not in modules else set())
    public = [m for m in modules if not m.startswith("_")]
    assert len(public) + len(packages) <= 14


def test_the_architecture_document_names_every_part() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for part in ("policies/", "cost/", "formats/", "runs/", "corpus/", "inspector/", "integrations/", "cli"):
        assert part in doc, part
    for _, b in ALLOWED_UP:
        assert b in doc, b  # every coupling that reaches up is written down


def test_no_module_does_several_jobs() -> None:
    """Past 700 lines a module holds several jobs (docs/architecture.md)."""
    long = {str(p.relative_to(ROOT)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 700}
    assert not long, long


def test_the_inspector_names_no_policy() -> None:
    """One road through the app for every policy: its pages and views read the registry
    (``PolicySpec``: knobs, options, offloads, window, exports), never a policy's module
    or config class, so a plugin's policy gets every control and view a built-in one has."""
    from toolclear.policies import registered

    classes = {spec.config.__name__ for spec in registered()}
    families = {f"toolclear.policies.{m}" for m in __import__("toolclear.policies", fromlist=["FAMILIES"]).FAMILIES}
    offenders = []
    for path, module in _modules():
        if not module.startswith("toolclear.inspector"):
            continue
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        offenders += [f"{module} imports {used}" for used in imports_of(path, package) if used in families]
        text = path.read_text()
        offenders += [f"{module} names {name}" for name in classes if name in text]
    assert not offenders, offenders


def test_the_app_is_a_router_over_one_module_per_page() -> None:
    """app.py routes with st.navigation; each page's file in routes/ is one call into its
    module (run as ``__main__``, as Streamlit runs a page; importing it does nothing), so
    the page's code is importable and tested like any other module."""
    app = (PKG / "inspector" / "app.py").read_text()
    assert "st.navigation(" in app and len(app.splitlines()) < 60
    import importlib

    from toolclear.inspector.app import PAGES, ROUTES

    for file, *_ in PAGES:
        text = (ROUTES / file).read_text()
        body = text.split('"""', 2)[-1]
        lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith("from")]
        assert lines[:1] == ['if __name__ == "__main__":'] and len(lines) == 2 and lines[1].startswith("render"), lines
        importlib.import_module(f"toolclear.inspector.routes.{file[:-3]}")  # no page drawn on import
