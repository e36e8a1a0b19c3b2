"""cache-aware, toolclear's own policy: the base policy's clears, made only when the cache
is cold anyway or they pay for the rewrite they cause. Its rule on built histories, its
dollars on the real Claude Code runs of the corpus priced by the same cost model as
every other row, and its place in the registry."""

from __future__ import annotations

import io

import pytest

import toolclear as tc
from toolclear.cli import main
from toolclear.policies.cache_aware import CacheAwareConfig

from ..conftest import CORPUS

RUNS = [t for p in sorted((CORPUS / "claude_code").glob("*.jsonl")) for t in [tc.load(p)]
        if sum(m.role == "tool" for m in t.messages) >= 10]
BASES = {"anthropic": (tc.AnthropicClearToolUsesConfig(trigger_input_tokens=30000, keep_tool_uses=3),
                       CacheAwareConfig(base="anthropic", threshold=30000, keep=3)),
         "eino": (tc.ClearToolResultConfig(5000, 10000), CacheAwareConfig(base="eino", threshold=5000, keep=10000)),
         "swe-agent": (tc.ObservationMaskingConfig.swe_agent(5), CacheAwareConfig(base="swe-agent", keep=5))}


def _usage(t: str) -> tc.Usage:
    return tc.Usage(input_tokens=10, output_tokens=5, timestamp=t)


