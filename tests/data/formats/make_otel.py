"""Record agent runs as OpenTelemetry traces with the real instrumentations, against a
local fake OpenAI backend (no network), and write them in the OTLP JSON encoding:
python tests/data/formats/make_otel.py

- pydantic-ai's own instrumentation (gen_ai.input.messages / gen_ai.output.messages);
  ``otel_pydantic-ai-1.0.18-events.json`` was recorded once with pydantic-ai-slim[openai]
  1.0.18 and ``pydantic_ai_run(version=1)`` (the messages as a JSON ``events`` span
  attribute), which pydantic-ai 2 no longer writes;
- OpenInference's OpenAI instrumentation around the openai SDK (llm.input_messages.N.*);
- Azure AI Inference's tracing (gen_ai.*.message span events, gen_ai.choice).

Each file holds one agent run: two tool calls (list a folder, read a file) and an
answer; the OpenInference run is written as JSON Lines, one export per span, as the
OpenTelemetry Collector's file exporter writes. Ids and times differ on every run.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LS = "README.md\nsetup.py\nsrc/\ntests/\n"
CAT = "".join(f"{n:4d}  def f{n}(x):\n" for n in range(1, 40))
SYSTEM = "You are a helpful coding agent."
QUESTION = "what is in this repo?"
TOOLS: dict[str, Callable[..., str]] = {"list_dir": lambda path: LS, "read_file": lambda path: CAT}


def _reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted model: list the folder, then read setup.py, then answer."""
    done = sum(1 for m in messages if m.get("role") == "tool")
    if done == 0:
        return {"tool_calls": [{"id": "call_ls", "type": "function",
                                "function": {"name": "list_dir", "arguments": json.dumps({"path": "."})}}]}
    if done == 1:
        return {"content": "Reading setup.py.", "tool_calls": [
            {"id": "call_cat", "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": "setup.py"})}}]}
    return {"content": "A Python package with a src/ layout."}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = _reply(body["messages"])
        prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
        out = {"id": f"chatcmpl-{len(body['messages'])}", "object": "chat.completion", "created": 1764800000,
               "model": "gpt-4o-2024-08-06",
               "choices": [{"index": 0, "message": {"role": "assistant", **message},
                            "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
               "usage": {"prompt_tokens": prompt, "completion_tokens": 12, "total_tokens": prompt + 12,
                         "prompt_tokens_details": {"cached_tokens": 0}}}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class FakeOpenAI:
    """A Chat Completions server on a free local port, for the length of a with-block."""

    def __enter__(self) -> str:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def _provider() -> tuple[Any, Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    """Spans in the OTLP/JSON encoding: the exporter's own protobuf request, in protobuf's
    JSON mapping with OTLP's two differences (trace and span ids in hex, enums as numbers)."""
    import base64

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for rs in request.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for span in ss.get("spans", ()):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
                for link in span.get("links", ()):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = base64.b64decode(link[key]).hex()
    return request


def pydantic_ai_run(**settings: Any) -> list[Any]:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider, exporter = _provider()
    with FakeOpenAI() as url:
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=url, api_key="local"))
        agent = Agent(model, instructions=SYSTEM, name="repo_guide")
        agent.instrument = InstrumentationSettings(tracer_provider=provider, **settings)
        for name, fn in TOOLS.items():
            agent.tool_plain(name=name)(fn)
        # In a thread of its own with a fresh event loop: a test suite may leave the main
        # thread's loop marked as running, which run_sync would trip over.
        failed: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(agent.run(QUESTION))
            except BaseException as error:  # handed back to the caller
                failed.append(error)

        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
        if failed:
            raise failed[0]
    return list(exporter.get_finished_spans())


def _chat_loop(complete: Callable[[list[Any]], Any], wrap: Callable[[str, Any], Any]) -> None:
    """A hand-written agent loop: call the model, run the tools it asks for, repeat."""
    messages: list[Any] = [wrap("system", SYSTEM), wrap("user", QUESTION)]
    while True:
        message = complete(messages)
        messages.append(wrap("assistant", message))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            result = TOOLS[call.function.name](**json.loads(call.function.arguments))
            messages.append(wrap("tool", (call.id, result)))


def openinference_run() -> list[Any]:
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider, exporter = _provider()
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tools = [{"type": "function", "function": {"name": n, "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}} for n in TOOLS]

    def wrap(role: str, value: Any) -> Any:
        if role == "assistant":
            return value.model_dump(exclude_none=True)
        if role == "tool":
            return {"role": "tool", "tool_call_id": value[0], "content": value[1]}
        return {"role": role, "content": value}

    try:
        with FakeOpenAI() as url:
            client = openai.OpenAI(base_url=url, api_key="local")
            _chat_loop(lambda ms: client.chat.completions.create(model="gpt-4o", messages=ms, tools=tools)
                       .choices[0].message, wrap)
    finally:
        instrumentor.uninstrument()
    return list(exporter.get_finished_spans())


def azure_inference_run() -> list[Any]:
    os.environ["AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED"] = "true"
    from azure.ai.inference import ChatCompletionsClient
    from azure.ai.inference.models import (
        AssistantMessage,
        ChatCompletionsToolDefinition,
        FunctionDefinition,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from azure.ai.inference.tracing import AIInferenceInstrumentor
    from azure.core.credentials import AzureKeyCredential
    from azure.core.settings import settings
    from opentelemetry import trace

    provider, exporter = _provider()
    trace.set_tracer_provider(provider)  # Azure's tracing reports to the global provider
    settings.tracing_implementation = "opentelemetry"
    instrumentor = AIInferenceInstrumentor()
    instrumentor.instrument(enable_content_recording=True)
    tools = [ChatCompletionsToolDefinition(function=FunctionDefinition(
        name=n, parameters={"type": "object", "properties": {"path": {"type": "string"}}})) for n in TOOLS]

    def wrap(role: str, value: Any) -> Any:
        if role == "assistant":
            return AssistantMessage(content=value.content, tool_calls=value.tool_calls)
        if role == "tool":
            return ToolMessage(value[1], tool_call_id=value[0])
        return SystemMessage(value) if role == "system" else UserMessage(value)

    try:
        with FakeOpenAI() as url:
            client = ChatCompletionsClient(endpoint=url, credential=AzureKeyCredential("local"))
            _chat_loop(lambda ms: client.complete(messages=ms, tools=tools, model="gpt-4o").choices[0].message, wrap)
    finally:
        instrumentor.uninstrument()
    return [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]  # not the HTTP spans


def _azure_in_its_own_process() -> str:
    """Azure's tracing only reports to the process's global tracer provider, which can be
    set once: it is recorded in a fresh interpreter, whatever this process set before."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, __file__, "--azure"], capture_output=True, text=True, timeout=120,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"recording the Azure AI Inference run failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def files() -> dict[str, str]:
    """File name -> text, each run recorded anew."""
    openinference = openinference_run()
    return {
        "otel_pydantic-ai.json": json.dumps(otlp_json(pydantic_ai_run()), indent=2) + "\n",
        "otel_openinference.jsonl": "".join(json.dumps(otlp_json([s])) + "\n" for s in openinference),
        "otel_azure-ai-inference.json": _azure_in_its_own_process(),
    }


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--azure"]:
        sys.stdout.write(json.dumps(otlp_json(azure_inference_run())) + "\n")
    else:
        for name, text in files().items():
            (HERE / name).write_text(text)
