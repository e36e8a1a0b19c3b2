"""Copy-paste snippets of chosen settings: eino Go, toolclear Python, the CLI.

eino reads 0 and "" as "use the default", so a literal 0 cannot be written in Go;
the Go snippet then says so instead of silently meaning something else.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from .._offload import ToolResultOffloadingConfig
from ..anthropic_edit import AnthropicClearToolUsesConfig
from ..clearing import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_PLACEHOLDER,
    DEFAULT_THRESHOLD,
    ClearToolResultConfig,
)
from ..langchain_edit import LangChainClearToolUsesConfig
from ..masking import ObservationMaskingConfig
from ..reduction import EinoReductionConfig
from ..schema import Mode

__all__ = ["anthropic_json", "cli_command", "eino_reduction_go", "go_snippet", "langchain_python", "openhands_toml",
           "live_snippets", "policy_snippets", "python_snippet", "swe_agent_yaml"]


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _go_str(text: str) -> str:
    """A Go interpreted string literal, ASCII only: JSON's surrogate-pair escapes
    (``\\ud83d\\ude00``) are invalid Go, so astral characters get ``\\U``; a lone
    surrogate, which no Go string can hold, becomes U+FFFD as Go itself would."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def _go_int(value: int, default: int, field: str, notes: list[str]) -> str:
    if value == 0:
        notes.append(f"// {field}: eino reads 0 as its default ({default}); use 1 for the smallest real value")
    return str(value)


def go_snippet(
    config: ClearToolResultConfig, offloading: ToolResultOffloadingConfig | None = None
) -> str:
    """eino Go: ``ClearToolResultConfig`` alone, or ``ToolResultConfig`` with offloading."""
    notes: list[str] = []
    excl = ", ".join(_go_str(n) for n in config.exclude_tools)
    threshold = _go_int(config.tool_result_token_threshold, DEFAULT_THRESHOLD, "threshold", notes)
    keep = _go_int(config.keep_recent_tokens, DEFAULT_KEEP_RECENT_TOKENS, "keep", notes)
    if config.placeholder == "":
        notes.append(f"// placeholder: eino reads \"\" as {_go_str(DEFAULT_PLACEHOLDER)}")
    counter = ""
    if config.counter_name != "eino":
        counter = f"\t// counted here with {config.counter_name}; pass a matching TokenCounter\n"
    if offloading is None:
        body = (
            "cfg := &reduction.ClearToolResultConfig{\n"
            f"\tToolResultTokenThreshold:   {threshold},\n"
            f"\tKeepRecentTokens:           {keep},\n"
            f"\tClearToolResultPlaceholder: {_go_str(config.placeholder)},\n"
            f"\tExcludeTools:               []string{{{excl}}},\n"
            f"{counter}"
            "}\n"
            "mw, err := reduction.NewClearToolResult(ctx, cfg)\n"
        )
    else:
        limit = _go_int(offloading.offloading_token_limit, 20000, "offloading limit", notes)
        body = (
            "cfg := &reduction.ToolResultConfig{\n"
            f"\tClearingTokenThreshold:     {threshold},\n"
            f"\tKeepRecentTokens:           {keep},\n"
            f"\tClearToolResultPlaceholder: {_go_str(config.placeholder)},\n"
            f"\tExcludeTools:               []string{{{excl}}},\n"
            f"\tOffloadingTokenLimit:       {limit}, // offloads results over {4 * offloading.offloading_token_limit:,} tokens\n"
            f"\tReadFileToolName:           {_go_str(offloading.read_file_tool_name)},\n"
            "\tBackend:                    myBackend, // your storage\n"
            f"{counter}"
            "}\n"
            "mw, err := reduction.NewChatModelAgentMiddleware(ctx, cfg)\n"
        )
    return "\n".join(notes + [body]).rstrip() + "\n"


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


def _go_list(names: Sequence[str]) -> str:
    return "[]string{" + ", ".join(_go_str(n) for n in names) + "}" if names else "nil"


