"""Write realistic files of the formats no public corpus file covers, shaped as each
tool writes them (field names and nesting from the tools' own sources):
python tests/data/formats/make_formats.py"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
LS = "README.md\nsetup.py\nsrc/\ntests/\n"
CAT = "".join(f"{n:4d}  def f{n}(x):\n" for n in range(1, 40))


def gemini_cli() -> dict:
    return {
        "sessionId": "6c1e2d8a-1f6b-4a53-9d1e-2b0c5f0a7e11",
        "projectHash": "9f2c" * 16,
        "startTime": "2025-10-02T09:14:03.120Z",
        "lastUpdated": "2025-10-02T09:16:41.902Z",
        "messages": [
            {"id": "m1", "timestamp": "2025-10-02T09:14:03.121Z", "type": "user", "content": "what is in this repo?"},
            {"id": "m2", "timestamp": "2025-10-02T09:14:06.530Z", "type": "gemini", "content": "",
             "toolCalls": [{"id": "list_directory-1759396446530-1", "name": "list_directory", "args": {"path": "."},
                            "result": [{"functionResponse": {"id": "list_directory-1759396446530-1",
                                                             "name": "list_directory",
                                                             "response": {"output": LS}}}],
                            "status": "success", "timestamp": "2025-10-02T09:14:06.801Z",
                            "displayName": "ReadFolder", "description": "Lists a directory",
                            "resultDisplay": "Listed 4 item(s).", "renderOutputAsMarkdown": True},
                           {"id": "read_file-1759396446530-2", "name": "read_file", "args": {"absolute_path": "/r/setup.py"},
                            "result": [{"functionResponse": {"id": "read_file-1759396446530-2", "name": "read_file",
                                                             "response": {"output": CAT}}}],
                            "status": "success", "timestamp": "2025-10-02T09:14:06.990Z",
                            "displayName": "ReadFile", "resultDisplay": ""}],
             "thoughts": [{"subject": "Looking around", "description": "listing", "timestamp": "2025-10-02T09:14:05.000Z"}],
             "tokens": {"input": 8123, "output": 41, "cached": 6000, "thoughts": 88, "tool": 0, "total": 8252},
             "model": "gemini-2.5-pro"},
            {"id": "m3", "timestamp": "2025-10-02T09:14:09.000Z", "type": "info", "content": "Request cancelled."},
            {"id": "m4", "timestamp": "2025-10-02T09:14:12.400Z", "type": "gemini",
             "content": "A Python package with a src/ layout and tests.",
             "tokens": {"input": 9950, "output": 17, "cached": 8100, "thoughts": 0, "tool": 0, "total": 9967},
             "model": "gemini-2.5-pro"},
            {"id": "m5", "timestamp": "2025-10-02T09:16:41.900Z", "type": "user", "content": "thanks"},
        ],
    }


def gemini_cli_jsonl() -> str:
    conv = gemini_cli()
    meta = {k: conv[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated")}
    msgs = conv["messages"]
    pending = dict(msgs[1], toolCalls=[dict(tc, status="executing", result=None) for tc in msgs[1]["toolCalls"]])
    lines = [meta, msgs[0], pending, msgs[1],  # m2 written first while executing, then again when done
             {"id": "x1", "timestamp": "2025-10-02T09:14:07.000Z", "type": "user", "content": "oops, wrong prompt"},
             {"$rewindTo": "x1"}, msgs[2], msgs[3], {"$set": {"summary": "repo tour"}}, msgs[4]]
    return "".join(json.dumps(line) + "\n" for line in lines)


def openai_responses_body() -> dict:
    return {
        "model": "gpt-5",
        "instructions": "You are a coding agent.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "what is in this repo?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAAB" + "x" * 40},
            {"type": "function_call", "id": "fc_1", "call_id": "call_ls", "name": "shell",
             "arguments": json.dumps({"command": ["ls"]}), "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_cat", "name": "shell",
             "arguments": json.dumps({"command": ["cat", "setup.py"]}), "status": "completed"},
            {"type": "function_call_output", "call_id": "call_ls", "output": LS},
            {"type": "function_call_output", "call_id": "call_cat",
             "output": [{"type": "input_text", "text": CAT}, {"type": "input_text", "text": "[exit 0]"}]},
            {"type": "custom_tool_call", "call_id": "call_patch", "name": "apply_patch", "input": "*** Begin Patch"},
            {"type": "custom_tool_call_output", "call_id": "call_patch", "output": "Done!"},
            {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
             "content": [{"type": "output_text", "text": "A Python package.", "annotations": []}]},
            {"role": "user", "content": "thanks"},
        ],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}],
    }


def agents_run_state() -> dict:
    body = openai_responses_body()["input"]
    return {
        "$schemaVersion": "1.0",
        "currentTurn": 2,
        "currentAgent": {"name": "Assistant"},
        "originalInput": "what is in this repo?",
        "modelResponses": [],
        "generatedItems": [
            {"type": "tool_call_item", "rawItem": body[2], "agent": {"name": "Assistant"}},
            {"type": "tool_call_output_item", "rawItem": body[4], "agent": {"name": "Assistant"}, "output": LS},
            {"type": "message_output_item", "rawItem": body[8], "agent": {"name": "Assistant"}},
        ],
    }


def gemini_api_body() -> dict:
    return {
        "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "what is in this repo?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "list_directory", "args": {"path": "."}}},
                                        {"functionCall": {"name": "read_file", "args": {"path": "setup.py"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "list_directory", "response": {"output": LS}}},
                                       {"functionResponse": {"name": "read_file", "response": {"content": CAT}}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "list_directory", "args": {"path": "src"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "list_directory",
                                                             "response": {"files": ["a.py", "b.py"]}}}]},
            {"role": "model", "parts": [{"text": "A Python package."}]},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "list_directory"}, {"name": "read_file"}]}],
    }


def adk_session() -> dict:
    def event(i, author, role, parts, **extra):
        return {"content": {"parts": parts, "role": role}, "invocationId": "e-7f1", "author": author,
                "actions": {"stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}},
                "id": f"ev{i}", "timestamp": 1759396446.5 + i, **extra}
    return {
        "id": "a1b2c3", "appName": "repo_helper", "userId": "u1", "state": {}, "lastUpdateTime": 1759396460.0,
        "events": [
            event(0, "user", "user", [{"text": "what is in this repo?"}]),
            event(1, "repo_agent", "model", [{"functionCall": {"id": "adk-1", "args": {"path": "."},
                                                               "name": "list_directory"}}],
                  usageMetadata={"candidatesTokenCount": 12, "promptTokenCount": 900, "totalTokenCount": 912}),
            event(2, "repo_agent", "user", [{"functionResponse": {"id": "adk-1", "name": "list_directory",
                                                                  "response": {"result": LS}}}]),
            event(3, "repo_agent", "model", [{"text": "A Python package."}],
                  usageMetadata={"candidatesTokenCount": 6, "promptTokenCount": 950, "cachedContentTokenCount": 800,
                                 "totalTokenCount": 956}),
            event(4, "user", "user", [{"text": "thanks"}]),
        ],
    }


def smolagents_steps() -> list:
    return [
        {"system_prompt": "You are an expert assistant who can solve any task using tool calls."},
        {"task": "what is in this repo?", "task_images": None},
        {"step_number": 1, "timing": {"start_time": 1.0, "end_time": 2.0}, "model_input_messages": None,
         "tool_calls": [{"id": "call_0", "type": "function",
                         "function": {"name": "list_dir", "arguments": {"path": "."}}}],
         "error": None, "model_output": "Action: list_dir", "observations": LS, "observations_images": None,
         "action_output": LS, "token_usage": {"input_tokens": 1200, "output_tokens": 30, "total_tokens": 1230},
         "is_final_answer": False},
        {"step_number": 2, "timing": {"start_time": 2.0, "end_time": 3.0}, "model_input_messages": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "read_file", "arguments": {"path": "setup.py"}}}],
         "error": {"type": "AgentToolExecutionError", "message": "file too long"}, "model_output": "Action: read_file",
         "observations": CAT, "observations_images": None, "action_output": None,
         "token_usage": {"input_tokens": 1500, "output_tokens": 25, "total_tokens": 1525}, "is_final_answer": False},
        {"step_number": 3, "timing": {"start_time": 3.0, "end_time": 4.0}, "model_input_messages": None,
         "tool_calls": [{"id": "call_2", "type": "function",
                         "function": {"name": "final_answer", "arguments": {"answer": "A Python package."}}}],
         "error": None, "model_output": "", "observations": None, "observations_images": None,
         "action_output": "A Python package.", "token_usage": {"input_tokens": 1700, "output_tokens": 20,
                                                               "total_tokens": 1720}, "is_final_answer": True},
    ]


def smolagents_messages() -> list:
    text = lambda t: [{"type": "text", "text": t}]  # noqa: E731
    return [
        {"role": "system", "content": text("You are an expert assistant.")},
        {"role": "user", "content": text("New task:\nwhat is in this repo?")},
        {"role": "assistant", "content": text("Action: list_dir")},
        {"role": "tool-call", "content": text("Calling tools:\n[{'id': 'call_0', 'type': 'function', 'function': "
                                               "{'name': 'list_dir', 'arguments': {'path': '.'}}}]")},
        {"role": "tool-response", "content": text("Call id: call_0\nObservation:\n" + LS)},
        {"role": "assistant", "content": text("Action: read_file")},
        {"role": "tool-call", "content": text("Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': "
                                               "{'name': 'read_file', 'arguments': {'path': 'setup.py'}}}]")},
        {"role": "tool-response", "content": text("Observation:\n" + CAT)},
        {"role": "user", "content": text("thanks")},
    ]


def openhands_v1() -> list:
    return [
        {"kind": "SystemPromptEvent", "id": "e0", "timestamp": "2025-10-02T09:14:00", "source": "agent",
         "system_prompt": {"type": "text", "text": "You are OpenHands agent."}, "tools": []},
        {"kind": "MessageEvent", "id": "e1", "timestamp": "2025-10-02T09:14:01", "source": "user",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "what is in this repo?"}]},
         "activated_skills": [], "extended_content": []},
        {"kind": "ActionEvent", "id": "e2", "timestamp": "2025-10-02T09:14:03", "source": "agent",
         "thought": [{"type": "text", "text": "Let me look."}], "reasoning_content": None,
         "action": {"kind": "TerminalAction", "command": "ls"}, "tool_name": "terminal", "tool_call_id": "toolu_1",
         "tool_call": {"id": "toolu_1", "name": "terminal", "arguments": "{\"command\": \"ls\"}", "origin": "completion"},
         "llm_response_id": "resp-1", "security_risk": "LOW"},
        {"kind": "ActionEvent", "id": "e3", "timestamp": "2025-10-02T09:14:03", "source": "agent", "thought": [],
         "action": {"kind": "FileEditorAction", "command": "view", "path": "/r/setup.py"},
         "tool_name": "file_editor", "tool_call_id": "toolu_2",
         "tool_call": {"id": "toolu_2", "name": "file_editor", "arguments": "{\"command\": \"view\"}",
                       "origin": "completion"}, "llm_response_id": "resp-1", "security_risk": "LOW"},
        {"kind": "ObservationEvent", "id": "e4", "timestamp": "2025-10-02T09:14:04", "source": "environment",
         "tool_name": "terminal", "tool_call_id": "toolu_1", "action_id": "e2",
         "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": LS},
                                                                    {"type": "text", "text": "[exit code 0]"}],
                         "command": "ls", "exit_code": 0, "is_error": False}},
        {"kind": "ObservationEvent", "id": "e5", "timestamp": "2025-10-02T09:14:04", "source": "environment",
         "tool_name": "file_editor", "tool_call_id": "toolu_2", "action_id": "e3",
         "observation": {"kind": "FileEditorObservation", "content": [{"type": "text", "text": CAT}],
                         "command": "view", "path": "/r/setup.py", "is_error": False}},
        {"kind": "ConversationStateUpdateEvent", "id": "e6", "timestamp": "2025-10-02T09:14:05",
         "source": "environment", "key": "execution_status", "value": "running"},
        {"kind": "MessageEvent", "id": "e7", "timestamp": "2025-10-02T09:14:06", "source": "agent",
         "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "A Python package."}]}},
    ]


def claude_code_2_1_8x() -> str:
    """Claude Code 2.1.8x: newer line types between the messages (permission-mode, mode,
    ai-title, worktree-state, attachment), and a hook's attachment line between a
    parallel call and its result, so that result hangs off a side branch."""
    sid = "3f0c2a51-9d7e-4b8a-a1c2-5e6f7a8b9c0d"
    base = {"isSidechain": False, "userType": "external", "cwd": "/r", "sessionId": sid, "version": "2.1.86",
            "gitBranch": "main"}
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 9120, "cache_read_input_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 9120},
             "output_tokens": 61, "service_tier": "standard"}

    def msg(uuid: str, parent: str | None, kind: str, message: dict, t: int, **extra: object) -> dict:
        return {"parentUuid": parent, **base, "type": kind, "message": message, "uuid": uuid,
                "timestamp": f"2026-11-20T10:00:{t:02d}.000Z", **extra}

    def reply(mid: str, content: list) -> dict:
        return {"model": "claude-opus-4-6", "id": mid, "type": "message", "role": "assistant", "content": content,
                "stop_reason": None, "stop_sequence": None, "usage": usage}

    lines = [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": sid},
        {"type": "mode", "mode": "normal", "sessionId": sid},
        msg("u1", None, "user", {"role": "user", "content": "what is in this repo?"}, 1),
        {"type": "ai-title", "aiTitle": "Repository tour", "sessionId": sid},
        msg("a1", "u1", "assistant", reply("msg_01", [{"type": "tool_use", "id": "toolu_A", "name": "Read",
                                                      "input": {"file_path": "/r/setup.py"}}]), 3,
            requestId="req_01"),
        msg("a2", "a1", "assistant", reply("msg_01", [{"type": "tool_use", "id": "toolu_B", "name": "Bash",
                                                      "input": {"command": "ls", "description": "List"}}]), 3,
            requestId="req_01"),
        {"parentUuid": "a1", **base, "type": "attachment", "uuid": "h1", "timestamp": "2026-11-20T10:00:04.000Z",
         "attachment": {"type": "hook_success", "hookName": "PostToolUse:Read", "toolUseID": "toolu_A",
                        "hookEvent": "PostToolUse", "content": "", "stdout": "", "stderr": "", "exitCode": 0}},
        msg("r1", "h1", "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_A", "type": "tool_result", "content": CAT}]}, 5,
            toolUseResult={"type": "text", "file": {"filePath": "/r/setup.py", "numLines": 39}},
            sourceToolAssistantUUID="a1"),
        msg("r2", "a2", "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_B", "type": "tool_result", "content": LS, "is_error": False}]}, 6,
            toolUseResult={"stdout": LS, "stderr": "", "interrupted": False, "isImage": False},
            sourceToolAssistantUUID="a2"),
        {"type": "worktree-state", "worktreePath": "/r", "branch": "main", "sessionId": sid},
        msg("a3", "r2", "assistant", reply("msg_02", [{"type": "tool_use", "id": "toolu_C", "name": "Grep",
                                                      "input": {"pattern": "def f1"}}]), 8, requestId="req_02"),
        {"parentUuid": "a3", **base, "type": "attachment", "uuid": "h2", "timestamp": "2026-11-20T10:00:09.000Z",
         "attachment": {"type": "hook_additional_context", "hookName": "PreToolUse:Grep", "toolUseID": "toolu_C",
                        "content": ["grep runs in /r"]}},
        msg("r3", "h2", "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_C", "type": "tool_result", "content": "setup.py:1:def f1(x):"}]}, 10,
            sourceToolAssistantUUID="a3"),
        msg("a4", "r3", "assistant", reply("msg_03", [{"type": "text", "text": "A Python package."}]), 12,
            requestId="req_03"),
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def codex_0_146() -> str:
    """A Codex 0.146 rollout: several session_meta lines (a forked session repeats its
    parent's), tool_search_call / tool_search_output, ghost_snapshot, image_generation_call
    and world_state items between the calls and their outputs."""
    def line(t: int, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-11-21T08:00:{t:02d}.000Z", "type": kind, "payload": payload}

    meta = {"id": "019b0c3e-0000-7000-8000-00000000a146", "timestamp": "2026-11-21T08:00:00.000Z", "cwd": "/r",
            "originator": "codex_cli_rs", "cli_version": "0.146.0", "source": "cli", "model_provider": "openai"}
    parent = dict(meta, id="019b0c3d-0000-7000-8000-00000000a145", timestamp="2026-11-21T07:00:00.000Z")
    shell = {"output": LS, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}
    lines = [
        line(0, "session_meta", meta),
        line(0, "session_meta", parent),
        line(1, "turn_context", {"cwd": "/r", "approval_policy": "on-request", "model": "gpt-5.3-codex",
                                 "effort": "medium", "summary": "auto"}),
        line(1, "response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": "what is in this repo?"}]}),
        line(2, "response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "4b825dc6", "parent": None,
                                                                            "preexisting_untracked_files": []}}),
        line(2, "response_item", {"type": "reasoning", "summary": [], "content": None,
                                  "encrypted_content": "gAAAAB..."}),
        line(3, "response_item", {"type": "tool_search_call", "call_id": "ts_1", "execution": "client",
                                  "status": "completed", "arguments": {"query": "shell"}}),
        line(3, "response_item", {"type": "tool_search_output", "call_id": "ts_1", "execution": "client",
                                  "status": "completed", "tools": [{"type": "function", "name": "shell_command",
                                                                     "description": "Runs a command",
                                                                     "parameters": {"type": "object"}}]}),
        line(4, "response_item", {"type": "function_call", "name": "shell_command",
                                  "arguments": "{\"command\":\"ls\"}", "call_id": "call_1"}),
        line(4, "response_item", {"type": "world_state", "cwd": "/r", "git": {"branch": "main"}}),
        line(5, "response_item", {"type": "function_call_output", "call_id": "call_1", "output": json.dumps(shell)}),
        line(5, "event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 5210, "cached_input_tokens": 4096, "output_tokens": 40,
                                  "reasoning_output_tokens": 12, "total_tokens": 5250},
            "last_token_usage": {"input_tokens": 5210, "cached_input_tokens": 4096, "output_tokens": 40,
                                 "reasoning_output_tokens": 12, "total_tokens": 5250},
            "model_context_window": 272000}, "rate_limits": None}),
        line(6, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_2",
                                  "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}),
        line(6, "response_item", {"type": "custom_tool_call_output", "call_id": "call_2",
                                  "output": json.dumps({"output": "Done!", "metadata": {"exit_code": 0}})}),
        line(7, "response_item", {"type": "image_generation_call", "id": "ig_1", "status": "completed",
                                  "revised_prompt": "a diagram", "result": "iVBORw0KGgo="}),
        line(7, "response_item", {"type": "function_call", "name": "view_image",
                                  "arguments": "{\"path\":\"/r/diagram.png\"}", "call_id": "call_3"}),
        line(8, "response_item", {"type": "function_call_output", "call_id": "call_3", "output": [
            {"type": "input_text", "text": "diagram.png (64x64)"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}),
        line(9, "response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "A Python package."}]}),
    ]
    return "".join(json.dumps(x) + "\n" for x in lines)


def openhands_2024_resolver() -> str:
    """The OpenHands resolver's output.jsonl (late 2024, CodeAct without function calling):
    one issue per line, its ``history`` a flat list of events whose observations name the
    action they answer by ``cause``; no tool-call ids."""
    def ev(i: int, source: str, **rest: object) -> dict:
        return {"id": i, "timestamp": f"2024-11-04T12:00:{i:02d}.000000", "source": source, **rest}

    history = [
        ev(0, "user", message="Please fix issue #7", action="message",
           args={"content": "Please fix issue #7: setup.py lists no files", "images_urls": None,
                 "wait_for_response": False}),
        ev(1, "agent", message="", observation="agent_state_changed", content="",
           extras={"agent_state": "running"}),
        ev(2, "agent", message="Running command: ls", action="run",
           args={"command": "ls", "thought": "Let me look around.", "blocking": False, "keep_prompt": True,
                 "hidden": False, "is_confirmed": "confirmed"}),
        ev(3, "agent", message="Command `ls` executed with exit code 0.", cause=2, observation="run", content=LS,
           extras={"command_id": -1, "command": "ls", "exit_code": 0, "hostname": None}),
        ev(4, "agent", message="Reading file: /r/setup.py", action="read",
           args={"path": "/r/setup.py", "start": 0, "end": -1, "thought": "", "impl_source": "oh_aci"}),
        ev(5, "agent", message="I read the file /r/setup.py.", cause=4, observation="read", content=CAT,
           extras={"path": "/r/setup.py", "impl_source": "oh_aci"}),
        ev(6, "agent", message="All done!", action="finish",
           args={"outputs": {}, "thought": "Fixed: setup.py now lists the files."}),
        ev(7, "agent", message="", observation="agent_state_changed", content="",
           extras={"agent_state": "finished"}),
    ]
    records = [
        {"number": 7, "issue": {"owner": "acme", "repo": "widgets", "number": 7, "title": "setup.py lists no files",
                                "body": "..."},
         "issue_type": "issue", "instruction": "Please fix issue #7", "base_commit": "9f2c1e0",
         "git_patch": "diff --git a/setup.py b/setup.py\n", "history": history,
         "metrics": {"accumulated_cost": 0.0421, "costs": [{"model": "claude-3-5-sonnet-20241022", "cost": 0.0421}]},
         "success": True, "comment_success": None, "success_explanation": "fixed", "error": None},
        {"number": 8, "issue": {"owner": "acme", "repo": "widgets", "number": 8, "title": "crash", "body": "..."},
         "issue_type": "issue", "instruction": "Please fix issue #8", "base_commit": "9f2c1e0", "git_patch": "",
         "history": [], "metrics": None, "success": False, "comment_success": None,
         "success_explanation": "", "error": "Agent reached maximum iteration"},
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


def openhands_2024_pairs() -> str:
    """OpenDevin / OpenHands evaluation output of early 2024: ``history`` as [action,
    observation] pairs, events written without ``source``; a pair without an
    observation holds a null one."""
    history = [
        [{"action": "message", "args": {"content": "what is in this repo?", "wait_for_response": False},
          "message": "what is in this repo?"},
         {"observation": "null", "content": "", "extras": {}, "message": "No observation"}],
        [{"action": "run", "args": {"command": "ls", "background": False, "thought": "Let me look."},
          "message": "Running command: ls"},
         {"observation": "run", "content": LS, "extras": {"command_id": -1, "command": "ls", "exit_code": 0},
          "message": "Command `ls` executed with exit code 0."}],
        [{"action": "read", "args": {"path": "/r/setup.py", "start": 0, "end": -1, "thought": ""},
          "message": "Reading file: /r/setup.py"},
         {"observation": "read", "content": CAT, "extras": {"path": "/r/setup.py"}, "message": "I read the file."}],
        [{"action": "finish", "args": {"outputs": {}, "thought": "A Python package."}, "message": "All done!"},
         {"observation": "null", "content": "", "extras": {}, "message": "No observation"}],
    ]
    record = {"instance_id": "acme__widgets-7", "instruction": "what is in this repo?", "history": history,
              "metadata": {"agent_class": "CodeActAgent", "model_name": "gpt-4-turbo"}, "error": None,
              "test_result": {"result": {"resolved": False}}}
    return json.dumps(record) + "\n"


FILES = {
    "gemini-cli_session.json": lambda: json.dumps(gemini_cli(), indent=2) + "\n",
    "gemini-cli_session.jsonl": gemini_cli_jsonl,
    "openai-responses_request.json": lambda: json.dumps(openai_responses_body(), indent=2) + "\n",
    "openai-agents_run-state.json": lambda: json.dumps(agents_run_state(), indent=2) + "\n",
    "gemini-api_request.json": lambda: json.dumps(gemini_api_body(), indent=2) + "\n",
    "google-adk_session.json": lambda: json.dumps(adk_session(), indent=2) + "\n",
    "smolagents_steps.json": lambda: json.dumps(smolagents_steps(), indent=2) + "\n",
    "smolagents_messages.json": lambda: json.dumps(smolagents_messages(), indent=2) + "\n",
    "openhands-v1_events.json": lambda: json.dumps(openhands_v1(), indent=2) + "\n",
    "openhands-v1_events.jsonl": lambda: "".join(json.dumps(e) + "\n" for e in openhands_v1()),
    "claude-code-2.1.86_session.jsonl": claude_code_2_1_8x,
    "codex-0.146_rollout.jsonl": codex_0_146,
    "openhands-2024_resolver-output.jsonl": openhands_2024_resolver,
    "openhands-2024_eval-pairs.jsonl": openhands_2024_pairs,
}


def files() -> dict[str, str]:
    return {name: make() for name, make in FILES.items()}


if __name__ == "__main__":
    for name, text in files().items():
        (HERE / name).write_text(text)
