"""openai-trimmer against the reference itself: the OpenAI Agents SDK's ToolOutputTrimmer
(openai-agents, pinned in requirements-dev.txt) called on the same Responses items that
toolclear reads, on generated histories and on items converted from real runs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from agents.extensions import ToolOutputTrimmer
from agents.run_config import CallModelData, ModelInputData

import toolclear as tc
from toolclear.policies.openai_trimmer import ToolOutputTrimmerConfig

ROOT = Path(__file__).resolve().parents[2]
REAL = [ROOT / "tests" / "data" / "corpus" / "claude_code" / name for name in (  # runs of several user turns
    "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl", "entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl",
    "entire-cli_cc-2.1.4_task-skill-askuser_d3-7d736cbc10.jsonl", "entire-cli_cc-2.1.7_webfetch-websearch_86-4e0c91f5c0.jsonl")]
NAMES = ("search", "read_file", "run", "ls")


def _items(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """A Responses input: user turns, assistant text, function calls and their outputs
    (short, long, just over and under the limits, non-ASCII), parallel calls now and then."""
    out: list[dict[str, Any]] = []
    k = 0
    for _ in range(n):
        roll = rng.random()
        if roll < 0.2:
            out.append({"role": "user", "content": f"turn {len(out)}"})
        elif roll < 0.3:
            out.append({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": "thinking"}]})
        else:
            calls = []
            for _ in range(1 if rng.random() < 0.8 else 3):
                k += 1
                name = rng.choice(NAMES)
                out.append({"type": "function_call", "call_id": f"c{k}", "name": name, "arguments": "{}"})
                calls.append(f"c{k}")
            for cid in calls:
                size = rng.choice((0, 10, 199, 200, 420, 499, 500, 501, 520, 700, 3000))
                text = "".join(rng.choice("ab é\n漢") for _ in range(size))
                out.append({"type": "function_call_output", "call_id": cid, "output": text})
    return out


def _reference(items: list[dict[str, Any]], config: ToolOutputTrimmerConfig) -> dict[str, str]:
    """call_id -> the output the real filter sends, for every function_call_output."""
    trimmer = ToolOutputTrimmer(recent_turns=config.recent_turns, max_output_chars=config.max_output_chars,
                                preview_chars=config.preview_chars,
                                trimmable_tools=set(config.trimmable_tools) if config.trimmable_tools else None)
    sent = trimmer(CallModelData(model_data=ModelInputData(input=[dict(i) for i in items], instructions=None),
                                 agent=None, context=None))  # type: ignore[arg-type]
    return {str(i["call_id"]): i["output"] for i in sent.input if isinstance(i, dict)
            and i.get("type") == "function_call_output"}


def _ours(items: list[dict[str, Any]], config: ToolOutputTrimmerConfig) -> dict[str, str]:
    t = tc.load(json.dumps({"model": "gpt-5", "input": items}).encode(), "openai-responses")
    r = tc.apply(t.messages, config)
    return {m.tool_call_id: m.content for m in r.messages if m.role == "tool"}


CONFIGS = [ToolOutputTrimmerConfig(), ToolOutputTrimmerConfig(1, 300, 50), ToolOutputTrimmerConfig(3, 500, 0),
           ToolOutputTrimmerConfig(2, 100, 400), ToolOutputTrimmerConfig(2, 200, 100, ("search", "ls"))]


@pytest.mark.parametrize("seed", range(40))
def test_generated_histories_match_the_real_trimmer(seed) -> None:
    rng = random.Random(seed)
    items = _items(rng, rng.randint(3, 40))
    for config in CONFIGS:
        assert _ours(items, config) == _reference(items, config), (seed, config)


def _as_items(t: tc.Transcript) -> list[dict[str, Any]]:
    """A real run's messages as the Responses items an Agents SDK agent would send."""
    out: list[dict[str, Any]] = []
    for m in t.messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.content or " "})
        elif m.role == "assistant":
            if m.content:
                out.append({"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": m.content}]})
            out += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments or "{}"}
                    for c in m.tool_calls if c.id]
        elif m.role == "tool" and m.tool_call_id:
            out.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content})
    return out


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_real_runs_match_the_real_trimmer_before_each_call(path) -> None:
    """The filter runs before every call on the history so far: compared before the
    calls of a real Claude Code run (about 25 of them), converted to Responses items."""
    items = _as_items(tc.load(path))
    # the input of each model call: everything before the first item of its reply
    calls = [k for k, i in enumerate(items) if i.get("type") == "function_call" and k > 0
             and items[k - 1].get("type") != "function_call"
             and any(j.get("type") == "function_call_output" for j in items[:k])]
    assert len(calls) > 5 and sum(1 for i in items if i.get("role") == "user") >= 7
    trimmed = 0
    for end in [*calls[:: max(1, len(calls) // 25)], len(items)]:
        for config in CONFIGS[:2]:
            ref = _reference(items[:end], config)
            assert _ours(items[:end], config) == ref, (path.name, end, config)
            trimmed += sum(1 for v in ref.values() if v.startswith("[Trimmed: "))
    assert trimmed  # the comparison saw the reference trim


def test_the_replay_is_the_filter_before_every_call() -> None:
    """Replayed call by call (not sticky), each step sends what the filter sends then."""
    items = _items(random.Random(7), 60)
    t = tc.load(json.dumps({"model": "gpt-5", "input": items}).encode(), "openai-responses")
    config = ToolOutputTrimmerConfig(1, 300, 50)
    r = tc.replay(t.messages, config)
    assert r.cleared_indices and r.cache_breaks <= sum(1 for m in t.messages if m.role == "user")
    final = {m.tool_call_id: m.content for m in r.messages if m.role == "tool"}
    assert final == _reference(items, config)


def test_the_cli_and_parse_policy_take_its_own_option_names() -> None:
    cfg = tc.parse_policy("openai-trimmer:recent_turns=2,max_output_chars=500,preview_chars=200,"
                          "trimmable_tools=search|read")
    assert cfg == ToolOutputTrimmerConfig(2, 500, 200, ("search", "read"))
    assert tc.runs.lab.policy_spec(cfg) == "openai-trimmer:trimmable_tools=search|read"
    with pytest.raises(tc.ConfigError, match="recent_turns"):
        tc.parse_policy("openai-trimmer:recent_turns=0")


def test_it_reaches_the_app_with_its_own_sliders_and_every_view() -> None:
    """No code of its own outside its module: the picker, its sliders, the verdict, every
    view and the export come from the registry."""
    from tests.inspector.test_app import metrics, show, start

    path = REAL[3]  # a Claude Code run of eight user turns
    at = start()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/jsonl")).run()
    at.selectbox(key="policy").set_value("OpenAI Agents SDK ToolOutputTrimmer").run()
    at.number_input(key="p_openai_trimmer_recent_turns_input").set_value(1).run()
    at.number_input(key="p_openai_trimmer_max_output_chars_input").set_value(300).run()
    at.radio(key="mode").set_value("replay").run()
    assert not at.exception, at.exception
    t = tc.load(path)
    config = ToolOutputTrimmerConfig(1, 300)
    r = tc.replay(t.messages, config, calibration=tc.runs.lab.sent_as(t.messages))
    m = metrics(at)
    assert m["Changed at some call"] == f"{len(r.cleared_indices):,}" and r.cleared_indices
    assert m["With the policy"] == f"${tc.verdict(t, config).dollars:,.2f}"
    for view in ("Replay", "Messages", "Parameter sweep", "Compare", "Export", "Token usage"):
        show(at, view)
        assert not at.exception and not at.error, (view, [e.value for e in at.error])
    show(at, "Export")
    assert any("ToolOutputTrimmer(" in c.value for c in at.code)


def test_it_reaches_the_cli_compare_and_the_corpus(tmp_path) -> None:
    import io
    import shutil

    from toolclear.cli import main

    out = io.BytesIO()
    assert main(["policies"], stdout=out, stderr=io.StringIO()) == 0
    assert "openai-trimmer" in out.getvalue().decode() and "max_output_chars (threshold) = 500" in out.getvalue().decode()
    out = io.BytesIO()
    assert main(["compare", str(REAL[3]), "--policy", "openai-trimmer:recent_turns=1", "--json"], stdout=out,
                stderr=io.StringIO()) == 0
    row = json.loads(out.getvalue())["policies"][0]
    v = tc.verdict(tc.load(REAL[3]), "openai-trimmer:recent_turns=1")
    assert row["dollars"] == pytest.approx(v.dollars) and row["results_cleared"] > 0
    shutil.copy(REAL[3], tmp_path / REAL[3].name)
    sweep = tc.sweep_corpus(tc.load_corpus(tmp_path), tc.grid(tc.parse_policy("openai-trimmer"),
                                                               threshold=[300, 1000]), engine="serial")
    assert list(sweep.table["policy"]) == ["openai-trimmer"] * 2 and (sweep.table["error"] == "").all()


def test_live_in_a_real_runner_over_several_user_turns_it_sends_what_the_real_trimmer_sends() -> None:
    """A real Runner, several user turns (each a new Runner.run on the last turn's items and
    a new user message), a model of the SDK's own interface that reads files: once with
    the real ToolOutputTrimmer as call_model_input_filter, once with toolclear's adapter
    running openai-trimmer. Every model call receives the same items."""
    import json as _json

    from agents import Agent, RunConfig, Runner, function_tool
    from agents.extensions import ToolOutputTrimmer
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from tests.live_support import in_thread
    from toolclear.integrations.openai_agents import call_model_input_filter

    class Reader(Model):
        """Reads three files per user turn (sizes around the 500-character limit), then answers."""

        def __init__(self) -> None:
            self.seen: list[Any] = []
            self.k = 0

        async def get_response(self, system_instructions: Any, input: Any, *a: Any, **kw: Any) -> ModelResponse:
            items = input if isinstance(input, list) else [{"role": "user", "content": input}]
            self.seen.append(_json.loads(_json.dumps(items, default=str)))
            done_here = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
                            and i.get("call_id", "").startswith(f"t{self.turn}-"))
            if done_here < 3:
                self.k += 1
                out: list[Any] = [ResponseFunctionToolCall(type="function_call", call_id=f"t{self.turn}-{self.k}",
                                                           name="read_file", arguments=_json.dumps({"n": self.k}))]
            else:
                out = [ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[
                    ResponseOutputText(type="output_text", text=f"turn {self.turn} done", annotations=[])])]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **kw: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def read_file(n: int) -> str:
        """Read a file."""
        return f"file {n}\n" + "x" * (300 + 97 * n)

    def run(filter_: Any) -> list[Any]:
        model = Reader()
        agent = Agent(name="reader", instructions="You read files.", model=model, tools=[read_file])
        history: list[Any] = []
        for turn in range(4):
            model.turn = turn
            result = in_thread(Runner.run_sync, agent, history + [{"role": "user", "content": f"turn {turn}"}],
                               run_config=RunConfig(call_model_input_filter=filter_, tracing_disabled=True))
            history = result.to_input_list()
        return model.seen

    config = ToolOutputTrimmerConfig(recent_turns=2, max_output_chars=500, preview_chars=120)
    reference = run(ToolOutputTrimmer(recent_turns=2, max_output_chars=500, preview_chars=120))
    ours = run(call_model_input_filter(config))
    assert len(reference) == len(ours) == 16
    assert ours == reference
    trimmed = [i for call in reference for i in call if isinstance(i, dict)
               and str(i.get("output", "")).startswith("[Trimmed:")]
    assert len(trimmed) >= 10  # the older turns' long outputs were trimmed on later calls
