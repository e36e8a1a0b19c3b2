"""LangChain Deep Agents' large tool result eviction (``deepagents``' ``FilesystemMiddleware``,
``tool_token_limit_before_evict=20000``): as a tool returns, a result whose text is longer
than ``4 x tool_token_limit_before_evict`` characters is written to
``/large_tool_results/<call id>`` and replaced, before the model ever sees it, by a
notice naming that path with a line-numbered preview of its first and last five lines.

Reproduced from the reference's source (deepagents 0.7.32:
``middleware/filesystem.py``, ``middleware/_message_eviction.py``,
``backends/utils.py``) and checked against the package itself, in a real LangChain agent
with the middleware (tests/policies/test_deepagents_evict.py):
- the size is the text's length in characters (``NUM_CHARS_PER_TOKEN = 4``), over the
  limit strictly; results of ``ls``, ``glob``, ``grep``, ``read_file``, ``edit_file``,
  ``write_file`` and ``delete`` are never evicted (the reference's own list);
- the notice: its fixed wording, the call id cut to 32 characters and ``...``, the path
  with ``.``, ``/`` and ``\\`` of the id turned into ``_`` (an id past 128 bytes becomes
  ``call-<sha256>``), the preview note, and the preview: all lines when there are ten or
  fewer, else five, ``... [N lines truncated] ...`` and five, each numbered
  (``{n:>w}  line``, a line cut at 1,000 characters, and continued as ``n.1`` past 5,000);
- it happens once, when the result arrives, and stays (sticky).

What toolclear does not do: write the file (the transcript keeps the result; the
notice's path is where the agent would read it), and name an id-less result's file by a
random id (``unknown-00000000`` here).
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from ..errors import ConfigError
from ..model import Message, MessageStatus
from ._checks import whole
from ._engine import Pairing
from ._spec import Knob, PolicySpec, Preset

__all__ = ["SPEC", "DeepAgentsEvictConfig", "evicted_text"]

TOOLS_EXCLUDED_FROM_EVICTION = ("ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete")
NUM_CHARS_PER_TOKEN = 4
PREVIEW_LINE_CHAR_LIMIT = 1000
MAX_LINE_LENGTH = 5000
_MAX_ID_BYTES = 128
_VISIBLE_ID = 32
TRUNCATION_MARKER_TEMPLATE = "... [{omitted_lines} lines truncated] ..."
_TOO_LARGE_TOOL_MSG = """Tool result too large, the result of this tool call {tool_call_id} was saved in the filesystem at this path: {file_path}

You can read the result from the filesystem by using the read_file tool, but make sure to only read part of the result at a time.

You can do this by specifying an offset and limit in the read_file tool call. For example, to read the first 100 lines, you can use the read_file tool with offset=0 and limit=100.

{preview_note}

{content_sample}
"""
_CAVEAT_OMITTED = ("lines of the form `" + TRUNCATION_MARKER_TEMPLATE.format(omitted_lines="N")
                   + "` indicate omitted lines in the middle of the content")
_CAVEAT_CLIPPED = (f"the output contains lines longer than {PREVIEW_LINE_CHAR_LIMIT} characters; this preview shows "
                   f"only their first {PREVIEW_LINE_CHAR_LIMIT} characters")


@dataclass(frozen=True)
class DeepAgentsEvictConfig:
    """``FilesystemMiddleware``'s eviction settings, with its defaults."""

    tool_token_limit_before_evict: int = 20000
    artifacts_root: str = "/"
    """Where the backend keeps artifacts: results go under ``<root>/large_tool_results``."""
    excluded_tools: tuple[str, ...] = TOOLS_EXCLUDED_FROM_EVICTION

    def __post_init__(self) -> None:
        whole("tool_token_limit_before_evict", self.tool_token_limit_before_evict, minimum=1)
        if not isinstance(self.artifacts_root, str):
            raise ConfigError("artifacts_root: expected a path")
        if isinstance(self.excluded_tools, str):
            object.__setattr__(self, "excluded_tools", (self.excluded_tools,))
        elif not all(isinstance(t, str) for t in self.excluded_tools):
            raise ConfigError("excluded_tools: expected tool names")
        object.__setattr__(self, "excluded_tools", tuple(self.excluded_tools))


def _numbered(lines: list[str], start: int) -> str:
    """``format_content_with_line_numbers``: right-aligned markers, two spaces, lines
    past ``MAX_LINE_LENGTH`` continued as ``n.1``, ``n.2``."""
    rows: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        chunks = [line[s:s + MAX_LINE_LENGTH] for s in range(0, len(line), MAX_LINE_LENGTH)] or [line]
        for k, chunk in enumerate(chunks):
            rows.append((str(i + start) if k == 0 else f"{i + start}.{k}", chunk))
    width = max((len(m) for m, _ in rows), default=0)
    return "\n".join(f"{m:>{width}}  {line}" for m, line in rows)


