"""Each policy's exported settings, checked by the framework itself where it runs here."""

from __future__ import annotations

import io
import json
import shlex
import tomllib

import pytest
import yaml
from langchain.agents.middleware.context_editing import ClearToolUsesEdit, ContextEditingMiddleware
from langchain_core.messages.utils import count_tokens_approximately

import toolclear as tc
from toolclear.cli import main as cli_main
from toolclear.model import OMITTED
from toolclear.policies import snippets
from toolclear.runs.lab import parse_policy, policy_spec

from ..conftest import SAMPLES
from ..policies.test_all_policies import as_written
from ..policies.test_langchain import lc_view, tc_view, to_langchain

SAMPLE = SAMPLES / "coding-agent.openai.json"
MULTI = SAMPLES / "several-runs.openai.json"
CONFIGS = [
    tc.EinoReductionConfig(max_tokens_for_clear=20_000, clear_exclude_tools=("grep",), skip_truncation=True),
    tc.AnthropicClearToolUsesConfig(20_000, keep_tool_uses=2, exclude_tools=("list_dir",), clear_tool_inputs=True),
    tc.LangChainClearToolUsesConfig(trigger=20_000, keep=2, placeholder="[gone, really]"),
    tc.ObservationMaskingConfig.openhands(8),
    tc.ObservationMaskingConfig.swe_agent(3, polling=2),
]


def test_langchain_snippet_is_langchains_own_middleware_and_gives_the_apps_result() -> None:
    config = CONFIGS[2]
    code = snippets.langchain_python(config)
    ns: dict = {"model": None, "tools": []}
    exec(compile(code.replace("agent = create_agent(model, tools, middleware=[context_editing])\n", ""),
                 "snippet", "exec"), ns)
    middleware = ns["context_editing"]
    assert isinstance(middleware, ContextEditingMiddleware)
    (edit,) = middleware.edits
    assert isinstance(edit, ClearToolUsesEdit)
    t = tc.load(SAMPLE)
    lc = to_langchain(t.messages)
    edit.apply(lc, count_tokens=count_tokens_approximately)
    assert lc_view(lc) == tc_view(tc.apply(t.messages, config).messages)


def test_anthropic_json_is_the_documented_edit_and_maps_back() -> None:
    config = CONFIGS[1]
    edit = json.loads(snippets.anthropic_json(config))["context_management"]["edits"][0]
    assert edit == {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 20_000},
                    "keep": {"type": "tool_uses", "value": 2}, "exclude_tools": ["list_dir"],
                    "clear_tool_inputs": True}
    from anthropic.types.beta import BetaClearToolUses20250919EditParam  # the SDK's own type for it

    assert set(edit) <= set(BetaClearToolUses20250919EditParam.__annotations__)


def test_openhands_and_swe_agent_configs_map_back() -> None:
    oh = tomllib.loads(snippets.openhands_toml(CONFIGS[3]))["condenser"]
    assert oh == {"type": "observation_masking", "attention_window": 8}
    assert tc.ObservationMaskingConfig.openhands(oh["attention_window"]) == CONFIGS[3]
    (proc,) = yaml.safe_load(snippets.swe_agent_yaml(CONFIGS[4]))["agent"]["history_processors"]
    assert proc == {"type": "last_n_observations", "n": 3, "polling": 2}
    assert tc.ObservationMaskingConfig.swe_agent(proc["n"], proc["polling"]) == CONFIGS[4]


def test_eino_reduction_go_names_every_field() -> None:
    go = snippets.eino_reduction_go(CONFIGS[0])
    for field in ("MaxTokensForClear:         20000", 'ClearExcludeTools:         []string{"grep"}',
                  "SkipTruncation:            true", "ClearRetentionSuffixLimit: 1"):
        assert field in go


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: policy_spec(c).split(":")[0])
@pytest.mark.parametrize("mode", ["single pass", "replay"])
@pytest.mark.parametrize("path", [SAMPLE, MULTI], ids=["one run", "several runs"])
def test_toolclear_snippets_reproduce_the_app(config, mode, path, tmp_path, monkeypatch) -> None:
    """The Python and CLI snippets run as shown and write what the app shows."""
    local = tmp_path / path.name
    local.write_bytes(path.read_bytes())
    runs = tc.load_all(local)
    chosen = runs[-1]
    conversation = chosen.id if len(runs) > 1 else None
    out = snippets.policy_snippets(config, path=str(local), mode=mode, conversation=conversation)
    want = (tc.replay if mode == "replay" else tc.apply)(chosen.messages, config)
    monkeypatch.chdir(tmp_path)
    py = next(code for title, _, code in out if title.startswith("toolclear Python"))
    if any(a.tool_calls != b.tool_calls for a, b in zip(chosen.messages, want.messages) if b.role != OMITTED):
        with pytest.raises(tc.TranscriptError, match="export eino JSON"):
            exec(compile(py, "snippet", "exec"), {})
        return
    exec(compile(py, "snippet", "exec"), {})
    written = tc.load_all(tmp_path / f"reduced-{local.name}")
    got = next(r for r in written if r.id == chosen.id)
    assert [m.content for m in got.messages] == [as_written(o, m) for o, m in zip(chosen.messages, want.messages)]
    cli = shlex.split(next(code for title, _, code in out if title == "toolclear CLI"))
    (tmp_path / f"reduced-{local.name}").unlink()
    assert cli_main(cli[1:], stdout=io.BytesIO(), stderr=io.StringIO()) == 0
    got = next(r for r in tc.load_all(tmp_path / f"reduced-{local.name}") if r.id == chosen.id)
    assert [m.content for m in got.messages] == [as_written(o, m) for o, m in zip(chosen.messages, want.messages)]
    assert parse_policy(next(a for a in cli if a.startswith("--policy=")).split("=", 1)[1]) == config


@pytest.mark.parametrize("config", [tc.ClearToolResultConfig(1234, 5678, exclude_tools=("grep",)),
                                    tc.ObservationMaskingConfig.swe_agent(4),
                                    tc.LangChainClearToolUsesConfig(trigger=999, keep=2)],
                         ids=["eino", "masking", "langchain"])
def test_live_snippets_build_each_adapter_with_the_same_policy(config) -> None:
    import warnings

    live = snippets.live_snippets(config)
    assert [t for t, _, _ in live if "Live in a" in t] and len(live) == 4
    assert all(s in snippets.policy_snippets(config) for s in live)
    for title, _, code in live:
        scope: dict[str, object] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            exec(code, scope)
        assert scope["config"] == config, title
        built = next(v for k, v in scope.items() if k in ("middleware", "hook", "processor", "input_filter"))
        assert type(built).__name__ in ("ToolclearMiddleware", "function", "ProcessHistory"), title
        if type(built).__name__ == "ToolclearMiddleware":
            assert built.config == config


def test_anthropic_export_says_a_custom_placeholder_is_not_sent() -> None:
    import json as _json

    from toolclear.policies.snippets import policy_snippets

    plain = policy_snippets(tc.AnthropicClearToolUsesConfig())[0]
    custom = policy_snippets(tc.AnthropicClearToolUsesConfig(placeholder="<gone>"))[0]
    assert "placeholder" not in plain[0] and "no placeholder setting" in custom[0] and "'<gone>'" in custom[0]
    assert "<gone>" not in custom[2] and _json.loads(custom[2]) == _json.loads(plain[2])
