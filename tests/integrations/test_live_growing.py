"""The per-call mode's engine kept across calls (``Growing``) shows, call by call, what
``toolclear.apply`` shows for that call's history, including when the history is
rewritten under it (trimmed, edited) and it starts again."""

from __future__ import annotations

import random

import pytest

import toolclear as tc
from toolclear.integrations._live import Growing, Live

from ..policies.test_all_policies import POLICIES
from ..policies.test_langchain import generate

REQUEST_LEVEL = [p for p in POLICIES if not isinstance(p, tc.EinoReductionConfig)] + [
    tc.ClearToolResultConfig(300, 100, exclude_tools=("bash",)), tc.ClearToolResultConfig(0, 0)]


@pytest.mark.parametrize("config", REQUEST_LEVEL, ids=[tc.runs.lab.policy_name(p) for p in REQUEST_LEVEL])
def test_growing_equals_apply_on_every_call(config) -> None:
    rng = random.Random(7)
    for _ in range(15):
        msgs = list(generate(rng))
        grow = Growing(config, None, ())
        calls = sorted({rng.randrange(1, len(msgs) + 1) for _ in range(6)} | {len(msgs)})
        for k, n in enumerate(calls):
            history = msgs[:n]
            if k == 3 and n > 2:  # the agent trimmed its history: a new start
                history = history[1:]
            shown = grow(history)
            assert shown == list(tc.apply(history, config).messages), (n, k)


def test_live_uses_it_only_per_call_without_a_report() -> None:
    config = tc.LangChainClearToolUsesConfig(trigger=10, keep=1)
    assert Live(config, per_call=True).advanced
    assert Live(config, per_call=True, on_result=print).advanced is False
    assert Live(tc.EinoReductionConfig(skip_truncation=True), per_call=True).advanced is False
    assert Live(tc.ClearToolResultConfig()).advanced  # eino's, the edit kept
    assert Live(config).advanced is False


@pytest.mark.parametrize("config", [tc.ClearToolResultConfig(300, 600), tc.ClearToolResultConfig(300, 100,
                                    exclude_tools=("bash",)), tc.ClearToolResultConfig(0, 0)], ids=str)
def test_kept_edits_grow_as_apply_on_the_kept_history(config) -> None:
    """eino's clear policy with the edit kept: each call's history is what the last
    call showed plus new messages, and the advanced engine shows what apply shows."""
    rng = random.Random(11)
    for _ in range(15):
        msgs = list(generate(rng))
        grow = Growing(config, None, (), persist=True)
        kept: list[tc.Message] = []
        calls = sorted({rng.randrange(1, len(msgs) + 1) for _ in range(6)} | {len(msgs)})
        for k, n in enumerate(calls):
            history = kept + msgs[len(kept):n]
            if k == 3 and len(history) > 2:  # the agent rewrote its history: a new start
                history = history[1:]
                msgs = msgs[1:]
            shown = grow(history)
            assert shown == list(tc.apply(history, config).messages), (n, k)
            kept = shown


@pytest.mark.parametrize("persist", [False, True], ids=["per-call", "kept"])
def test_eino_trigger_counts_cleared_results_only_per_call(persist) -> None:
    """Per call the raw history still holds every result, so eino's trigger counts them
    all; with the edit kept, the ones already cleared no longer count. Four results of
    200 tokens against a 500-token threshold: by the fourth only the per-call run clears
    the third."""
    config = tc.ClearToolResultConfig(500, 100)
    msgs: list[tc.Message] = [tc.Message("user", "go")]
    grow = Growing(config, None, (), persist=persist)
    kept: list[tc.Message] = []
    for k in range(4):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", "read", "{}"),)),
                 tc.Message("tool", "x" * 800, tool_call_id=f"c{k}", tool_name="read")]
        history = kept + msgs[len(kept):] if persist else list(msgs)
        shown = grow(history)
        assert shown == list(tc.apply(history, config).messages)
        kept = shown
    cleared = [i for i, m in enumerate(shown) if m.content == config.placeholder]
    assert cleared == ([2, 4] if persist else [2, 4, 6])
