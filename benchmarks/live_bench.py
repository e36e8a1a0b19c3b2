"""Overhead of the live adapters per model call on a 1,000-message history, counts
cached (the history of the previous call plus one new tool round), against a floor
measured in the same run: copying the message list, the least any hook does. Both
modes: persisting (the default of LangChain, LangGraph, pydantic-ai) and per call
(``persist=False``; the only mode of the OpenAI Agents SDK, whose items are rebuilt as
new dicts on every call, as the SDK does).

    .venv/bin/python benchmarks/live_bench.py [--json]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402

N = 1_000
POLICIES: dict[str, Any] = {
    "eino": tc.ClearToolResultConfig(20_000, 40_000),
    "langchain": tc.LangChainClearToolUsesConfig(trigger=20_000, keep=3),
    "anthropic": tc.AnthropicClearToolUsesConfig(trigger_input_tokens=20_000, keep_tool_uses=3),
    "masking": tc.ObservationMaskingConfig.swe_agent(5),
}


def per_call(fn: Any, histories: list[Any], persist: bool = True) -> float:
    """Median milliseconds of fn over successive growing histories; persisting, each
    call starts from what the previous call left (as the agent's state does)."""
    times = []
    kept: list[Any] = []
    for h in histories:
        h = kept + h[len(kept):] if persist else h
        t = time.perf_counter()
        out = fn(h)
        times.append(time.perf_counter() - t)
        kept = list(out) if isinstance(out, list) else list(h)
    times.sort()
    return times[len(times) // 2] * 1000


def langchain_histories() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    msgs: list[Any] = [HumanMessage("go")]
    k = 0
    while len(msgs) < N + 60:
        msgs.append(AIMessage("", tool_calls=[{"name": "read", "args": {"p": k}, "id": f"c{k}"}]))
        msgs.append(ToolMessage("line of code\n" * 150, tool_call_id=f"c{k}", name="read"))
        k += 1
    return [msgs[:n] for n in range(N - 60, N + 60, 2)]


def pydantic_histories() -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

    msgs: list[Any] = [ModelRequest(parts=[UserPromptPart("go")])]
    k = 0
    while len(msgs) < N + 60:
        msgs.append(ModelResponse(parts=[ToolCallPart("read", {"p": k}, tool_call_id=f"c{k}")]))
        msgs.append(ModelRequest(parts=[ToolReturnPart("read", "line of code\n" * 150, tool_call_id=f"c{k}")]))
        k += 1
    return [msgs[:n] for n in range(N - 60, N + 60, 2)]


def sdk_histories() -> list[Any]:
    items: list[Any] = [{"role": "user", "content": "go"}]
    k = 0
    while len(items) < N + 60:
        items.append({"type": "function_call", "call_id": f"c{k}", "name": "read", "arguments": f'{{"p":{k}}}',
                      "id": f"fc{k}", "status": "completed"})
        items.append({"type": "function_call_output", "call_id": f"c{k}", "output": "line of code\n" * 150})
        k += 1
    # the SDK dumps its own models (the calls) to new dicts on each call, sharing the strings
    return [[dict(i) if i.get("type") == "function_call" else i for i in items[:n]] for n in range(N - 60, N + 60, 2)]


def sdk_filter(config: Any) -> Any:
    from types import SimpleNamespace

    from toolclear.integrations.openai_agents import call_model_input_filter

    f = call_model_input_filter(config)
    return lambda items: f(SimpleNamespace(model_data=SimpleNamespace(input=items, instructions="")))


def sdk_runner_ms(config: Any) -> tuple[float, float]:
    """Median milliseconds of the filter per call inside a real Agents SDK ``Runner``
    (its own items, rebuilt by the SDK on every call), over the calls whose input holds
    N-60 to N+60 items; and of the SDK's own work between two calls (its turn: the
    scripted model's reply, the tool, the items rebuilt), the floor a user's agent pays
    anyway."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from agents import Agent, RunConfig, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from toolclear.integrations.openai_agents import call_model_input_filter

    rounds = (N + 60) // 2
    timed: list[tuple[int, float, float]] = []

    class Scripted(Model):
        def __init__(self) -> None:
            self.k = 0

        async def get_response(self, *args: Any, **kw: Any) -> ModelResponse:
            self.k += 1
            if self.k < rounds:
                out: list[Any] = [ResponseFunctionToolCall(type="function_call", call_id=f"c{self.k}",
                                                           name="read", arguments=f'{{"p":{self.k}}}')]
            else:
                out = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                             content=[ResponseOutputText(type="output_text", text="done",
                                                                         annotations=[])])]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kw: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def read(p: int) -> str:
        """Read."""
        return "line of code\n" * 150

    inner = call_model_input_filter(config)

    def timed_filter(data: Any) -> Any:
        t = time.perf_counter()
        out = inner(data)
        timed.append((len(data.model_data.input), t, time.perf_counter()))
        return out

    agent = Agent(name="r", instructions="read", model=Scripted(), tools=[read])
    done = SimpleNamespace(error=None)

    def run() -> None:
        try:
            asyncio.run(Runner.run(agent, "go", max_turns=rounds + 5,
                                   run_config=RunConfig(call_model_input_filter=timed_filter, tracing_disabled=True)))
        except Exception as exc:
            done.error = exc

    th = threading.Thread(target=run)
    th.start()
    th.join()
    if done.error is not None:
        raise done.error
    window = sorted(end - start for n, start, end in timed if N - 60 <= n <= N + 60)
    turns = sorted(start - before[2] for before, (n, start, _) in zip(timed, timed[1:]) if N - 60 <= n <= N + 60)
    return window[len(window) // 2] * 1000, turns[len(turns) // 2] * 1000


def rows() -> list[tuple[str, str, str]]:
    """The table's rows: the floor, then each framework, mode and policy (best of three
    runs of the median call over the growing histories; the first calls convert and
    count everything once)."""
    from toolclear.integrations.langchain import LangChainLive
    from toolclear.integrations.pydantic_ai import history_processor

    lc, pa, sdk = langchain_histories(), pydantic_histories(), sdk_histories()
    floor = per_call(list, lc, persist=False)
    out = [(f"live: floor, copy a {N:,}-message list", f"{floor:.3f} ms", "")]
    for name, config in POLICIES.items():
        for fw, mode, hist, make in (("LangChain", "persist", lc, lambda c: LangChainLive(c, True).edit),
                                     ("LangChain", "per call", lc, lambda c: LangChainLive(c, False).edit),
                                     ("pydantic-ai", "persist", pa, history_processor),
                                     ("Agents SDK", "per call", sdk, sdk_filter)):
            ms = min(per_call(make(config), hist, persist=mode == "persist") for _ in range(3))
            out.append((f"live, {N:,} messages: {fw}, {mode}, {name} policy", f"{ms:.3f} ms",
                        f"{ms / floor:.0f} x floor; < 1 ms {'ok' if ms < 1 else 'MISSED'}"))
        ms, turn = min(sdk_runner_ms(config) for _ in range(3))
        out.append((f"live, {N:,} items: Agents SDK in a real Runner, {name} policy", f"{ms:.3f} ms",
                    f"{ms / floor:.0f} x floor, {100 * ms / turn:.0f} % of the SDK's own turn ({turn:.2f} ms); "
                    f"< 0.5 ms {'ok' if ms < 0.5 else 'MISSED'}"))
    return out


def main() -> None:
    table = rows()
    if "--json" in sys.argv[1:]:  # for benchmarks/run.py, which runs these rows in a process of their own
        import json

        print(json.dumps(table))
        return
    width = max(len(r[0]) for r in table)
    for what, figure, target in table:
        print(f"| {what:<{width}} | {figure:>10} | {target} |")


if __name__ == "__main__":
    main()
