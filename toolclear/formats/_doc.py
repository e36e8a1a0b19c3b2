"""Parsed documents: decoding, JSON / JSON Lines / YAML parsing, lossless writing.

A ``Document`` keeps the exact bytes it was read from. Writing back applies edits
(path -> new value) by splicing: the new value's text replaces exactly the characters
of the old value (see ``_splice``), so with no edits the original bytes come back, and
with edits every character outside the edited values is unchanged. The parsed value is
never mutated.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import TranscriptError
from ._splice import json_spans, render_yaml, splice, yaml_spans

__all__ = [
    "BadLine",
    "Document",
    "JsonStyle",
    "Path",
    "decode",
    "first_line_is_object",
    "parse",
    "render_path",
]

Path = tuple[Any, ...]
"""A path into a document: keys and list indices from the root (for JSON Lines, the
first item is the 0-based line index)."""

_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def render_path(path: Iterable[Any], root: str = "$") -> str:
    """``$.messages[3].content`` style, for error messages."""
    out = [root]
    for key in path:
        if isinstance(key, int):
            out.append(f"[{key}]")
        elif not isinstance(key, str):  # a step such as InJson: into a string's JSON
            out.append(f"{key}")
        elif isinstance(key, str) and _IDENT.fullmatch(key):
            out.append(f".{key}")
        else:
            out.append(f"[{json.dumps(key, ensure_ascii=False)}]")
    return "".join(out)


def _line_col(data: bytes, pos: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


def decode(data: bytes) -> tuple[str, str, bytes]:
    """Bytes to text: (text, codec, bom). UTF-8, or UTF-16/32 with a BOM (or plainly
    UTF-16 without one); anything else is an error that says what the bytes look like."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(codec), codec, bom
            except UnicodeDecodeError as exc:
                raise TranscriptError(
                    f"starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()}: "
                    f"{exc.reason} at byte {exc.start + len(bom)}"
                ) from None
    head = data[:4096]
    if head and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            try:
                return data.decode("utf-16-le"), "utf-16-le", b""
            except UnicodeDecodeError:
                pass
        if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            try:
                return data.decode("utf-16-be"), "utf-16-be", b""
            except UnicodeDecodeError:
                pass
    try:
        return data.decode("utf-8"), "utf-8", b""
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        bad = data[exc.start : exc.start + 1].hex().upper()
        controls = sum(1 for b in head if b < 9 or 13 < b < 32)
        if controls > len(head) // 20 or b"\x00" in head:
            raise TranscriptError(
                f"binary data, not a text transcript (first bytes: {data[:8].hex(' ')})"
            ) from None
        raise TranscriptError(
            f"not UTF-8: byte 0x{bad} cannot start a UTF-8 character; the file looks like "
            "Latin-1 or Windows-1252 text, convert it with: iconv -f latin1 -t utf-8",
            where=f"line {line}, column {col}",
        ) from None


@dataclass(frozen=True, slots=True)
class BadLine:
    """A JSON Lines line that is not JSON (kept as it is by formats that allow it)."""

    line: int
    error: str


@dataclass(frozen=True, slots=True)
class JsonStyle:
    """How a JSON text was written, so it can be written the same way."""

    indent: int | str | None = None
    item_sep: str = ","
    key_sep: str = ":"
    ensure_ascii: bool = False
    go_escapes: bool = False

    def dumps(self, value: Any) -> str:
        text = json.dumps(
            value,
            indent=self.indent,
            separators=(self.item_sep, self.key_sep),
            ensure_ascii=self.ensure_ascii,
        )
        if not self.ensure_ascii:
            # a lone surrogate cannot be written as UTF-8; keep it as an escape
            text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
            if self.go_escapes:
                text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
        if self.go_escapes:
            text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        return text

    @classmethod
    def detect(cls, text: str) -> JsonStyle:
        """Guess the style from the text itself (cheap: looks at the first lines)."""
        body = text.strip()
        indent: int | str | None = None
        if "\n" in body:
            for line in body.split("\n", 8)[1:]:
                ws = line[: len(line) - len(line.lstrip())]
                if ws:
                    indent = "\t" if ws.startswith("\t") else len(ws)
                    break
            if indent is None:
                indent = 0
        first_key = re.search(r'"\s*:(\s?)', body[:4096])
        key_sep = ":" + (first_key.group(1) if first_key else "")
        item_sep = "," if indent is not None or key_sep == ":" else ", "
        ensure_ascii = body.isascii()
        go = any(s in body[:65536] for s in ("\\u003c", "\\u003e", "\\u0026"))
        return cls(indent, item_sep, key_sep, ensure_ascii, go)


