"""eino's replay keeps its steps lazily (``EinoSteps``): each step worked out on its own
equals the same step of a pass over them all (which the step-by-step tests check against
the reference), and the sequence behaves as the tuple of its steps would: indexing,
slices, equality, hashing, pickling, the changes per call and whether it ever fired."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings

import toolclear as tc
from toolclear.result import LazySteps

from ..conftest import CORPUS_FILES, corpus_id, hypothesis_examples
from ..strategies import configs, conversations

EXAMPLES = hypothesis_examples(200)


def check(steps: LazySteps) -> None:
    every = list(steps)  # one pass
    assert [steps[k] for k in range(len(steps))] == every  # each on its own
    assert [steps[k - len(steps)] for k in range(len(steps))] == every
    assert steps == tuple(every) and tuple(every) == steps and every == list(steps)
    assert hash(steps) == hash(tuple(every))
    assert steps[:-1] == tuple(every[:-1]) and steps[1::2] == tuple(every[1::2]) and steps[5:2] == ()
    assert list(steps.changes()) == [(s.call_index, s.cleared_indices) for s in every]
    assert steps.any_triggered() == any(s.triggered for s in every)
    assert pickle.loads(pickle.dumps(steps)) == tuple(every)
    with pytest.raises(IndexError):
        steps[len(steps)]


@settings(max_examples=EXAMPLES, deadline=None)
@given(conversations, configs())
def test_hyp_each_step_on_its_own_is_the_pass_over_them(messages, config):
    rp = tc.replay(messages, config)
    assert isinstance(rp.steps, LazySteps)
    check(rp.steps)
    assert rp.triggered == any(s.triggered for s in rp.steps)
    assert rp.recent_start_index == list(rp.steps)[-1].recent_start_index


@pytest.mark.parametrize("path", CORPUS_FILES[:12], ids=corpus_id)
@pytest.mark.parametrize("config", [tc.ClearToolResultConfig(2_000, 3_000), tc.ClearToolResultConfig(500, 0),
                                    tc.ClearToolResultConfig(500, 8_000, exclude_tools=("Read", "bash"))],
                         ids=["default-ish", "keep-none", "excluded"])
def test_real_runs(path, config) -> None:
    for t in tc.load_all(path)[:2]:
        rp = tc.replay(t.messages, config)
        check(rp.steps)


def test_offloaded_runs() -> None:
    """Offloading first changes what the trigger counts; the steps follow what was counted."""
    from ..conftest import SAMPLE_FILES

    t = tc.load(SAMPLE_FILES[0])
    rp = tc.replay(t.messages, tc.ClearToolResultConfig(1_000, 2_000),
                   offloading=tc.ToolResultOffloadingConfig(offloading_token_limit=200))
    check(rp.steps)
    assert any(s.cleared_indices for s in rp.steps)
