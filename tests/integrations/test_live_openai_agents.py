"""A real OpenAI Agents SDK run (a Model of the SDK's own interface, no network, a real
function tool) with toolclear's input filter: what each model call received equals
toolclear's per-call replay, for every policy."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import toolclear as tc
from tests.conftest import DATA
from tests.live_support import CALLS, assert_live_equals_replay, big_result, in_thread, restored
from toolclear.integrations.openai_agents import call_model_input_filter, from_items

CONFIGS = {
    "eino": tc.ClearToolResultConfig(3000, 6000),
    "eino-small-window": tc.ClearToolResultConfig(2000, 1000),
    "swe-agent": tc.ObservationMaskingConfig.swe_agent(4),
    "langchain": tc.LangChainClearToolUsesConfig(trigger=2000, keep=3),
    "anthropic": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=3),
    # toolclear's own: clears only when they pay back their cache rewrite within the horizon
    "cache-aware": tc.parse_policy("cache-aware:base=anthropic,threshold=3000,keep=3,clear_at_least=0,horizon=20"),
}


class ScriptedModel(Model):
    """The SDK's model interface: calls read_file CALLS-1 times, then answers."""

    def __init__(self) -> None:
        self.seen: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any) -> ModelResponse:
        self.seen.append(json.loads(json.dumps(input if isinstance(input, list) else [
            {"role": "user", "content": input}], default=str)))
        k = len(self.seen) - 1
        if k < CALLS - 1:
            out: list[Any] = [ResponseFunctionToolCall(type="function_call", call_id=f"c{k}", name="read_file",
                                                       arguments=f'{{"path":"f{k}.py"}}')]
        else:
            out = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                         content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return big_result(path)


def run_agent(config: Any, report: bool = True) -> tuple[ScriptedModel, list[tc.Result], Any]:
    model = ScriptedModel()
    reports: list[tc.Result] = []
    agent = Agent(name="reader", instructions="You read files.", model=model, tools=[read_file])
    result = in_thread(Runner.run_sync, agent, "read all the files", max_turns=CALLS + 5,
                             run_config=RunConfig(call_model_input_filter=call_model_input_filter(
                                 config, on_result=reports.append if report else None), tracing_disabled=True))
    return model, reports, result


def read(items: list[Any]) -> list[tc.Message]:
    return list(from_items(items).messages)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("report", [True, False], ids=["report", "advanced"])
def test_live_run_sends_what_the_per_call_replay_says(name, report) -> None:
    """Without a report the request-level policies are advanced call by call (one
    engine kept across calls) rather than run afresh: the same contexts."""
    config = CONFIGS[name]
    model, reports, result = run_agent(config, report)
    assert len(model.seen) == CALLS and len(reports) == (CALLS if report else 0)
    items = [x for x in result.to_input_list()]
    run = restored(read(json.loads(json.dumps(items, default=str))))
    assert_live_equals_replay([read(s) for s in model.seen], run, config, persist=False)
    # the SDK's own items keep every result as the tool returned it
    assert run == read(json.loads(json.dumps(items, default=str)))


def test_the_python_sdks_run_state_is_read_and_written_back() -> None:
    """RunResult.to_state().to_json() of a real run (the Python SDK's snake_case keys:
    original_input, generated_items[].raw_item): every tool result read, and clearing
    writes back a file that reads as the placeholder."""
    _, _, result = run_agent(tc.ClearToolResultConfig(10**9, 10**9), report=False)
    doc = result.to_state().to_json()
    assert "generated_items" in doc and "original_input" in doc
    t = tc.load(json.dumps(doc).encode(), name="state.json")
    assert t.format == "openai-responses"
    tools = [m for m in t.messages if m.role == "tool"]
    assert len(tools) == CALLS - 1 and all(m.tool_name == "read_file" for m in tools)
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    back = tc.load(tc.dump(t, r.messages), name="state.json")
    assert [m.content for m in back.messages if m.role == "tool"] == [tc.DEFAULT_PLACEHOLDER] * (CALLS - 1)


def test_the_js_sdks_function_call_result_items_pair_by_call_id() -> None:
    """The JS SDK's RunState: camelCase keys, function calls paired by callId (their id
    is the item's own fc_... id), results as function_call_result with {type: text}."""
    state = {"$schemaVersion": "1.0", "originalInput": "read f0",
             "generatedItems": [
                 {"type": "tool_call_item", "rawItem": {"type": "function_call", "id": "fc_1", "callId": "call_A",
                                                         "name": "read_file", "arguments": "{\"path\":\"f0.py\"}"}},
                 {"type": "tool_call_output_item", "rawItem": {
                     "type": "function_call_result", "callId": "call_A", "name": "read_file", "status": "completed",
                     "output": {"type": "text", "text": "x" * 900}}},
                 {"type": "message_output_item", "rawItem": {"type": "message", "role": "assistant", "content": [
                     {"type": "output_text", "text": "done"}]}}]}
    t = tc.load(json.dumps(state).encode(), name="state.json")
    (tool,) = [m for m in t.messages if m.role == "tool"]
    assert tool.tool_call_id == "call_A" and tool.tool_name == "read_file" and tool.content == "x" * 900
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    out = json.loads(tc.dump(t, r.messages))
    assert out["generatedItems"][1]["rawItem"]["output"] == {"type": "text", "text": tc.DEFAULT_PLACEHOLDER}