def _run(gap_minutes: float, result_tokens: int, calls: int = 8) -> list[tc.Message]:
    """A run of ``calls`` reads of ``result_tokens`` each (about 4 characters a token),
    the replies a minute apart but for one gap of ``gap_minutes`` before the last call."""
    msgs = [tc.Message("user", "go")]
    minute = 0.0
    for k in range(calls):
        minute += gap_minutes if k == calls - 1 else 1
        stamp = f"2026-01-01T{int(minute // 60):02d}:{int(minute % 60):02d}:00Z"
        msgs.append(tc.Message("assistant", "", (tc.ToolCall(f"c{k}", "read", "{}"),), usage=_usage(stamp)))
        msgs.append(tc.Message("tool", "word " * (result_tokens * 4 // 5), tool_call_id=f"c{k}", tool_name="read"))
    msgs.append(tc.Message("assistant", "done", usage=_usage("2026-01-01T23:00:00Z")))
    return msgs


def test_a_clear_is_held_back_while_the_cache_is_warm_and_made_once_it_is_cold() -> None:
    """Small results behind a long suffix never pay within the horizon: held back call
    after call, then made at the call after an idle gap longer than the cache lives."""
    msgs = _run(gap_minutes=30, result_tokens=300)
    base = tc.ClearToolResultConfig(500, 600)
    eager = tc.replay(msgs, base)
    held = tc.replay(msgs, CacheAwareConfig(base="eino", threshold=500, keep=600, clear_at_least=0, horizon=1))
    assert eager.cleared_indices and held.cleared_indices
    first_eager = min(s.call_index for s in eager.model_call_steps if s.cleared_indices)
    first_held = min(s.call_index for s in held.model_call_steps if s.cleared_indices)
    assert first_held > first_eager
    last = held.model_call_steps[-2]  # the call after the gap (the last one answers 'done')
    assert first_held == last.call_index
    assert set(held.cleared_indices) == set(eager.cleared_indices)


def test_a_clear_that_pays_within_the_horizon_is_made_at_once() -> None:
    msgs = _run(gap_minutes=1, result_tokens=3000)
    base = tc.ClearToolResultConfig(4000, 3500)
    eager = tc.replay(msgs, base)
    ca = tc.replay(msgs, CacheAwareConfig(base="eino", threshold=4000, keep=3500, clear_at_least=0, horizon=50))
    assert [s.cleared_indices for s in ca.model_call_steps] == [s.cleared_indices for s in eager.model_call_steps]
    never = tc.replay(msgs, CacheAwareConfig(base="eino", threshold=4000, keep=3500, clear_at_least=10**9))
    assert never.cleared_indices == ()  # clear_at_least: crumbs (here everything) are never cleared


@pytest.mark.parametrize("name", list(BASES))
def test_on_the_real_runs_it_costs_less_than_its_base_and_saves_in_total(name: str) -> None:
    """Priced with the prompt cache by the same cost model as every row: the base policy
    loses money on these runs (each clear rewrites the cached prompt); cache-aware over
    the same base saves in total and never loses more than its base on a run."""
    base, ca = BASES[name]
    rows = [tc.compare(t, [base, ca], pricing="claude-sonnet-4-5", recorded=False).rows for t in RUNS]
    base_net = [r[0]["net_dollars_saved"] for r in rows]
    ca_net = [r[1]["net_dollars_saved"] for r in rows]
    assert sum(base_net) < 0 < sum(ca_net)
    assert all(c >= b - 0.01 for b, c in zip(base_net, ca_net)), list(zip(base_net, ca_net))


def test_bad_settings_are_refused_naming_the_option() -> None:
    with pytest.raises(tc.ConfigError, match="base"):
        CacheAwareConfig(base="cache-aware")
    with pytest.raises(tc.ConfigError, match="unknown policy"):
        tc.replay(RUNS[0].messages, CacheAwareConfig(base="nope"))
    with pytest.raises(tc.ConfigError, match="write_multiplier"):
        CacheAwareConfig(write_multiplier=0.05)
    with pytest.raises(tc.ConfigError, match="writes files"):
        tc.replay(RUNS[0].messages, CacheAwareConfig(base="eino-reduction"))


def test_by_its_registry_name_in_parse_policy_and_the_cli() -> None:
    assert tc.parse_policy("cache-aware:base=anthropic,threshold=30000,keep=3,at_least=2000") == CacheAwareConfig(
        base="anthropic", threshold=30000, keep=3, clear_at_least=2000)
    out, err = io.BytesIO(), io.StringIO()
    path = str(CORPUS / "claude_code" / "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl")
    assert main(["compare", path, "--policy", "cache-aware:base=swe-agent,keep=5", "--policy", "swe-agent:n=5",
                 "--pricing", "claude-sonnet-4-5"], stdout=out, stderr=err) == 0, err.getvalue()
    assert "cache-aware swe-agent" in out.getvalue().decode()


def _naive(msgs: list[tc.Message], config: CacheAwareConfig) -> list[int]:
    """The rule written out plainly, O(n^2): at each call the base policy's view (its own
    replay up to that call), what differs from what is shown, and the decision; returns
    the tokens each call is sent."""
    from toolclear.policies.eino_clear import model_calls

    base = config.base_config()
    shown = list(msgs)
    sent = []
    for call in model_calls(msgs):
        wanted = list(tc.replay(msgs[:call], base).messages)
        pending = [i for i in range(call) if wanted[i] is not shown[i] and wanted[i] != shown[i]]
        if pending:
            removed = sum(tc.count_tokens([shown[i]])[0] - tc.count_tokens([wanted[i]])[0] for i in pending)
            suffix = sum(tc.count_tokens(wanted[pending[0]:call]))
            pays = removed * config.read_multiplier * config.horizon > suffix * (1.25 - config.read_multiplier)
            if removed >= config.clear_at_least and pays:
                for i in pending:
                    shown[i] = wanted[i]
        sent.append(sum(tc.count_tokens(shown[:call])))
    return sent


@pytest.mark.parametrize("seed", range(12))
def test_the_kept_sums_decide_as_the_rule_written_out_plainly(seed: int) -> None:
    """The engine keeps what is pending and the prompt's tokens up to date as edits
    arrive (a Fenwick tree, so a call costs O(changes log n)): on generated runs it sends
    what the plain O(n^2) statement of the rule sends, call for call."""
    import random

    from .test_langchain import generate

    msgs = list(generate(random.Random(seed)))
    for config in (CacheAwareConfig(base="eino", threshold=200, keep=300, clear_at_least=0, horizon=10),
                   CacheAwareConfig(base="anthropic", threshold=300, keep=1, clear_at_least=50, horizon=8),
                   CacheAwareConfig(base="swe-agent", keep=2, clear_at_least=0, horizon=10)):
        rp = tc.replay(msgs, config)
        assert [s.context_tokens for s in rp.steps] == _naive(msgs, config), config
