"""Record OpenAI Agents SDK RunState snapshots from real runs of the Python SDK (a
scripted Model of the SDK's own interface, real tools, no network):
python tests/data/formats/make_agents_states.py

- ``openai-agents-py-0.24_run-state-tools.json``: a function tool, a custom tool, the
  shell and apply_patch tools, hosted tool search (``tool_search_call`` /
  ``tool_search_output``) and programmatic tool calling (a ``program`` item, a function
  call whose ``caller`` is the program, its ``program_output``);
- ``openai-agents-py-0.24_run-state-approval.json``: a run paused on a tool call that
  needs approval (the call is in ``generated_items`` twice: its tool_call_item and its
  tool_approval_item).

The JS SDK's counterparts (``openai-agents-js-0.20_*``) come from
``make_agents_states.mjs`` (``npm install @openai/agents-core@0.20.0 zod``; ``node``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.tool import ApplyPatchTool, CustomTool, ProgrammaticToolCallingTool, ShellTool, ToolSearchTool
from agents.usage import Usage
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseCustomToolCall,
    ResponseFunctionShellToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseToolSearchCall,
    ResponseToolSearchOutputItem,
)
from openai.types.responses.response_output_item import Program, ProgramOutput

HERE = Path(__file__).resolve().parent
BIG = "".join(f"{n:4d}  line {n} of the file\n" for n in range(60))


def _say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


SCRIPT: list[list[Any]] = [
    [ResponseToolSearchCall(id="ts1", type="tool_search_call", arguments={"query": "files"}, call_id="ts_call",
                            execution="server", status="completed"),
     ResponseToolSearchOutputItem.model_validate(
         {"id": "tso1", "type": "tool_search_output", "call_id": "ts_call", "execution": "server",
          "status": "completed", "tools": [{"type": "function", "name": "read_file", "parameters": {
              "type": "object", "properties": {"path": {"type": "string"}}}}]}),
     ResponseFunctionToolCall(type="function_call", call_id="call_read", name="read_file",
                              arguments='{"path":"a.py"}')],
    [ResponseCustomToolCall(type="custom_tool_call", call_id="call_custom", name="grep", input="def f")],
    [ResponseFunctionShellToolCall.model_validate(
        {"id": "sh1", "type": "shell_call", "call_id": "call_shell", "status": "completed",
         "action": {"commands": ["ls -la"]}})],
    [Program(id="pr1", type="program", call_id="call_prog", code="await tools.read_file({path:'b.py'})",
             fingerprint="fp1"),
     ResponseFunctionToolCall.model_validate(
         {"type": "function_call", "call_id": "call_inner", "name": "read_file", "arguments": '{"path":"b.py"}',
          "caller": {"type": "program", "caller_id": "call_prog"}})],
    [ProgramOutput(id="po1", type="program_output", call_id="call_prog", result=BIG, status="completed"),
     ResponseApplyPatchToolCall.model_validate(
         {"id": "ap1", "type": "apply_patch_call", "call_id": "call_patch", "status": "completed",
          "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-x\n+y\n"}})],
    [_say("done")],
]


class Scripted(Model):
    """The SDK's model interface, replying from a script."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script, self.k = script, 0

    async def get_response(self, *args: Any, **kw: Any) -> ModelResponse:
        out = self.script[min(self.k, len(self.script) - 1)]
        self.k += 1
        return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=100 * self.k, output_tokens=10),
                             response_id=f"resp_{self.k}")

    def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError


@function_tool(allowed_callers=["direct", "programmatic"])
def read_file(path: str) -> str:
    """Read a file."""
    return BIG


class _Shell:
    def __call__(self, request: Any) -> str:
        return "total 3\n" + BIG


class _Editor:
    def create_file(self, op: Any) -> str:
        return "created"

    def update_file(self, op: Any) -> str:
        return "patched a.py: " + BIG

    def delete_file(self, op: Any) -> str:
        return "deleted"


async def _grep(ctx: Any, text: str) -> str:
    return "a.py:1: def f\n" + BIG


def tools_agent() -> Agent[Any]:
    return Agent(name="coder", instructions="You code.", model=Scripted(SCRIPT),
                 tools=[read_file, CustomTool(name="grep", description="grep", on_invoke_tool=_grep),
                        ShellTool(executor=_Shell()), ApplyPatchTool(editor=_Editor()), ToolSearchTool(),
                        ProgrammaticToolCallingTool()])


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return "deleted"


def approval_agent() -> Agent[Any]:
    return Agent(name="coder", instructions="You code.", tools=[delete_file], model=Scripted([[
        ResponseFunctionToolCall(type="function_call", call_id="call_del", name="delete_file",
                                 arguments='{"path":"a.py"}')], [_say("ok")]]))


def _run(agent: Agent[Any], prompt: str) -> Any:
    """In a thread with its own event loop (a test suite may leave the main one running)."""
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["result"] = asyncio.run(Runner.run(agent, prompt, max_turns=20,
                                                   run_config=RunConfig(tracing_disabled=True)))
        except BaseException as error:  # handed back to the caller
            box["error"] = error

    worker = threading.Thread(target=go)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def states() -> dict[str, dict[str, Any]]:
    """File name -> RunState JSON, each recorded anew."""
    paused = _run(approval_agent(), "delete a.py")
    assert paused.interruptions, "the run did not pause for approval"
    return {"openai-agents-py-0.24_run-state-tools.json": _run(tools_agent(), "look around").to_state().to_json(),
            "openai-agents-py-0.24_run-state-approval.json": paused.to_state().to_json()}


if __name__ == "__main__":
    for name, state in states().items():
        (HERE / name).write_text(json.dumps(state, indent=1))