def test_in_a_real_runner_each_item_is_edited_once(monkeypatch) -> None:
    """The SDK hands over new item dicts on every call: an output cleared on an earlier
    call is matched by value and its copy reused, not edited again on every call."""
    from toolclear.integrations import openai_agents

    edits: list[int] = []
    real = openai_agents._set
    def counted(value, path, new):
        if isinstance(value, dict) and "call_id" in value:  # an item (not one of its inner steps)
            edits.append(1)
        return real(value, path, new)

    monkeypatch.setattr(openai_agents, "_set", counted)
    model, reports, _ = run_agent(CONFIGS["swe-agent"])
    cleared = len(reports[-1].cleared_indices)
    assert cleared > 10
    assert len(edits) <= cleared + 2  # once per cleared output over the whole run (32 calls)


@pytest.mark.parametrize("config", [
    tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=3, clear_tool_inputs=True),
    tc.AnthropicClearToolUsesConfig(trigger_input_tokens=3000, keep_tool_uses=2, clear_tool_inputs=("read_file",)),
    tc.LangChainClearToolUsesConfig(trigger=2000, keep=3, clear_tool_inputs=True)], ids=["anthropic", "named",
                                                                                      "langchain"])
def test_clear_tool_inputs_runs_live_and_the_model_is_sent_the_emptied_arguments(config) -> None:
    """Clearing tool inputs in a real Runner: each function_call item the model is sent
    holds the arguments the policy left (``{}`` once cleared), and every call's context
    equals the per-call replay's, arguments included."""
    model, reports, result = run_agent(config)
    items = json.loads(json.dumps(result.to_input_list(), default=str))
    run = restored(read(items))
    assert_live_equals_replay([read(s) for s in model.seen], run, config, persist=False)
    last = model.seen[-1]
    emptied = [i for i in last if i.get("type") == "function_call" and i["arguments"] == "{}"]
    assert len(emptied) >= CALLS // 2
    assert all(i["arguments"] != "{}" for i in items if i.get("type") == "function_call")  # the SDK's own kept


