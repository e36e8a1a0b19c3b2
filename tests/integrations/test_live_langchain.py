"""Real LangChain v1 and LangGraph agents (their own fake chat model, real tools) with
toolclear installed: what each model call received equals toolclear's replay of the
same run, in both modes, and the saved run reads back to the same messages."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from langchain_core.tools import tool

import toolclear as tc
from tests.live_support import CALLS, assert_live_equals_replay, big_result, shown
from toolclear.integrations.langchain import ToolclearMiddleware, from_langchain
from toolclear.integrations.langgraph import pre_model_hook

CONFIGS = {
    "eino": tc.ClearToolResultConfig(3000, 6000),
    "eino-small-window": tc.ClearToolResultConfig(2000, 1000),
    "swe-agent": tc.ObservationMaskingConfig.swe_agent(4),
    "langchain": tc.LangChainClearToolUsesConfig(trigger=2000, keep=3),
    "anthropic": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=3,
                                                 clear_at_least_input_tokens=1500),
    "eino-reduction": tc.EinoReductionConfig(skip_truncation=True, max_tokens_for_clear=3000),
    "cache-aware": tc.parse_policy("cache-aware:base=anthropic,threshold=3000,keep=3,clear_at_least=0,horizon=20"),
}


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return big_result(path)


class ToolModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording what each call received."""

    seen: list[list[Any]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def script() -> list[AIMessage]:
    out = [AIMessage(content=f"reading f{k}.py" if k % 3 == 0 else "",
                     tool_calls=[{"name": "read_file", "args": {"path": f"f{k}.py"}, "id": f"c{k}"}])
           for k in range(CALLS - 1)]
    return out + [AIMessage(content="done")]


def unreduced(last: list[Any], answer: Any) -> list[Any]:
    """The run as it happened: every tool result as the tool returned it."""
    args = {c["id"]: c["args"] for m in last if isinstance(m, AIMessage) for c in m.tool_calls}
    return [m.model_copy(update={"content": read_file.invoke(args[m.tool_call_id])}) if isinstance(m, ToolMessage)
            else m for m in [*last, answer]]


def run_langchain(config: Any, persist: bool, report: bool = True) -> tuple[list[list[Any]], list[Any], list[tc.Result]]:
    model = ToolModel(messages=iter(script()), seen=[])
    reports: list[tc.Result] = []
    agent = create_agent(model, [read_file], middleware=[
        ToolclearMiddleware(config, persist=persist, on_result=reports.append if report else None)])
    state = agent.invoke({"messages": [HumanMessage("read all the files")]}, {"recursion_limit": 500})
    return model.seen, state["messages"], reports


def run_langgraph(config: Any, persist: bool, report: bool = True) -> tuple[list[list[Any]], list[Any], list[tc.Result]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent
        from langgraph.prebuilt import create_react_agent

        model = ToolModel(messages=iter(script()), seen=[])
        reports: list[tc.Result] = []
        agent = create_react_agent(model, [read_file],
                                   pre_model_hook=pre_model_hook(config, persist=persist,
                                                                 on_result=reports.append if report else None))
    state = agent.invoke({"messages": [HumanMessage("read all the files")]}, {"recursion_limit": 500})
    return model.seen, state["messages"], reports


@pytest.mark.parametrize("runner", [run_langchain, run_langgraph], ids=["langchain", "langgraph"])
@pytest.mark.parametrize(("persist", "report"), [(True, True), (False, True), (False, False)],
                         ids=["persist", "per-call", "per-call-advanced"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_live_run_sends_what_the_replay_says(runner, persist, report, name) -> None:
    """Per call without a report, the request-level policies are advanced call by call
    (one engine kept across calls) rather than run afresh: the same contexts."""
    config = CONFIGS[name]
    if persist and name == "cache-aware":  # decided on the raw history, which a kept edit loses
        with pytest.raises(tc.ConfigError, match="per call"):
            runner(config, persist, report)
        return
    seen, final, reports = runner(config, persist, report)
    assert len(seen) == CALLS and len(reports) == (CALLS if report else 0)
    run = from_langchain(unreduced(seen[-1], final[-1]))
    assert_live_equals_replay([from_langchain(s) for s in seen], run, config, persist)
    # the state keeps the edit only when persisting
    kept = from_langchain(final)
    assert (kept[:-1] != run[:-1]) == persist or name == "eino-reduction"


def test_the_saved_run_reads_back_and_replays_the_same(tmp_path) -> None:
    config = CONFIGS["eino"]
    seen, final, _ = run_langchain(config, True)
    raw = unreduced(seen[-1], final[-1])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(messages_to_dict(raw)))
    loaded = tc.load(path)
    assert loaded.format == "langchain"
    assert shown(loaded.messages) == shown(from_langchain(raw))
    assert_live_equals_replay([from_langchain(s) for s in seen], loaded.messages, config, True)


def test_the_callback_reports_what_each_call_cleared() -> None:
    seen, _, reports = run_langchain(CONFIGS["eino"], True)
    first = next(k for k, r in enumerate(reports) if r.cleared_indices)
    assert reports[first].tokens_after < reports[first].tokens_before
    assert all(m.content == CONFIGS["eino"].placeholder
               for m in (from_langchain(seen[first])[i] for i in reports[first].cleared_indices))


def test_ids_and_metadata_survive_the_edit() -> None:
    seen, final, _ = run_langchain(CONFIGS["eino"], True)
    cleared = [m for m in final if isinstance(m, ToolMessage) and m.content == CONFIGS["eino"].placeholder]
    assert cleared and all(m.id and m.tool_call_id and m.name == "read_file" for m in cleared)
    assert len({m.id for m in final}) == len(final)


class Spy(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[Any]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.seen.append(list(request.messages))
        return handler(request)


def test_multimodal_parts_of_kept_messages_pass_through_untouched() -> None:
    image = {"type": "image", "url": "https://example.com/a.png"}
    model = ToolModel(messages=iter(script()), seen=[])
    agent = create_agent(model, [read_file], middleware=[ToolclearMiddleware(CONFIGS["eino"])])
    agent.invoke({"messages": [HumanMessage(content=[{"type": "text", "text": "read these"}, image])]},
                 {"recursion_limit": 500})
    assert all(s[0].content[1] == image for s in model.seen)
    assert from_langchain(model.seen[0])[0].content == "read these\n" + json.dumps(image, separators=(",", ":"))


def test_importing_toolclear_imports_no_framework() -> None:
    import subprocess
    import sys

    code = ("import sys, toolclear; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'langchain', 'langchain_core', 'langgraph', 'pydantic_ai', 'agents', 'openai', 'dask', 'pandas'}))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


@pytest.mark.parametrize("persist", [True, False], ids=["persist", "per-call"])
def test_one_adapter_serves_several_threads_each_its_own_conversation(persist, monkeypatch) -> None:
    """A middleware built once and shared by agent threads: calls of different
    conversations interleave, and each still gets what its own conversation needs."""
    import threading

    from toolclear.integrations import langchain as langchain_adapter
    from toolclear.integrations.langchain import LangChainLive

    config = CONFIGS["langchain"]

    def conversation(seed: int) -> list[Any]:
        msgs: list[Any] = [HumanMessage(f"task {seed}")]
        for k in range(24):
            msgs.append(AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": f"{seed}/{k}"},
                                                   "id": f"c{seed}-{k}"}]))
            msgs.append(ToolMessage(big_result(f"{seed}/{k}"), tool_call_id=f"c{seed}-{k}", name="read_file"))
        return msgs

    def run(live: Any, conv: list[Any], out: list[list[str]]) -> None:
        kept: list[Any] = []
        for n in range(2, len(conv) + 1, 2):
            history = kept + conv[len(kept):n] if persist else conv[:n]
            edited = live.edit(history)
            sent = edited if edited is not None else history
            kept = list(sent) if persist else []
            out.append([m.content for m in sent])

    convs = [conversation(s) for s in range(6)]
    expected: list[list[list[str]]] = []
    for conv in convs:  # each conversation alone, on its own adapter
        expected.append([])
        run(LangChainLive(config, persist), conv, expected[-1])
    shared = LangChainLive(config, persist)
    converted: list[int] = []
    convert = langchain_adapter._convert
    monkeypatch.setattr(langchain_adapter, "_convert", lambda m, before: converted.append(1) or convert(m, before))
    got: list[list[list[str]]] = [[] for _ in convs]
    threads = [threading.Thread(target=run, args=(shared, conv, out)) for conv, out in zip(convs, got)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as Python can, to interleave the calls
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert got == expected
    assert any("[cleared]" in c for out in got for c in out[-1])  # the policy did clear
    # each conversation kept its own state: every message was converted once, not on every call
    assert len(converted) == sum(len(c) // 2 * 2 for c in convs)  # the messages sent