@dataclass(eq=False)
class Document:
    """A parsed transcript file; ``value`` is never mutated.

    JSON Lines in UTF-8 are parsed line by line from the bytes and only the line offsets
    are kept (no decoded copy of the whole file), so loading a big log costs the bytes
    plus the parsed values.
    """

    kind: str  # "json", "jsonl" or "yaml"
    value: Any  # jsonl: one item per line (None for blank lines, BadLine for broken ones)
    data: bytes
    codec: str = "utf-8"
    bom: bytes = b""
    _lines: list[str] | None = None  # JSON Lines read from decoded text (non-UTF-8 files)
    _offsets: Sequence[int] | None = None  # JSON Lines read from UTF-8 bytes: where each line starts
    _text: str | None = None
    _node: Any = None  # YAML: the composed node tree, for byte-exact write-back
    _non_finite: str | None = None  # 'NaN' / 'Infinity' when the file writes one as a number, '' when not
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    """What readers work out from the value while the file is read (each reader's sniff
    and its read ask for the same message lists): emptied by ``let_go``."""

    @property
    def non_finite(self) -> str:
        """'NaN' or 'Infinity' when the file writes one where a number belongs (Python's JSON
        reads them; JSON has no such value), else '': found once per file."""
        if self._non_finite is None:
            self._non_finite = non_finite_in(self.data)
        return self._non_finite

    @property
    def text(self) -> str:
        """The decoded text (decoded on first use)."""
        if self._text is None:
            self._text = self.data[len(self.bom) :].decode(self.codec, "surrogatepass")
        return self._text

    def line(self, i: int) -> str:
        """JSON Lines: the text of line i (0-based), without its newline."""
        if self._lines is not None:
            return self._lines[i]
        start, end = self._line_span(i)
        return self.data[start:end].decode("utf-8", "surrogatepass")

    def _line_span(self, i: int) -> tuple[int, int]:
        """JSON Lines read from bytes: where line i (0-based) starts and ends in ``data``,
        its newline left out."""
        assert self._offsets is not None
        body_start = len(self.bom)
        start = body_start + self._offsets[i]
        end = body_start + self._offsets[i + 1] - 1 if i + 1 < len(self._offsets) else len(self.data)
        return start, end

    def let_go(self) -> None:
        """Once its transcripts are read, JSON Lines parsed from bytes keep only the bytes
        and where each line starts: a line is parsed again if writing back needs its value
        (an edit inside a JSON body embedded in it). The parsed records were the largest
        part of a loaded log of many small messages, and nothing reads them after."""
        self.derived.clear()
        if self.kind == "jsonl" and self._offsets is not None and not isinstance(self.value, _LineRecords):
            self.value = _LineRecords(self)

    @property
    def bad_lines(self) -> list[BadLine]:
        if self.kind != "jsonl":
            return []
        return [r for r in self.value if isinstance(r, BadLine)]

    def as_jsonl(self) -> Document | None:
        """This document read as JSON Lines: itself, or a one-line JSON object seen as
        a file of one record; None when it cannot be JSON Lines."""
        if self.kind == "jsonl":
            return self
        if self.kind == "json" and isinstance(self.value, dict) and "\n" not in self.text.strip():
            lines = self.text.split("\n")
            records = [self.value if line.strip() else None for line in lines]
            return Document("jsonl", records, self.data, self.codec, self.bom, _lines=lines, _text=self._text)
        return None

    def records(self) -> Iterable[tuple[int, Any]]:
        """JSON Lines: (0-based line index, parsed value) for every JSON line. Listed
        once while the file is read (auto-detection asks every reader, and each walks
        them); parsed again, and not kept, once the document has let its values go."""
        found = ((i, rec) for i, rec in enumerate(self.value) if rec is not None and not isinstance(rec, BadLine))
        if isinstance(self.value, _LineRecords):
            return found
        if "records" not in self.derived:
            self.derived["records"] = list(found)
        listed: list[tuple[int, Any]] = self.derived["records"]
        return listed

    def _spliced(self, text: str, edits: Mapping[Path, Any], where: str) -> str:
        """JSON ``text`` with only the edited values' characters replaced."""
        spans = json_spans(text, edits)
        if spans is None:  # not found where the parsed value says: never write a guess
            raise TranscriptError("cannot find the edited value in the original text", where=where)
        style = JsonStyle.detect(text)
        return splice(text, spans, lambda new, _old: style.dumps(new))

    def _new_line(self, i: int, sub: Mapping[Path, Any]) -> str:
        return self._spliced(self.line(i), sub, f"line {i + 1}")

    def write(self, edits: Mapping[Path, Any]) -> bytes:
        """The document with ``edits`` applied: the new values' text spliced into the
        original, every other character unchanged, in the file's own encoding."""
        if not edits:
            return self.data
        if self.kind == "jsonl":
            by_line: dict[int, dict[Path, Any]] = defaultdict(dict)
            for path, value in edits.items():
                by_line[path[0]][path[1:]] = value
            if self._offsets is not None:
                # copy the untouched bytes, splice only the changed lines
                body_start = len(self.bom)
                parts: list[bytes] = [self.data[:body_start]]
                done = body_start
                for i in sorted(by_line):
                    start, end = self._line_span(i)
                    parts.append(self.data[done:start])
                    parts.append(self._new_line(i, by_line[i]).encode("utf-8", "surrogatepass"))
                    done = end
                parts.append(self.data[done:])
                return b"".join(parts)
            assert self._lines is not None
            out = list(self._lines)
            for i, sub in by_line.items():
                out[i] = self._new_line(i, sub)
            text = "\n".join(out)
        elif self.kind == "yaml":
            text = self._write_yaml(edits)
        else:
            text = self._spliced(self.text, edits, "$")
        return self.bom + text.encode(self.codec, "surrogatepass")

    def _write_yaml(self, edits: Mapping[Path, Any]) -> str:
        from yaml.constructor import SafeConstructor

        spans = yaml_spans(self._node, edits, SafeConstructor())
        if spans is None:
            raise TranscriptError("cannot find the edited value in the original YAML")
        return splice(self.text, spans, render_yaml)


