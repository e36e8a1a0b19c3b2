"""The registry (``toolclear/policies/__init__.py``): a sixth policy added in one module
(``toy_policy.py``) and one line, ``register(SPEC)``, reaches the library, ``compare``,
the corpus sweep, the CLI and the app with no other change; the five families stand
side by side on one floor of the import graph; eino's clear policy is an engine like the
others, its fast replay held equal to it call by call."""

from __future__ import annotations

import ast
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.policies import (
    BUILT_IN,
    PolicySpec,
    Preset,
    preset_names,
    register,
    registered,
    spec_for,
    unregister,
)
from toolclear.policies._engine import assemble
from toolclear.policies.eino_clear import SPEC as EINO
from toolclear.runs import lab

from ..conftest import CORPUS_FILES, SAMPLES, corpus_id
from ..import_graph import imports_of
from . import toy_policy

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = SAMPLES / "coding-agent.openai.json"


@pytest.fixture
def toy() -> Iterator[PolicySpec]:
    spec = register(toy_policy.SPEC)  # the one line a new policy needs
    try:
        yield spec
    finally:
        unregister(spec.name)


def expected(messages: list[tc.Message], config: toy_policy.DropLongConfig) -> list[int]:
    tools = [i for i, m in enumerate(messages) if m.role == "tool"]
    older = tools[:max(0, len(tools) - config.keep)]
    return [i for i in older if len(messages[i].content) > config.limit]


def test_the_library_compare_and_the_corpus_run_it(toy: PolicySpec, tmp_path: Path) -> None:
    t = tc.load(SAMPLE)
    config = lab.parse_policy("drop-long:threshold=100,keep=1")
    assert config == toy_policy.DropLongConfig(limit=100, keep=1) and spec_for(config) is toy
    once = tc.apply(t, config)
    assert list(once.cleared_indices) == expected(list(t.messages), config) != []
    assert all(once.messages[i].content == config.placeholder for i in once.cleared_indices)
    rp = tc.replay(t, config)
    for step in rp.model_call_steps:  # each call: the policy on that call's history
        alone = tc.apply(t.messages[:step.call_index], config)
        assert step.context_tokens == alone.tokens_after
    assert lab.policy_name(config) == "drop-long" and lab.policy_spec(config) == "drop-long:limit=100,keep=1"
    cmp = tc.compare(t, [config, tc.ClearToolResultConfig()], pricing="claude-sonnet-4-5")
    assert cmp.table["kind"].tolist() == ["drop-long", "eino"] and cmp.costs[0].dollars > 0
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / SAMPLE.name).write_bytes(SAMPLE.read_bytes())
    configs = tc.grid(config, threshold=[50, 100, 10_000])
    assert [c.limit for c in configs] == [50, 100, 10_000]
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path / "runs"), configs, engine="serial")
    cleared = sweep.table["results_cleared"].tolist()
    assert cleared[1] == len(rp.cleared_indices) and cleared[0] >= cleared[1] >= cleared[2]
    assert cleared[2] == len(tc.replay(t, configs[2]).cleared_indices) < cleared[1]


