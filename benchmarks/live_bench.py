"""Overhead of the live adapters per model call on a 1,000-message history, counts
cached (the history of the previous call plus one new tool round), against a floor
measured in the same run: copying the message list, the least any hook does.

    .venv/bin/python benchmarks/live_bench.py
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


def main() -> None:
    from toolclear.integrations.langchain import LangChainLive
    from toolclear.integrations.pydantic_ai import history_processor

    lc, pa = langchain_histories(), pydantic_histories()
    floor = per_call(list, lc, persist=False)
    print(f"floor (copy a {N:,}-message list): {floor:.3f} ms")
    print(f"{'framework':<12} {'policy':<10} {'ms per call':>12} {'x floor':>9}")
    for name, config in POLICIES.items():
        for fw, hist, make in (("langchain", lc, lambda c: LangChainLive(c, True).edit),
                               ("pydantic-ai", pa, history_processor)):
            fn = make(config)
            ms = per_call(fn, hist)  # the first calls convert and count everything once
            print(f"{fw:<12} {name:<10} {ms:12.3f} {ms / floor:9.1f}")


if __name__ == "__main__":
    main()
