"""What the live-adapter tests share: a run's expected per-call contexts, by definition
(the policy applied before each call, on the history as kept or in full), tied to
``toolclear.replay``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import toolclear as tc

CALLS = 32
"""Model calls per live run (31 tool rounds and a final answer)."""


def big_result(path: str) -> str:
    return f"contents of {path}\n" + ("line of code\n" * 150)


def expected_contexts(run: Sequence[tc.Message], config: Any, persist: bool) -> list[list[tc.Message]]:
    """What each model call of ``run`` receives when the policy runs before it."""
    from toolclear.policies import spec_for

    if spec_for(config).stateful:  # defined call by call: the run replayed up to each call
        return [list(tc.replay(run[:call], config).messages) for call in
                [i for i, m in enumerate(run) if m.role == "assistant"]]
    out, state = [], []
    for call in [i for i, m in enumerate(run) if m.role == "assistant"]:
        history = state + list(run[len(state):call]) if persist else list(run[:call])
        done = tc.apply(history, config)
        state = list(done.messages) if persist else []
        out.append(list(done.messages))
    return out


def shown(messages: Sequence[tc.Message]) -> list[tuple[str, str, tuple[tuple[str, str, str], ...], str]]:
    """What the model is shown of each message."""
    return [(m.role, m.content, tuple((c.id, c.name, c.arguments) for c in m.tool_calls), m.tool_call_id)
            for m in messages]


def assert_live_equals_replay(seen: list[list[tc.Message]], run: Sequence[tc.Message], config: Any,
                              persist: bool) -> None:
    """Every live call received exactly the expected context, and replay agrees call for
    call on the tokens sent; and the policy did change something."""
    want = expected_contexts(run, config, persist)
    assert len(seen) == len(want) >= CALLS
    rp = tc.replay(run, config, persist=persist)
    steps = rp.model_call_steps
    assert len(steps) == len(seen)
    for k, (got, exp, step) in enumerate(zip(seen, want, steps)):
        assert shown(got) == shown(exp), f"call {k}"
        assert sum(tc.count_tokens(got)) == step.context_tokens, f"call {k}"
    assert sum(s.context_tokens for s in steps) < sum(s.context_tokens_unreduced for s in steps)


def restored(run: Sequence[tc.Message]) -> list[tc.Message]:
    """The run as it happened (a kept history holds the cleared results and emptied
    arguments): the scripts call ``read_file`` with id ``c<k>`` on ``f<k>.py``."""
    from dataclasses import replace

    def path(call_id: str) -> str:
        return f"f{call_id[1:]}.py"

    out = []
    for m in run:
        if m.role == "tool" and m.tool_call_id.startswith("c"):
            m = m.with_content(big_result(path(m.tool_call_id)))
        elif m.tool_calls:
            m = replace(m, tool_calls=tuple(replace(c, arguments=f'{{"path":"{path(c.id)}"}}') for c in m.tool_calls))
        out.append(m)
    return out


def in_thread(fn: Any, *args: Any, **kw: Any) -> Any:
    """Run ``fn`` in a fresh thread: async frameworks' ``run_sync`` refuse a thread whose
    event loop another test (a browser, the app) left running."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args, **kw).result()
