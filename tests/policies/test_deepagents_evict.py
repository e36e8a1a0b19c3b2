"""deepagents-evict against the real ``deepagents`` package: a LangChain agent with Deep
Agents' own FilesystemMiddleware (eviction of large tool results) and LangChain's fake
chat model; what every model call received equals toolclear's replay of the run as the
tools returned it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from deepagents.middleware.filesystem import FilesystemMiddleware
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

import toolclear as tc
from toolclear.cli import main
from toolclear.integrations.langchain import from_langchain
from toolclear.policies.deepagents_evict import DeepAgentsEvictConfig, evicted_text

from ..integrations.test_live_langchain import ToolModel

LIMIT = 200  # tokens: results over 800 characters are evicted
OUTPUTS = {
    "short": "a short result",
    "few-long-lines": "\n".join("x" * 300 for _ in range(4)),  # 4 lines, 1,203 characters
    "many-lines": "".join(f"line {n}: some output\n" for n in range(120)),
    "clipped": "\n".join(["y" * 1500] + [f"row {n}" for n in range(30)]),  # a line past the preview's 1,000
    "huge-line": "z" * 12_000,  # one line past 5,000: continued as 1.1, 1.2 in the preview
    "exactly-the-limit": "e" * (4 * LIMIT),  # not over: kept
}
IDS = ["call_1", "toolu_01.abc/def\\ghi", "c" * 40, "d" * 140, "call 5", "call_6"]


@tool
def run_cmd(name: str) -> str:
    """Run a command."""
    return OUTPUTS[name]


@tool
def grep(pattern: str) -> str:
    """Search (a tool the reference never evicts)."""
    return "match\n" * 400


def _script() -> list[AIMessage]:
    calls = [AIMessage(content="", tool_calls=[{"name": "run_cmd", "args": {"name": n}, "id": i}])
             for n, i in zip(OUTPUTS, IDS)]
    calls.append(AIMessage(content="", tool_calls=[{"name": "grep", "args": {"pattern": "x"}, "id": "g1"}]))
    return calls + [AIMessage(content="done")]


def _run(limit: int) -> tuple[list[list[Any]], list[Any]]:
    model = ToolModel(messages=iter(_script()), seen=[])
    agent = create_agent(model, [run_cmd, grep], middleware=[FilesystemMiddleware(tool_token_limit_before_evict=limit)])
    state = agent.invoke({"messages": [HumanMessage("run them")]}, {"recursion_limit": 100})
    return model.seen, state["messages"]


def _raw(messages: list[Any]) -> list[Any]:
    """The run as the tools returned it."""
    args = {c["id"]: (c["name"], c["args"]) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    out = []
    for m in messages:
        if isinstance(m, ToolMessage):
            name, a = args[m.tool_call_id]
            m = m.model_copy(update={"content": (run_cmd if name == "run_cmd" else grep).invoke(a)})
        out.append(m)
    return out


def test_every_model_call_receives_what_the_replay_sends() -> None:
    seen, final = _run(LIMIT)
    run = from_langchain(_raw(final))
    config = DeepAgentsEvictConfig(tool_token_limit_before_evict=LIMIT)
    rp = tc.replay(run, config)
    calls = [i for i, m in enumerate(run) if m.role == "assistant"]
    assert len(seen) == len(calls)
    for k, (got, call) in enumerate(zip(seen, calls)):
        want = tc.replay(run[:call], config).messages
        tools_got = [m.content for m in from_langchain(got) if m.role == "tool"]
        tools_want = [m.content for m in want if m.role == "tool"]
        assert tools_got == tools_want, k
    evicted = [run[i].tool_call_id for i in rp.cleared_indices]
    assert evicted == IDS[1:5]  # the short one, the one at exactly the limit and grep are kept
    stubs = [m.content for m in from_langchain(final) if m.role == "tool"]
    assert sum(s.startswith("Tool result too large") for s in stubs) == 4


@pytest.mark.parametrize("name", list(OUTPUTS))
def test_each_stub_is_the_references_text(name: str) -> None:
    """The notice for each kind of output (few long lines, many lines, a clipped line, a
    line continued past 5,000 characters), from the middleware's own run."""
    _, final = _run(LIMIT)
    stored = {m.tool_call_id: m.content for m in final if isinstance(m, ToolMessage)}
    call_id = IDS[list(OUTPUTS).index(name)]
    ours = evicted_text(OUTPUTS[name], call_id, DeepAgentsEvictConfig(tool_token_limit_before_evict=LIMIT))
    assert (ours if ours is not None else OUTPUTS[name]) == stored[call_id]


def test_by_its_registry_name_in_the_cli(tmp_path) -> None:
    assert tc.parse_policy("deepagents-evict:limit=500") == DeepAgentsEvictConfig(500)
    path = tmp_path / "run.json"
    import json

    from langchain_core.messages import messages_to_dict

    _, final = _run(LIMIT)
    path.write_text(json.dumps(messages_to_dict(_raw(final))))
    out, err = io.BytesIO(), io.StringIO()
    assert main(["compare", str(path), "--policy", f"deepagents-evict:threshold={LIMIT}"], stdout=out,
                stderr=err) == 0, err.getvalue()
    assert f"deepagents evict over {LIMIT:,} tokens" in out.getvalue().decode()