def test_the_cli_takes_it(toy: PolicySpec, tmp_path: Path) -> None:
    out, err = io.BytesIO(), io.StringIO()
    target = tmp_path / "out.json"
    code = main(["reduce", str(SAMPLE), "--policy", "drop-long:limit=100,keep=1", "-o", str(target)],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    t = tc.load(SAMPLE)
    want = expected(list(t.messages), toy_policy.DropLongConfig(100, 1))
    got = tc.load(target)
    assert [i for i, m in enumerate(got.messages) if m.content == "[long result dropped]"] == want
    code = main(["compare", str(SAMPLE), "--policy", "drop-long", "--policy", "eino", "--json"], stdout=out,
                stderr=err)
    assert code == 0, err.getvalue()
    code = main(["reduce", str(SAMPLE), "--policy", "drop-long:limit=many"], stdout=io.BytesIO(), stderr=err)
    assert code == 2 and "limit" in err.getvalue()


def test_the_app_offers_it_with_its_knobs(toy: PolicySpec) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert "Drop long results (toy)" in at.selectbox(key="policy").options
    at.selectbox(key="policy").set_value("Drop long results (toy)").run()
    assert not at.exception, at.exception
    at.number_input(key="p_drop_long_limit_input").set_value(10**9).run()
    assert not at.exception, at.exception
    assert any("no older result is longer than 1,000,000,000 characters" in i.value for i in at.info)
    at.number_input(key="p_drop_long_limit_input").set_value(100).run()
    assert {m.label: m.value for m in at.metric}["Changed at some call"] != "0"


def test_register_refuses_a_taken_name_or_config() -> None:
    with pytest.raises(tc.ConfigError, match="'swe-agent' is taken"):
        register(PolicySpec("mine", toy_policy.DropLongConfig, toy_policy.SPEC.engine,
                            (Preset("swe-agent", "x", "", toy_policy.DropLongConfig),)))
    with pytest.raises(tc.ConfigError, match="another policy's config"):
        register(PolicySpec("mine", tc.AnthropicClearToolUsesConfig, toy_policy.SPEC.engine,
                            (Preset("mine", "x", "", tc.AnthropicClearToolUsesConfig),)))
    with pytest.raises(tc.ConfigError, match="lower case"):
        PolicySpec("Mine", toy_policy.DropLongConfig, toy_policy.SPEC.engine, ())
    assert "drop-long" not in preset_names() and len(registered()) >= len(BUILT_IN) >= 6


def test_the_shortest_spec_is_the_policy_under_its_name() -> None:
    """One shape for toolclear's policies and other packages': a spec with no presets
    is picked by its own name, its whole-number settings the sliders."""
    spec = register(PolicySpec("drop-long-short", toy_policy.DropLongConfig, toy_policy.SPEC.engine))
    try:
        (preset,) = spec.presets
        assert (preset.name, preset.label) == ("drop-long-short", "drop-long-short")
        assert [k.field for k in spec.knobs] == [f for f, v in vars(toy_policy.DropLongConfig()).items()
                                                 if type(v) is int] != []
        config = lab.parse_policy("drop-long-short:" + spec.knobs[0].field + "=7")
        assert isinstance(config, toy_policy.DropLongConfig) and getattr(config, spec.knobs[0].field) == 7
        assert tc.replay(tc.load(SAMPLE).messages, config).steps
    finally:
        unregister(spec.name)


FAMILIES = tuple(s.config.__module__.rsplit(".", 1)[1] for s in BUILT_IN)  # one module each, read off the registry
FLOOR = {"toolclear.errors", "toolclear.model", "toolclear.counters", "toolclear.result", "toolclear.policies._checks", "toolclear._files",
         "toolclear._gc", "toolclear._kept", "toolclear.policies.offload", "toolclear.cost.logfacts", "toolclear.cost.windows"}
"""What a policy may stand on: the data, the counters, the result and the checks, and the
facts of a run its log records (its compactions, its model's window), which stand on the
data alone."""


HELPERS = {"toolclear.policies._engine", "toolclear.policies._spec", "toolclear.policies._export",
           "toolclear.policies._compaction", "toolclear.policies._eino_reduction_parts",
           "toolclear.policies._eino_steps"}


def test_the_families_stand_side_by_side_on_one_floor() -> None:
    pkg = ROOT / "toolclear" / "policies"
    for family in FAMILIES:
        # a family stands on the floor and the policies' own helpers, never a sibling or anything above;
        # cache-aware wraps any policy of the registry and decides with the run's cache facts;
        # anthropic-thinking runs the anthropic policy's engine beside its own, through the
        # registry: the two that stand on more (named here, so another cannot by accident)
        # langchain-summarization counts with LangChain's own counter, which the langchain family holds;
        # hybrid composes any clearing policy with any compaction, through the registry
        allowed = {"cache_aware": {"toolclear.policies"}, "hybrid": {"toolclear.policies"},
                   "langchain_summarization": {"toolclear.policies.langchain"},
                   "anthropic_thinking": {"toolclear.policies"}}.get(family, set())
        above = imports_of(pkg / f"{family}.py", "toolclear.policies") - FLOOR - HELPERS - allowed
        assert not above, f"{family} imports {sorted(above)}"
    for helper in HELPERS:
        assert not imports_of(ROOT / (helper.replace(".", "/") + ".py"), "toolclear.policies") - FLOOR - HELPERS
    for base in FLOOR:  # nothing below climbs back up to the policies or beyond
        used = imports_of(ROOT / (base.replace(".", "/") + ".py"), base.rsplit(".", 1)[0])
        assert not used - FLOOR, (base, used - FLOOR)
    registry = imports_of(pkg / "__init__.py", "toolclear.policies")
    import toolclear.policies as policies

    assert set(FAMILIES) <= set(policies.FAMILIES)  # loaded by name, one line each
    assert not registry - FLOOR - HELPERS, registry


def test_nothing_outside_the_policies_asks_a_config_its_class() -> None:
    """Policy identity comes from the registry: no isinstance on a policy config, no
    comparison with a built-in policy's name, outside ``toolclear/policies``."""
    configs = ("ClearToolResultConfig", "EinoReductionConfig", "AnthropicClearToolUsesConfig",
               "LangChainClearToolUsesConfig", "ObservationMaskingConfig")
    names = ('"eino"', '"eino-reduction"', '"anthropic"', '"langchain"', '"openhands"', '"swe-agent"', '"masking"')
    offenders = []
    for path in sorted((ROOT / "toolclear").rglob("*.py")):
        if "policies" in path.parts or "formats" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
                if any(c in ast.unparse(node.args[1]) for c in configs):
                    offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
            if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Eq, ast.NotEq, ast.In)) for o in node.ops):
                text = ast.unparse(node)
                if any(n in text for n in names) and ("kind" in text or "policy" in text or "name" in text):
                    offenders.append(f"{path.name}:{node.lineno} {text}")
    assert not offenders, offenders