def test_an_item_shown_changed_then_as_it_was_is_sent_as_the_sdk_gave_it() -> None:
    """Items equal to the previous call's are not looked at again, only the messages
    shown differently from the previous call: one the policy changed and then shows as
    it was goes back to the SDK's own item."""
    from toolclear.integrations.openai_agents import _ItemsLive

    script: list[set[int]] = [{2}, {2}, set()]  # which messages the policy shows cleared, call by call
    shown_before: set[int] = set()

    class Scripted(_ItemsLive):
        def shown(self, messages: Any, conv: Any = None, known: int = 0, copy: bool = True) -> Any:
            nonlocal shown_before
            cleared = script.pop(0)
            # (read by the adapter as: an engine advanced call by call, showing these differently)
            conv.growing.touched = sorted(cleared ^ shown_before)
            shown_before = cleared
            keep = getattr(self, "kept", {})
            out = [keep.setdefault(i, m.with_content("[cleared]")) if i in cleared else m
                   for i, m in enumerate(messages)]
            self.kept = keep
            return out

    live = Scripted(tc.ClearToolResultConfig(0, 0, "[cleared]"), per_call=True)
    items = [{"role": "user", "content": "go"},
             {"type": "function_call", "call_id": "c0", "name": "read", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c0", "output": "x" * 500}]
    more = [{"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "y" * 500}]
    first = live.edit(items)
    assert first is not None and first[2]["output"] == "[cleared]" and items[2]["output"] == "x" * 500
    second = live.edit([dict(i) for i in items + more])  # new dicts, equal values: as the SDK hands them
    assert second is not None and second[2]["output"] == "[cleared]" and second[4]["output"] == "y" * 500
    third = live.edit([dict(i) for i in items + more])
    assert third is None  # nothing shown changed: the SDK's items go as they are
    assert not script



def test_a_grown_call_reads_its_items_as_reading_them_all_would() -> None:
    """Each call reads only its new items: a call item that goes on the previous
    call's last reply (its text, or its calls) joins that message as read. Call by call,
    what the adapter read equals reading every item afresh, and what it sends equals a
    fresh adapter's edit of the same items."""
    from toolclear.integrations.openai_agents import _ItemsLive

    def call(k: int) -> dict[str, Any]:
        return {"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": f'{{"p":{k}}}'}

    def out(k: int) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": f"c{k}", "output": f"result {k} " * 80}

    text = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "looking"}]}
    calls = [[{"role": "user", "content": "go"}, call(0), out(0), text],  # ends with the assistant's text
             [call(1), out(1)],  # its call joins that reply
             [call(2)],  # ends with a call whose output is not in yet
             [call(3), out(2), out(3)],  # a second call of the same reply, then both outputs
             [call(4), out(4)]]  # after a tool's output
    for config in (tc.ClearToolResultConfig(10**9, 10**9), tc.ClearToolResultConfig(0, 0, "[cleared]")):
        live = _ItemsLive(config, per_call=True)
        items: list[Any] = []
        for new in calls:
            items = [dict(i) for i in items] + new  # new dicts, equal values: as the SDK hands them
            sent = live.edit(items)
            read = live.conversation(repr(items[:2])).read
            assert read is not None and read.messages == list(from_items(items).messages)
            assert sent == _ItemsLive(config, per_call=True).edit([dict(i) for i in items])


# ---- RunStates of every tool kind, from real runs of both SDKs (tests/data/formats)

sys_path_formats = str(DATA / "formats")
STATE_RESULTS = {  # file -> the tool of each result, in order
    "openai-agents-py-0.24_run-state-tools.json": ["read_file", "grep", "shell", "read_file", "program",
                                                   "apply_patch"],
    "openai-agents-py-0.24_run-state-approval.json": [],
    "openai-agents-js-0.20_run-state-tools.json": ["read_file", "shell", "apply_patch"],
    "openai-agents-js-0.20_run-state-approval.json": [],
}


def _differences(a: Any, b: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return [d for k in a for d in _differences(a[k], b[k], path + (k,))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for j, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, path + (j,))]
    return [] if a == b else [path]


@pytest.mark.parametrize("name", list(STATE_RESULTS))
def test_every_tool_kinds_run_state_is_read_cleared_and_written_back(name) -> None:
    """Function, custom, shell (stdout and stderr), apply_patch and programmatic tool
    outputs are tool results; hosted tool search is read past with a note; a call paused
    for approval is one call (the SDK lists it twice). Clearing changes the outputs and
    nothing else of the state."""
    raw = (DATA / "formats" / name).read_bytes()
    t = tc.load(raw, name=name)
    assert t.format == "openai-responses" and not t.warnings
    tools = [m for m in t.messages if m.role == "tool"]
    assert [m.tool_name for m in tools] == STATE_RESULTS[name]
    assert all(len(m.content) > 1000 for m in tools)
    calls = [c.id for m in t.messages for c in m.tool_calls]
    assert len(calls) == len(set(calls)) >= 1
    if "tools" in name and "-py-" in name:
        assert any("tool_search_call, tool_search_output" in n for n in t.notes)
    r = tc.apply(t.messages, tc.ClearToolResultConfig(0, 0))
    out = tc.dump(t, r.messages)
    back = tc.load(out, name=name)
    assert [m.content for m in back.messages if m.role == "tool"] == [tc.DEFAULT_PLACEHOLDER] * len(tools)
    changed = _differences(json.loads(raw), json.loads(out))
    assert len({p[:3] for p in changed}) == len(tools)  # one generated item per result, nothing else
    assert all(p[0] in ("generated_items", "generatedItems") and any(
        k in p for k in ("output", "result")) for p in changed)


def test_the_python_sdk_resumes_from_a_cleared_run_state() -> None:
    """The reference reads back what toolclear wrote: RunState.from_json of the cleared
    state of a real run of every tool kind, then the run goes on."""
    from agents import RunState

    sys.path.insert(0, sys_path_formats)
    try:
        import make_agents_states
    finally:
        sys.path.remove(sys_path_formats)
    recorded = make_agents_states.states()
    for name, state in recorded.items():  # what the pinned SDK writes today reads as the committed files
        fresh = tc.load(json.dumps(state).encode(), name=name)
        assert [m.tool_name for m in fresh.messages if m.role == "tool"] == STATE_RESULTS[name]
    t = tc.load(json.dumps(recorded["openai-agents-py-0.24_run-state-tools.json"]).encode(), name="s.json")
    cleared = json.loads(tc.dump(t, tc.apply(t.messages, tc.ClearToolResultConfig(0, 0)).messages))
    state = in_thread(asyncio.run, RunState.from_json(make_agents_states.tools_agent(), cleared))
    outputs = [i.raw_item for i in state._generated_items if type(i).__name__ == "ToolCallOutputItem"]
    assert len(outputs) == 6 and all(tc.DEFAULT_PLACEHOLDER in json.dumps(o, default=str) for o in outputs)


def test_a_run_state_with_no_items_yet_reads_as_its_input() -> None:
    """A RunState paused before any item (a string input, its approval held elsewhere) is
    a conversation of one user message, read, not refused."""
    state = json.loads((DATA / "formats" / "openai-agents-js-0.20_run-state-approval.json").read_text())
    state["generatedItems"] = []
    for fmt in ("auto", "openai-responses"):
        t = tc.load(json.dumps(state).encode(), name="state.json", format=fmt)
        assert [(m.role, m.content) for m in t.messages] == [("user", "delete a.py")]


@pytest.mark.parametrize("seed", range(24))
def test_any_sequence_of_calls_sends_what_a_fresh_filter_sends(seed) -> None:
    """The filter remembers the previous call (its items by value, packed; the messages
    it read; where the policy's engine stood): over random sequences of calls that grow,
    rewrite an earlier item, shrink, switch between two conversations or hand over the
    SDK's models instead of dicts, every call sends what a filter that remembers
    nothing sends for the same items."""
    import random

    from openai.types.responses import ResponseFunctionToolCall

    from toolclear.integrations.openai_agents import _item, _ItemsLive

    rng = random.Random(seed)
    config = rng.choice([tc.LangChainClearToolUsesConfig(trigger=300, keep=2),
                         tc.AnthropicClearToolUsesConfig(trigger_input_tokens=300, keep_tool_uses=2),
                         tc.ClearToolResultConfig(300, 200, "[cleared]"), tc.ObservationMaskingConfig.swe_agent(2)])
    live = _ItemsLive(config, per_call=True)
    runs: list[list[Any]] = [[{"role": "user", "content": "go"}], [{"role": "user", "content": "other"}]]
    k = 0
    for _ in range(40):
        run = rng.choice(runs) if rng.random() < 0.2 else runs[0]
        move = rng.random()
        if move < 0.1 and len(run) > 3:  # an earlier output rewritten
            j = rng.choice([i for i, x in enumerate(run) if x.get("type") == "function_call_output"] or [0])
            run[j] = {**run[j], "output": "rewritten " * rng.randint(1, 60)} if j else run[j]
        elif move < 0.15 and len(run) > 5:  # the history shortened
            del run[rng.randint(3, len(run) - 1):]
        else:
            for _ in range(rng.randint(0, 3)):
                run.append({"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": f'{{"p":{k}}}'})
                run.append({"type": "function_call_output", "call_id": f"c{k}", "output": f"line {k}\n" * rng.randint(1, 80)})
                k += 1
        # new objects on every call, equal values, as the SDK hands them; now and then its models
        items = [ResponseFunctionToolCall(**i) if i.get("type") == "function_call" and rng.random() < 0.05
                 else dict(i) for i in run]
        sent = live.edit(items)  # (an item left alone goes back as the SDK gave it: a model stays one)
        assert (sent and [_item(i) for i in sent]) == _ItemsLive(config, per_call=True).edit([dict(i) for i in run])


def test_an_item_that_is_not_an_object_is_named_and_nothing_given_is_changed() -> None:
    """A call whose new item is not a Responses item (a string) fails with the item's
    index, on the first call or on a grown one, and leaves the caller's list as it was."""
    import copy

    from toolclear.errors import TranscriptError

    def data(items: list[Any]) -> Any:
        return type("D", (), {"model_data": type("M", (), {"input": items, "instructions": ""})()})()

    f = call_model_input_filter(tc.LangChainClearToolUsesConfig(trigger=100, keep=1))
    items: list[Any] = [{"role": "user", "content": "go"}]
    for k in range(12):
        items += [{"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": f"c{k}", "output": "x " * 300}]
        f(data([dict(i) for i in items]))
    for bad in (items + [items[1], "not an item"], ["not an item"] + items):
        given = copy.deepcopy(bad)
        with pytest.raises(TranscriptError, match=rf"Agents SDK input item {bad.index('not an item')}"):
            f(data(bad))
        assert bad == given
        # the next call, the run as it was plus a round, is sent what a fresh filter sends
        more = items + [{"type": "function_call", "call_id": "c99", "name": "read", "arguments": "{}"},
                        {"type": "function_call_output", "call_id": "c99", "output": "y " * 300}]
        fresh = call_model_input_filter(tc.LangChainClearToolUsesConfig(trigger=100, keep=1))
        assert f(data([dict(i) for i in more])).input == fresh(data(more)).input