def _preview(text: str) -> tuple[str, bool, bool]:
    """(preview, lines omitted, lines clipped): ``_create_content_preview``, 5 + 5 lines."""
    lines = text.splitlines()

    def clip(shown: list[str]) -> tuple[list[str], bool]:
        return [line[:PREVIEW_LINE_CHAR_LIMIT] for line in shown], any(len(x) > PREVIEW_LINE_CHAR_LIMIT for x in shown)

    if len(lines) <= 10:
        shown, clipped = clip(lines)
        return _numbered(shown, 1), False, clipped
    head, head_clipped = clip(lines[:5])
    tail, tail_clipped = clip(lines[-5:])
    marker = TRUNCATION_MARKER_TEMPLATE.format(omitted_lines=len(lines) - 10)
    return (_numbered(head, 1) + f"\n{marker}\n" + _numbered(tail, len(lines) - 4), True,
            head_clipped or tail_clipped)


def _file_id(call_id: str) -> str:
    if not call_id:
        return "unknown-00000000"
    clean = call_id.replace(".", "_").replace("/", "_").replace("\\", "_")
    return f"call-{sha256(call_id.encode('utf-8')).hexdigest()}" if len(clean.encode("utf-8")) > _MAX_ID_BYTES \
        else clean


def evicted_text(text: str, call_id: str, config: DeepAgentsEvictConfig) -> str | None:
    """What the reference puts in place of a result's text, or None when it keeps it."""
    if len(text) <= NUM_CHARS_PER_TOKEN * config.tool_token_limit_before_evict:
        return None
    preview, omitted, clipped = _preview(text)
    note = ("Here is a preview showing the head and tail of the result" if omitted
            else "Here is a preview of the result")
    caveats = [c for applies, c in ((omitted, _CAVEAT_OMITTED), (clipped, _CAVEAT_CLIPPED)) if applies]
    if caveats:
        note += f" ({'; '.join(caveats)})"
    visible = f"{call_id[:_VISIBLE_ID]}..." if len(call_id) > _VISIBLE_ID else call_id
    path = f"{config.artifacts_root.rstrip('/')}/large_tool_results/{_file_id(call_id)}"
    return _TOO_LARGE_TOOL_MSG.format(tool_call_id=visible, file_path=path, preview_note=note + ":",
                                      content_sample=preview)


class EvictEngine:
    """Each result is judged once, when it first reaches a call, and what is evicted
    stays evicted (the reference replaces it in the agent's state)."""

    def __init__(self, messages: Any, config: DeepAgentsEvictConfig) -> None:
        self.msgs, self.config = messages, config
        self.pairs = Pairing(messages)
        self.done = 0
        self.evicted: set[int] = set()
        self.excluded = frozenset(config.excluded_tools)

    def advance(self, length: int) -> dict[int, Message | None]:
        delta: dict[int, Message | None] = {}
        for i in range(self.done, length):
            m = self.msgs[i]
            if m.role != "tool":
                continue
            pair = self.pairs[i]
            name = pair[1].name if pair is not None else m.tool_name
            if name in self.excluded:
                continue
            text = evicted_text(m.content, m.tool_call_id, self.config)
            if text is not None:
                delta[i] = m.replaced(text)
                self.evicted.add(i)
        self.done = max(self.done, length)
        return delta

    def status(self, index: int, changed: bool) -> MessageStatus:
        if changed:
            return MessageStatus.OFFLOADED
        return MessageStatus.KEPT


def _engine(messages: Any, config: DeepAgentsEvictConfig, counter: Any, **_: Any) -> EvictEngine:
    return EvictEngine(messages, config)


def _python(config: DeepAgentsEvictConfig) -> list[tuple[str, str, str]]:
    code = ("from deepagents.middleware.filesystem import FilesystemMiddleware\n\n"
            f"middleware = FilesystemMiddleware(tool_token_limit_before_evict={config.tool_token_limit_before_evict})\n")
    return [("LangChain Deep Agents (deepagents >= 0.7)", "python", code)]


SPEC = PolicySpec(
    name="deepagents-evict",
    config=DeepAgentsEvictConfig,
    engine=_engine,
    presets=(Preset("deepagents-evict", "Deep Agents large result eviction",
                    "deepagents' FilesystemMiddleware: a tool result longer than 4 x tool_token_limit_before_evict "
                    "characters is saved to /large_tool_results/<call id> and replaced by a notice with a 5 + 5 "
                    "line preview, as it arrives; it stays so.", DeepAgentsEvictConfig,
                    knobs=(Knob("tool_token_limit_before_evict", "Evict results over (tokens, 4 chars each)",
                                "tokens", "tool_token_limit_before_evict: results longer than 4x this in "
                                "characters are evicted."),),
                    export=_python),),
    aliases={"threshold": "tool_token_limit_before_evict", "limit": "tool_token_limit_before_evict",
             "exclude": "excluded_tools"},
    sticky=True,
    describe=lambda c: f"deepagents evict over {c.tool_token_limit_before_evict:,} tokens",
    exports=("python",),
    changed_noun="result(s) evicted",
    why_nothing=lambda c, sizes: (f"no tool result is longer than {4 * c.tool_token_limit_before_evict:,} characters "
                                  "(among the tools it evicts)."),
)
"""Deep Agents' large tool result eviction, as the registry lists it."""
