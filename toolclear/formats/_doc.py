"""Parsed documents: decoding, JSON / JSON Lines / YAML parsing, lossless writing.

A ``Document`` keeps the exact bytes it was read from. Writing back applies edits
(path -> new value) copy-on-write, so the parsed value is never mutated, and:

* with no edits, the original bytes come back unchanged;
* for JSON Lines only the edited lines are serialised again (in the style each line
  was written in); every other line is byte-identical;
* for a JSON document the output uses the indentation, separators and escaping the
  file was written with, so untouched parts read the same.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TranscriptError

__all__ = [
    "BadLine",
    "Document",
    "JsonStyle",
    "Path",
    "apply_edits",
    "decode",
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

    @classmethod
    def fit(cls, value: Any, text: str) -> JsonStyle:
        """The style that writes ``value`` exactly as ``text`` is written, trying the
        guess first and then its neighbours; the guess when none fits."""
        guess = cls.detect(text)
        body = text.strip()
        seps = [(guess.item_sep, guess.key_sep)] if guess.indent is not None else [
            (guess.item_sep, guess.key_sep), (",", ":"), (", ", ": "), (",", ": "), (", ", ":")
        ]
        seen = set()
        for item_sep, key_sep in seps:
            for ascii_ in (guess.ensure_ascii, not guess.ensure_ascii):
                for go in (guess.go_escapes, not guess.go_escapes):
                    style = cls(guess.indent, item_sep, key_sep, ascii_, go)
                    if style in seen:
                        continue
                    seen.add(style)
                    if style.dumps(value) == body:
                        return style
        return guess


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
    _offsets: list[int] | None = None  # JSON Lines read from UTF-8 bytes: where each line starts
    _text: str | None = None
    _style: JsonStyle | None = None

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
        assert self._offsets is not None
        body_start = len(self.bom)
        start = body_start + self._offsets[i]
        end = body_start + self._offsets[i + 1] - 1 if i + 1 < len(self._offsets) else len(self.data)
        return self.data[start:end].decode("utf-8", "surrogatepass")

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
        """JSON Lines: (0-based line index, parsed value) for every JSON line."""
        for i, rec in enumerate(self.value):
            if rec is not None and not isinstance(rec, BadLine):
                yield i, rec

    def _new_line(self, i: int, sub: Mapping[Path, Any]) -> str:
        raw = self.line(i)
        body = raw.rstrip("\r")
        ending = raw[len(body) :]
        lead = body[: len(body) - len(body.lstrip())]
        style = JsonStyle.fit(self.value[i], body)
        return lead + style.dumps(apply_edits(self.value[i], sub)) + ending

    def write(self, edits: Mapping[Path, Any]) -> bytes:
        """The document with ``edits`` applied, in its own encoding and style."""
        if not edits:
            return self.data
        if self.kind == "jsonl":
            by_line: dict[int, dict[Path, Any]] = defaultdict(dict)
            for path, value in edits.items():
                by_line[path[0]][path[1:]] = value
            if self._offsets is not None:
                # copy the untouched bytes, write only the changed lines
                body_start = len(self.bom)
                parts: list[bytes] = [self.data[:body_start]]
                done = body_start
                for i in sorted(by_line):
                    start = body_start + self._offsets[i]
                    end = body_start + self._offsets[i + 1] - 1 if i + 1 < len(self._offsets) else len(self.data)
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
            import yaml

            text = yaml.safe_dump(
                apply_edits(self.value, edits), sort_keys=False, allow_unicode=True, width=1 << 30
            )
        else:
            full = self.text
            if self._style is None:
                # checking every candidate style means writing the whole document each
                # time: worth it below a few MB, the first-lines guess is used above
                self._style = JsonStyle.fit(self.value, full) if len(full) < 8_000_000 else JsonStyle.detect(full)
            stripped = full.strip()
            start = full.find(stripped[:1]) if stripped else 0
            lead = full[:start]
            trail = full[start + len(stripped) :]
            text = lead + self._style.dumps(apply_edits(self.value, edits)) + trail
        return self.bom + text.encode(self.codec, "surrogatepass")


def apply_edits(root: Any, edits: Mapping[Path, Any]) -> Any:
    """A copy of ``root`` with each path set to its value; only containers on an
    edited path are copied, the rest is shared (and never mutated)."""
    if () in edits:
        return edits[()]
    groups: dict[Any, dict[Path, Any]] = defaultdict(dict)
    for path, value in edits.items():
        groups[path[0]][path[1:]] = value
    if isinstance(root, list):
        new_list = list(root)
        for key, sub in groups.items():
            new_list[key] = apply_edits(root[key], sub)
        return new_list
    if isinstance(root, dict):
        new_dict = dict(root)
        for key, sub in groups.items():
            new_dict[key] = apply_edits(root.get(key), sub)
        return new_dict
    raise TypeError(f"cannot edit inside {type(root).__name__}")


def _json_error(exc: json.JSONDecodeError) -> TranscriptError:
    msg = exc.msg
    if msg == "Extra data":
        msg = "unexpected text after the end of the JSON value"
    elif msg.startswith("Unterminated string"):
        msg = "the text ends inside a string (is the file truncated?)"
    elif msg.startswith("Expecting") and exc.pos >= len(exc.doc.rstrip()):
        msg = f"the JSON ends too early (is the file truncated?): {msg.lower()}"
    return TranscriptError(f"not valid JSON: {msg}", where=f"line {exc.lineno}, column {exc.colno}")


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


def _parse_jsonl_bytes(body: bytes) -> tuple[list[int], list[Any]] | None:
    """JSON Lines straight from UTF-8 bytes, one line decoded at a time."""
    offsets: list[int] = []
    records: list[Any] = []
    pos, n, size = 0, 0, len(body)
    while True:
        n += 1
        nl = body.find(b"\n", pos)
        end = size if nl == -1 else nl
        offsets.append(pos)
        chunk = body[pos:end]
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            records.append(BadLine(n, f"column {exc.start + 1}: not UTF-8 (byte 0x{chunk[exc.start]:02X})"))
        else:
            records.append(_parse_line(n, line))
        if nl == -1:
            break
        pos = nl + 1
    return (offsets, records) if _looks_like_jsonl(records) else None


def _first_line_is_object(body: bytes) -> bool:
    """Cheap test for JSON Lines: the first line alone is a JSON object and more follows."""
    nl = body.find(b"\n")
    if nl == -1 or not body[nl + 1 :].strip():
        return False
    try:
        return isinstance(json.loads(body[:nl].decode("utf-8")), dict)
    except (ValueError, RecursionError):
        return False


def parse(data: bytes) -> Document:
    """Decode and parse: one JSON value, JSON Lines, or (for API cassettes) YAML."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    if _first_line_is_object(data[len(bom) :]):
        parsed = _parse_jsonl_bytes(data[len(bom) :])
        if parsed is not None:
            offsets, records = parsed
            return Document("jsonl", records, data, "utf-8", bom, _offsets=offsets)
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
            value = _try_yaml(text)
            if isinstance(value, dict):
                return Document("yaml", value, data, codec, bom, _text=text)
        raise first_error from None
    return Document("json", value, data, codec, bom, _text=text)


def _try_yaml(text: str) -> Any:
    try:
        import yaml
    except ImportError:
        return None
    try:
        return yaml.safe_load(text)
    except Exception:  # any YAML error means "not YAML"; the JSON error is reported
        return None