def test_a_built_in_policy_is_its_module_and_one_line_of_the_registry() -> None:
    """Every module of toolclear/policies that ends in a SPEC is listed in FAMILIES (one
    line each), in BUILT_IN in that order, and nothing else names the built-ins."""
    import importlib
    import pkgutil

    import toolclear.policies as pkg

    with_spec = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")
                 and hasattr(importlib.import_module(f"toolclear.policies.{m.name}"), "SPEC")]
    assert sorted(with_spec) == sorted(pkg.FAMILIES)
    assert [s.name for s in BUILT_IN] == [importlib.import_module(f"toolclear.policies.{m}").SPEC.name
                                          for m in pkg.FAMILIES]
    assert set(p.name for s in BUILT_IN for p in s.presets) <= set(preset_names())
    source = (Path(pkg.__file__)).read_text()
    assert all(source.count(f'"{m}"') == 1 for m in pkg.FAMILIES)


def test_one_result_type_for_every_policy_and_mode() -> None:
    """``Result`` is the one result: eino's single pass (``reduce_by_tokens``, with and
    without offloading), ``apply`` and ``replay`` of every policy give it, and nothing in
    toolclear asks a result its class (a replay and a single pass differ by ``mode``)."""
    assert not any(hasattr(tc, old) for old in ("Reduction", "Replay", "ReplayStep"))  # one name each
    runs = (tuple(tc.load_all(p)[0].messages) for p in CORPUS_FILES)
    msgs = next(m for m in runs if sum(x.role == "tool" for x in m) >= 5)
    results = [tc.reduce_by_tokens(msgs, tc.ClearToolResultConfig(0, 0)),
               tc.reduce_by_tokens(msgs, tc.ClearToolResultConfig(0, 0),
                                   offloading=tc.ToolResultOffloadingConfig(offloading_token_limit=10))]
    for spec in registered():
        config = spec.config()
        backend = tc.MemoryBackend() if spec.needs_backend(config) else None
        results += [tc.apply(msgs, config, backend=backend), tc.replay(msgs, config, backend=backend)]
    for r in results:
        assert type(r) is tc.Result
        assert r.mode in ("replay", "single pass")
        assert r.cleared_indices == tuple(i for i, c in enumerate(r.cleared_at) if c is not None)
        assert r.tokens_saved == r.tokens_before - r.tokens_after
        assert r.triggered == any(s.triggered for s in r.steps)
    single = results[0]
    assert single.mode == "single pass" and len(single.steps) == 1 and single.steps[0].call_index == len(msgs)
    assert single.steps[0].context_tokens == single.tokens_after and single.cleared_indices
    assert single.recent_start_index == single.steps[0].recent_start_index is not None
    kinds = ("Result", "Replay", "Reduction")
    offenders = []
    for path in sorted((ROOT / "toolclear").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
                named = {getattr(n, "id", getattr(n, "attr", "")) for n in ast.walk(node.args[1])}
                if named & set(kinds):
                    offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert not offenders, offenders


def test_the_cli_does_not_import_the_app() -> None:
    """The CLI may draw with the inspector's Streamlit-free parts (charts, the HTML
    report), never with a module that imports Streamlit, nor with what those import."""
    seen: set[str] = set()
    cli = [(f"toolclear.cli.{p.stem}", "toolclear.cli") for p in (ROOT / "toolclear" / "cli").glob("*.py")]
    todo = [*cli, ("toolclear.corpus.advice", "toolclear.corpus")]
    while todo:
        module, package = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = ROOT / (module.replace(".", "/") + ".py")
        assert "import streamlit" not in path.read_text(), module
        todo += [(m, m.rsplit(".", 1)[0]) for m in imports_of(path, package) if m.startswith("toolclear.inspector.")]
    reached = {m for m in seen if m.startswith("toolclear.inspector")}
    assert reached == {"toolclear.inspector.html_report", "toolclear.inspector.charts"}, reached


@pytest.mark.parametrize("path", CORPUS_FILES[:12], ids=corpus_id)
@pytest.mark.parametrize("threshold,keep", [(0, 0), (2_000, 8_000), (20_000, 40_000)])
def test_the_eino_engine_equals_the_fast_replay_call_by_call(path: Path, threshold: int, keep: int) -> None:
    msgs = tuple(tc.load_all(path)[0].messages)
    config = tc.ClearToolResultConfig(threshold, keep)
    fast = tc.replay(msgs, config)
    count = tc.get_counter(config.token_counter)
    slow = assemble(msgs, EINO.engine(msgs, config, count), config, count, lab.model_calls(msgs), mode="replay")
    assert [(s.call_index, s.context_tokens, s.cleared_indices) for s in fast.model_call_steps] == [
        (s.call_index, s.context_tokens, s.cleared_indices) for s in slow.model_call_steps]
    assert fast.cleared_indices == slow.cleared_indices
    assert [m.content for m in fast.messages] == [m.content for m in slow.messages]


def test_every_built_in_policy_describes_itself_whole() -> None:
    """Each spec's presets build valid configs, its knobs name real fields, its aliases
    point at fields, and its exports render: what the CLI, the app and the corpus read."""
    from dataclasses import fields

    for spec in BUILT_IN:
        names = {f.name for f in fields(spec.config)}
        assert set(spec.aliases.values()) <= names, spec.name
        for preset in spec.presets:
            config = preset.make()
            assert spec_for(config) is spec and spec.preset_of(config) in spec.presets
            assert {k.field for k in preset.knobs} <= names and {o.field for o in spec.options} <= names
            if preset.export is not None:
                assert all(code.strip() for _, _, code in preset.export(config))
            assert lab.parse_policy(lab.policy_spec(config)) == config