def _json_error(exc: json.JSONDecodeError) -> TranscriptError:
    msg = exc.msg
    if msg == "Extra data":
        msg = "unexpected text after the end of the JSON value"
    elif msg.startswith("Unterminated string"):
        msg = "the text ends inside a string (is the file truncated?)"
    elif msg.startswith("Expecting") and exc.pos >= len(exc.doc.rstrip()):
        msg = f"the JSON ends too early (is the file truncated?): {msg.lower()}"
    elif msg.startswith("Invalid control character"):
        char = exc.doc[exc.pos] if exc.pos < len(exc.doc) else ""
        msg = (f"a raw control character (U+{ord(char):04X}) inside a string; JSON wants it escaped"
               if char else "a raw control character inside a string; JSON wants it escaped")
    return TranscriptError(f"not valid JSON: {msg}", where=f"line {exc.lineno}, column {exc.colno}")


_NON_FINITE = re.compile(rb"[:\[,]\s*(-?Infinity|NaN)\b")
"""A non-finite number where a value belongs; ``non_finite_in`` finds the same first match."""
_SPACE = frozenset(b" \t\n\r\f\v")
_OPENS = frozenset(b":[,")


def non_finite_in(data: bytes) -> str:
    """What ``_NON_FINITE.search(data)`` finds (its group), found from each occurrence of
    the two words: the regex tried every ':', '[' and ',' of the file, most of a large
    log's reading time where tool output mentions NaN (a corpus reads each file once)."""
    best: tuple[int, str] | None = None
    for word in (b"NaN", b"Infinity"):
        at = data.find(word)
        while at != -1:
            end = at + len(word)
            after = data[end:end + 1]
            if not (after.isalnum() or after == b"_"):  # \b: the word ends here
                j, minus = at - 1, False
                if word == b"Infinity" and j >= 0 and data[j] == 0x2D:
                    j, minus = j - 1, True
                while j >= 0 and data[j] in _SPACE:
                    j -= 1
                if j >= 0 and data[j] in _OPENS:
                    if best is None or j < best[0]:
                        best = (j, ("-" if minus else "") + word.decode())
                    break
            at = data.find(word, at + 1)
    return best[1] if best else ""

_TOO_DEEP = "JSON nested too deeply to read (more than about 1,000 levels)"


_LONG_NUMBER = re.compile(r"-?\d{4300,}")


class _NumberTooLong(ValueError):
    """A JSON integer longer than Python will convert (sys.get_int_max_str_digits)."""

    def __init__(self, text: str) -> None:
        match = _LONG_NUMBER.search(text)
        pos = match.start() if match else 0
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__("a number with more than 4,300 digits, which Python cannot read")