def eino_reduction_go(config: EinoReductionConfig) -> str:
    """eino Go for the reduction middleware (``adk/middlewares/reduction``)."""
    lines = [
        'import "github.com/cloudwego/eino/adk/middlewares/reduction"',
        "",
        "// backend: where truncated and cleared results are saved (required unless SkipTruncation)",
        "mw, err := reduction.New(ctx, &reduction.Config{",
        "\tBackend:                   backend,",
        f"\tSkipTruncation:            {str(config.skip_truncation).lower()},",
        f"\tSkipClear:                 {str(config.skip_clear).lower()},",
        f"\tMaxLengthForTrunc:         {config.max_length_for_trunc},",
        f"\tTruncExcludeTools:         {_go_list(config.trunc_exclude_tools)},",
        f"\tMaxTokensForClear:         {config.max_tokens_for_clear},",
        f"\tClearRetentionSuffixLimit: {config.clear_retention_suffix_limit},",
        f"\tClearAtLeastTokens:        {config.clear_at_least_tokens},",
        f"\tClearExcludeTools:         {_go_list(config.clear_exclude_tools)},",
        f"\tReadFileToolName:          {_go_str(config.read_file_tool_name)},",
        f"\tRootDir:                   {_go_str(config.root_dir)},",
        "})",
    ]
    if config.language != "en":
        lines.insert(2, f'adk.SetLanguage({_go_str(config.language)}) // notices in {config.language}')
    return "\n".join(lines) + "\n"


def anthropic_json(config: AnthropicClearToolUsesConfig) -> str:
    """The Messages API request's ``context_management`` (beta header
    ``anthropic-beta: context-management-2025-06-27``)."""
    return json.dumps({"context_management": {"edits": [config.request_json()]}}, indent=2) + "\n"


def langchain_python(config: LangChainClearToolUsesConfig) -> str:
    return (
        "from langchain.agents import create_agent\n"
        "from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware\n"
        "\n"
        "context_editing = ContextEditingMiddleware(edits=[ClearToolUsesEdit(\n"
        f"    trigger={config.trigger},\n"
        f"    clear_at_least={config.clear_at_least},\n"
        f"    keep={config.keep},\n"
        f"    clear_tool_inputs={config.clear_tool_inputs},\n"
        f"    exclude_tools={tuple(config.exclude_tools)!r},\n"
        f"    placeholder={config.placeholder!r},\n"
        ")])\n"
        "agent = create_agent(model, tools, middleware=[context_editing])\n"
    )


def openhands_toml(config: ObservationMaskingConfig) -> str:
    return ("# config.toml of OpenHands\n[condenser]\ntype = \"observation_masking\"\n"
            f"attention_window = {config.keep_last}\n")


def swe_agent_yaml(config: ObservationMaskingConfig) -> str:
    return ("# SWE-agent config\nagent:\n  history_processors:\n    - type: last_n_observations\n"
            f"      n: {config.keep_last}\n      polling: {config.polling}\n")


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
                    conversation: str | None = None) -> list[tuple[str, str, str]]:
    """(title, language, code) for a policy: in its own framework's form, then toolclear's
    Python and CLI that reproduce what the app shows."""
    from toolclear.lab import policy_spec

    out: list[tuple[str, str, str]] = []
    if isinstance(config, EinoReductionConfig):
        out.append(("eino Go: the reduction middleware", "go", eino_reduction_go(config)))
    elif isinstance(config, AnthropicClearToolUsesConfig):
        title = "Anthropic Messages API: the request's context_management"
        if config.placeholder != AnthropicClearToolUsesConfig().placeholder:
            # the API has no placeholder setting: saying so beats a JSON that silently drops it
            title += (f" (the API has no placeholder setting: the server writes its own text, not "
                      f"{config.placeholder[:40]!r}, into cleared results)")
        out.append((title, "json", anthropic_json(config)))
    elif isinstance(config, LangChainClearToolUsesConfig):
        out.append(("LangChain v1: ContextEditingMiddleware", "python", langchain_python(config)))
    elif isinstance(config, ObservationMaskingConfig):
        if config.unit == "messages":
            out.append(("OpenHands: the observation-masking condenser", "toml", openhands_toml(config)))
        else:
            out.append(("SWE-agent: the LastNObservations history processor", "yaml", swe_agent_yaml(config)))
    fn = "replay" if mode == "replay" else "apply"
    backend = (", backend=toolclear.LocalDirBackend('saved')"
               if isinstance(config, EinoReductionConfig) and not config.skip_truncation else "")
    load = (f"transcript = toolclear.load({path!r})" if conversation is None else
            f"transcript = next(t for t in toolclear.load_all({path!r}) if t.id == {conversation!r})")
    py = "\n".join([
        "import toolclear",
        "",
        f"config = toolclear.{config!r}",
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
    if backend:
        parts += ["--offload-dir", "saved"]
    parts.append(f"--output=reduced-{path.rsplit('/', 1)[-1]}")
    out.append(("toolclear CLI", "bash", shlex.join(parts)))
    return out + live_snippets(config)
