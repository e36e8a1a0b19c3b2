"""Copy-paste snippets of chosen settings: eino Go, toolclear Python, the CLI.

eino reads 0 and "" as "use the default", so a literal 0 cannot be written in Go;
the Go snippet then says so instead of silently meaning something else.
"""

from __future__ import annotations

import shlex

from .._offload import ToolResultOffloadingConfig
from ..clearing import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_PLACEHOLDER,
    DEFAULT_THRESHOLD,
    ClearToolResultConfig,
)
from ..schema import Mode

__all__ = ["cli_command", "go_snippet", "python_snippet"]


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