def _orjson_loads() -> Any:
    """orjson's ``loads`` where it is installed: JSON Lines are read line by line, and
    orjson shares the key strings of every line (the stdlib makes new ones per line: on a
    log of many small messages, most of the memory) and parses faster. Any line it
    refuses (NaN, a lone surrogate, an integer past 64 bits, bad JSON) is read by the
    stdlib as before, so what is read, and every error, is the stdlib's."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson.loads


_fast_loads = _orjson_loads()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # int() refusing a huge number
        if "digits" in str(exc):
            raise _NumberTooLong(text) from None
        raise


def _parse_line(n: int, line: str) -> Any:
    """One JSON Lines line: its value, None when blank, or a BadLine."""
    if not line.strip():
        return None
    try:
        return _loads(line)
    except json.JSONDecodeError as exc:
        return BadLine(n, f"column {exc.colno}: {_json_error(exc).problem}")
    except RecursionError:
        return BadLine(n, _TOO_DEEP)
    except _NumberTooLong as exc:
        return BadLine(n, f"column {exc.column}: {exc}")


def _looks_like_jsonl(records: list[Any]) -> bool:
    objects = nonblank = 0
    for rec in records:
        if rec is None:
            continue
        nonblank += 1
        if isinstance(rec, dict):
            objects += 1
    return nonblank >= 1 and objects >= 1 and objects * 2 >= nonblank


def _parse_jsonl(text: str) -> tuple[list[str], list[Any]] | None:
    lines = text.split("\n")
    records = [_parse_line(n, line) for n, line in enumerate(lines, start=1)]
    return (lines, records) if _looks_like_jsonl(records) else None


def _parse_chunk(n: int, chunk: bytes) -> Any:
    """Line ``n`` of JSON Lines from its bytes: orjson where installed; a line it refuses
    (not strict JSON for it) is read by the stdlib, with its exact value or error."""
    if _fast_loads is not None:
        try:
            return _fast_loads(chunk)
        except ValueError:
            pass
    return _parse_chunk_std(n, chunk)


def _parse_chunk_std(n: int, chunk: bytes) -> Any:
    """Line ``n`` read by the stdlib: its exact value, or a ``BadLine`` saying why not."""
    try:
        line = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(n, f"column {exc.start + 1}: not UTF-8 (byte 0x{chunk[exc.start]:02X})")
    return _parse_line(n, line)


class _LineRecords(Sequence[Any]):
    """A JSON Lines document's records, each parsed again from its line when asked for."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc

    def __len__(self) -> int:
        assert self._doc._offsets is not None
        return len(self._doc._offsets)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        start, end = self._doc._line_span(i)
        chunk = self._doc.data[start:end]
        return _parse_chunk(i + 1, chunk) if chunk.strip() else None

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))


def _parse_jsonl_bytes(body: bytes) -> tuple[array, list[Any], str | None] | None:
    """JSON Lines straight from UTF-8 bytes, one line decoded at a time; also what
    ``Document.non_finite`` is, when orjson read the lines: it refuses NaN and Infinity,
    so only the lines it refused can write one (a scan of the whole file was a tenth of
    the reading time of a corpus of logs). The first such line decides, as in a scan."""
    offsets = array("q")
    records: list[Any] = []
    odd = ""
    fast = _fast_loads
    pos, n, size = 0, 0, len(body)
    while True:
        n += 1
        nl = body.find(b"\n", pos)
        end = size if nl == -1 else nl
        offsets.append(pos)
        chunk = body[pos:end]
        if fast is not None:
            try:
                records.append(fast(chunk))
            except ValueError:
                odd = odd or non_finite_in(chunk)
                records.append(_parse_chunk_std(n, chunk))
        else:
            records.append(_parse_chunk(n, chunk))
        if nl == -1:
            break
        pos = nl + 1
    if not _looks_like_jsonl(records):
        return None
    return offsets, records, (odd if fast is not None else None)


_NON_SPACE = re.compile(rb"[^ \t\n\r\f\v]")


def first_line_is_object(body: bytes) -> bool:
    """Cheap test for JSON Lines: the first line alone is a JSON object and more follows."""
    nl = body.find(b"\n")
    if nl == -1 or _NON_SPACE.search(body, nl + 1) is None:  # (no copy of the rest of the file)
        return False
    try:
        return isinstance(json.loads(body[:nl].decode("utf-8")), dict)
    except (ValueError, RecursionError):
        return False


