"""Copy-paste snippets of chosen settings: eino Go, toolclear Python, the CLI.

eino reads 0 and "" as "use the default", so a literal 0 cannot be written in Go;
the Go snippet then says so instead of silently meaning something else.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..schema import Mode
from .anthropic import anthropic_json
from .eino_clear import (
    DEFAULT_PLACEHOLDER,
    ClearToolResultConfig,
    go_snippet,
)
from .eino_reduction import eino_reduction_go
from .langchain import langchain_python
from .masking import openhands_toml, swe_agent_yaml
from .offload import ToolResultOffloadingConfig

__all__ = ["anthropic_json", "cli_command", "eino_reduction_go", "go_snippet", "langchain_python", "openhands_toml",
           "live_snippets", "policy_snippets", "python_snippet", "swe_agent_yaml"]


def python_snippet(
    config: ClearToolResultConfig,
    offloading: ToolResultOffloadingConfig | None = None,
    *,
    path: str = "transcript.json",
    mode: Mode = "single pass",
    conversation: str | None = None,
) -> str:
    """toolclear Python that reproduces what the app shows; ``conversation`` picks one
    of a file that holds several (``load`` refuses such a file)."""
    lines = [
        "import toolclear",
        "",
        "config = toolclear.ClearToolResultConfig(",
        f"    tool_result_token_threshold={config.tool_result_token_threshold},",
        f"    keep_recent_tokens={config.keep_recent_tokens},",
        f"    placeholder={config.placeholder!r},",
        f"    exclude_tools={tuple(config.exclude_tools)!r},",
        f"    token_counter={config.counter_name!r},",
        ")",
    ]
    extra = ""
    if offloading is not None:
        lines += [
            "offloading = toolclear.ToolResultOffloadingConfig(",
            f"    offloading_token_limit={offloading.offloading_token_limit},",
            f"    read_file_tool_name={offloading.read_file_tool_name!r},",
            ")",
        ]
        extra = ", offloading=offloading, backend=toolclear.LocalDirBackend('offloaded')"
    fn = "replay" if mode == "replay" else "reduce_by_tokens"
    lines += [
        f"transcript = toolclear.load({path!r})" if conversation is None else
        f"transcript = next(t for t in toolclear.load_all({path!r}) if t.id == {conversation!r})",
        f"result = toolclear.{fn}(transcript.messages, config{extra})",
        "print(len(result.cleared_indices), 'tool results cleared')",
        "open('reduced' + {!r}, 'wb').write(toolclear.dump(transcript, result.messages))".format(
            "-" + path.rsplit("/", 1)[-1]
        ),
    ]
    return "\n".join(lines) + "\n"


def cli_command(
    config: ClearToolResultConfig,
    offloading: ToolResultOffloadingConfig | None = None,
    *,
    path: str = "transcript.json",
    mode: Mode = "single pass",
    output: str | None = None,
    conversation: str | None = None,
) -> str:
    """The ``toolclear reduce`` command line for these settings."""
    parts = ["toolclear", "reduce", path if not path.startswith("-") else "./" + path]
    if conversation is not None:
        parts += [f"--conversation={conversation}"]
    parts += [
        "--threshold", str(config.tool_result_token_threshold),
        "--keep", str(config.keep_recent_tokens),
    ]
    # --opt=VALUE: a value that starts with '-' is not taken for an option
    if config.placeholder != DEFAULT_PLACEHOLDER:
        parts += [f"--placeholder={config.placeholder}"]
    for name in config.exclude_tools:
        parts += [f"--exclude={name}"]
    if config.counter_name != "eino":
        parts += ["--counter", config.counter_name]
    if mode == "replay":
        parts.append("--replay")
    if offloading is not None:
        parts += ["--offload-dir", "offloaded", "--offload-limit", str(offloading.offloading_token_limit)]
        if offloading.read_file_tool_name != "read_file":
            parts += [f"--read-tool={offloading.read_file_tool_name}"]
    parts += [f"--output={output or 'reduced-' + path.rsplit('/', 1)[-1]}"]
    return shlex.join(parts)


LIVE_ADAPTERS: tuple[tuple[str, str, str, str], ...] = (
    ("LangChain v1 agent", "langchain", "middleware = ToolclearMiddleware(config, persist=True)",
     "agent = create_agent(model, tools, middleware=[middleware])"),
    ("LangGraph prebuilt agent", "langgraph", "hook = pre_model_hook(config, persist=True)",
     "agent = create_react_agent(model, tools, pre_model_hook=hook)"),
    ("pydantic-ai agent", "pydantic_ai", "processor = capability(config)",
     "agent = Agent(model, capabilities=[processor])  # pydantic-ai 1: history_processors=[history_processor(config)]"),
    ("OpenAI Agents SDK", "openai_agents", "input_filter = call_model_input_filter(config)",
     "result = Runner.run_sync(agent, prompt, run_config=RunConfig(call_model_input_filter=input_filter))"),
)
"""(title, module, the line that builds the adapter, how the agent takes it)."""


def live_snippets(config: Any) -> list[tuple[str, str, str]]:
    """(title, language, code): the policy running live in each agent framework."""
    out = []
    for title, module, build, use in LIVE_ADAPTERS:
        name = build.split(" = ", 1)[1].split("(", 1)[0]
        code = "\n".join([
            "import toolclear",
            f"from toolclear.integrations.{module} import {name}",
            "",
            f"config = toolclear.{config!r}",
            build,
            f"# {use}",
        ]) + "\n"
        out.append((f"Live in a {title} (pip install 'toolclear[{module.replace('_', '-')}]')", "python", code))
    return out


def policy_snippets(config: Any, *, path: str = "transcript.json", mode: Mode = "single pass",
                    conversation: str | None = None,
                    offloading: ToolResultOffloadingConfig | None = None) -> list[tuple[str, str, str]]:
    """(title, language, code) for a policy: in its own framework's form, then toolclear's
    Python and CLI that reproduce what the app shows, then the policy live in each agent
    framework. ``offloading`` goes with a policy that takes it (eino's clear policy)."""
    from toolclear.policies import spec_for
    from toolclear.policies.syntax import policy_spec

    spec = spec_for(config)
    offloading = offloading if spec.offloads else None
    export = spec.preset_of(config).export
    out: list[tuple[str, str, str]] = export(config) if export is not None else []
    if "go" in spec.exports and isinstance(config, ClearToolResultConfig):
        out.insert(0, ("eino (Go)", "go", go_snippet(config, offloading)))
    fn = "replay" if mode == "replay" else "apply"
    backend = ", backend=toolclear.LocalDirBackend('saved')" if spec.needs_backend(config) else ""
    setup = []
    if offloading is not None:
        setup = ["offloading = toolclear.ToolResultOffloadingConfig(",
                 f"    offloading_token_limit={offloading.offloading_token_limit},",
                 f"    read_file_tool_name={offloading.read_file_tool_name!r},",
                 ")"]
        backend = ", offloading=offloading, backend=toolclear.LocalDirBackend('offloaded')"
    load = (f"transcript = toolclear.load({path!r})" if conversation is None else
            f"transcript = next(t for t in toolclear.load_all({path!r}) if t.id == {conversation!r})")
    py = "\n".join([
        "import toolclear",
        "",
        f"config = toolclear.{config!r}",
        *setup,
        load,
        f"result = toolclear.{fn}(transcript.messages, config{backend})",
        "print(len(result.cleared_indices), 'messages changed;', result.cache_breaks, 'cache breaks')",
        "open('reduced-{}', 'wb').write(toolclear.dump(transcript, result.messages))".format(path.rsplit("/", 1)[-1]),
    ]) + "\n"
    out.append(("toolclear Python (reproduces what the app shows)", "python", py))
    parts = ["toolclear", "reduce", path if not path.startswith("-") else "./" + path]
    if conversation is not None:
        parts.append(f"--conversation={conversation}")
    parts.append(f"--policy={policy_spec(config)}")
    if mode == "replay":
        parts.append("--replay")
    if offloading is not None:
        parts += ["--offload-dir", "offloaded", "--offload-limit", str(offloading.offloading_token_limit)]
        if offloading.read_file_tool_name != "read_file":
            parts.append(f"--read-tool={offloading.read_file_tool_name}")
    elif backend:
        parts += ["--offload-dir", "saved"]
    parts.append(f"--output=reduced-{path.rsplit('/', 1)[-1]}")
    out.append(("toolclear CLI", "bash", shlex.join(parts)))
    return out + live_snippets(config)