def parse(data: bytes) -> Document:
    """Decode and parse: one JSON value, JSON Lines, or (for API cassettes) YAML."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    if first_line_is_object(data[len(bom) :]):
        parsed = _parse_jsonl_bytes(data[len(bom) :])
        if parsed is not None:
            offsets, records, odd = parsed
            return Document("jsonl", records, data, "utf-8", bom, _offsets=offsets, _non_finite=odd)
    text, codec, bom = decode(data)
    stripped = text.strip()
    if not stripped:
        raise TranscriptError("the file is empty" if not text else "the file holds only whitespace")
    try:
        value = _loads(text)
    except RecursionError:
        raise TranscriptError(_TOO_DEEP, where="line 1") from None
    except _NumberTooLong as exc:
        raise TranscriptError(str(exc), where=f"line {exc.line}, column {exc.column}") from None
    except json.JSONDecodeError as exc:
        first_error = _json_error(exc)
        if "\n" in stripped:
            parsed_text = _parse_jsonl(text)
            if parsed_text is not None:
                lines, records = parsed_text
                return Document("jsonl", records, data, codec, bom, _lines=lines, _text=text)
        if stripped[0] not in "[{":
            parsed_yaml = _try_yaml(text)
            if parsed_yaml is not None and isinstance(parsed_yaml[1], dict):
                node, value = parsed_yaml
                return Document("yaml", value, data, codec, bom, _text=text, _node=node)
        raise first_error from None
    return Document("json", value, data, codec, bom, _text=text)


_YAML_HEAD = re.compile(r"^(%YAML|---|[A-Za-z_][\w-]*:(\s|$))", re.M)
YAML_EXPANSION_LIMIT = 4
"""How many times its own size a YAML file may grow through aliases: the values a
cassette repeats with ``*id001`` are small; a 'billion laughs' file grows without end."""


def _expanded_size(root: Any, limit: int) -> int:
    """Nodes plus scalar characters of the YAML tree with every alias expanded, counted
    without expanding (each node once, memoised); stops past ``limit``. A node that
    contains itself is refused."""
    import yaml

    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            if isinstance(node, yaml.MappingNode):
                total = 1 + sum(size[id(k)] + size[id(v)] for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                total = 1 + sum(size[id(v)] for v in node.value)
            else:
                total = 1 + len(node.value)
            size[key] = total
            if total > limit:
                return total
            continue
        if key in size:
            continue
        if key in on_path:
            raise TranscriptError("a YAML alias refers to a value that contains it (a cycle); "
                                  "toolclear does not read self-referencing YAML")
        on_path.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.append((k, False))
                stack.append((v, False))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, False) for v in node.value)
    return size.get(id(root), 0)


def _try_yaml(text: str) -> tuple[Any, Any] | None:
    """(composed node, value) of a YAML document, None when it is not YAML. Aliases are
    measured before anything is built: one whose expansion would grow the document past
    ``YAML_EXPANSION_LIMIT`` times its size is refused."""
    try:
        import yaml
    except ImportError:
        if _YAML_HEAD.search(text[:4096]):
            raise TranscriptError(
                "looks like YAML (an API cassette?); reading YAML needs PyYAML: "
                "pip install 'toolclear[yaml]' (or pip install PyYAML)"
            ) from None
        return None
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        loader = loader_cls(text)
    except Exception:
        return None
    try:
        try:
            node = loader.get_single_node()
        except Exception as exc:  # "not YAML", and the JSON error is reported, unless it plainly is YAML
            if _YAML_HEAD.search(text[:4096]):
                mark = getattr(exc, "problem_mark", None)
                where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
                problem = getattr(exc, "problem", None) or str(exc)
                raise TranscriptError(f"YAML that cannot be read{where}: {' '.join(str(problem).split())[:200]}"
                                      ) from None
            return None
        if node is None:
            return None
        limit = YAML_EXPANSION_LIMIT * len(text) + 10_000
        expanded = _expanded_size(node, limit)
        if expanded > limit:
            raise TranscriptError(
                f"YAML aliases would expand this {len(text):,}-character file past {limit:,} values "
                "and characters; toolclear refuses such alias expansion ('billion laughs')"
            )
        try:
            value = loader.construct_document(node)
        except RecursionError:
            raise TranscriptError("YAML nested too deeply to read") from None
        except Exception as exc:
            raise TranscriptError(f"YAML that cannot be read: {' '.join(str(exc).split())[:200]}") from None
        return node, value
    finally:
        loader.dispose()
