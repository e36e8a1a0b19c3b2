"""Byte-exact write-back: find where a value sits in the original text and replace just it.

Re-serialising a parsed document changes what the parser threw away: ``1E5`` becomes
``100000.0``, ``\\u00e9`` becomes ``é``, duplicate keys collapse, a hand layout is
re-indented. So an edit is a splice: locate the span of each edited value in the
original text and put the new value's JSON (or YAML) text there; every other character
of the file stays as it was.

JSON spans are found by a descent guided by the edited paths; subtrees no edit enters
are skipped with the C scanner of ``json`` (``raw_decode`` / ``scanstring``), so a write
costs one scan of the text at C speed. A repeated key is located at its last
occurrence, the one ``json.loads`` keeps. YAML spans come from the node marks of
PyYAML's composer, which also keeps aliases as aliases (nothing is expanded).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .._gc import paused_gc

__all__ = ["json_spans", "splice", "yaml_spans", "yaml_string"]

Path = tuple[Any, ...]
Span = tuple[int, int, Any]
"""(start, end, new value): the characters ``text[start:end]`` are the old value."""

_LEAF = object()
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]


def _trie(edits: Mapping[Path, Any]) -> dict[Any, Any]:
    root: dict[Any, Any] = {}
    for path, value in edits.items():
        node = root
        for key in path:
            node = node.setdefault(key, {})
        node[_LEAF] = value
    return root


def _ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _value_end(text: str, i: int) -> int:
    if text[i] == '"':
        return int(_scanstring(text, i + 1)[1])
    return int(_DECODER.raw_decode(text, i)[1])


class _NotFound(LookupError):
    pass


def _locate(text: str, i: int, trie: dict[Any, Any], out: list[Span]) -> int:
    """Spans of the edits under ``trie`` in the value starting at ``text[i]``; returns
    where that value ends."""
    i = _ws(text, i)
    if _LEAF in trie:
        end = _value_end(text, i)
        out.append((i, end, trie[_LEAF]))
        return end
    if text[i] == "{":
        return _locate_in_object(text, _ws(text, i + 1), trie, out)
    if text[i] == "[":
        return _locate_in_array(text, _ws(text, i + 1), trie, out)
    raise _NotFound(next(iter(trie)))


def _after_item(text: str, i: int) -> tuple[int, bool]:
    """Past the separator after an item: (where the next item or the end is, more items?)."""
    i = _ws(text, i)
    if text[i] == ",":
        return _ws(text, i + 1), True
    return i + 1, False


def _locate_in_object(text: str, i: int, trie: dict[Any, Any], out: list[Span]) -> int:
    found: dict[str, list[Span]] = {}
    more = text[i] != "}"
    i = i if more else i + 1
    while more:
        key, i = _scanstring(text, i + 1)
        i = _ws(text, _ws(text, i) + 1)  # past ':'
        if key in trie:
            spans: list[Span] = []
            i = _locate(text, i, trie[key], spans)
            found[key] = spans  # a later duplicate wins, as in json.loads
        else:
            i = _value_end(text, i)
        i, more = _after_item(text, i)
    for key in trie:
        if key not in found:
            raise _NotFound(key)
        out.extend(found[key])
    return i


def _locate_in_array(text: str, i: int, trie: dict[Any, Any], out: list[Span]) -> int:
    wanted = set(trie)
    if any(not isinstance(k, int) for k in wanted):
        raise _NotFound(next(k for k in wanted if not isinstance(k, int)))
    n = 0
    more = text[i] != "]"
    i = i if more else i + 1
    while more:
        if n in wanted:
            i = _locate(text, i, trie[n], out)
            wanted.discard(n)
        else:
            i = _value_end(text, i)
        n += 1
        i, more = _after_item(text, i)
    if wanted:
        raise _NotFound(min(wanted))
    return i


def json_spans(text: str, edits: Mapping[Path, Any]) -> list[Span] | None:
    """Where each edited value of the JSON ``text`` is; None when a path is not in it."""
    if not edits:
        return []
    out: list[Span] = []
    try:
        with paused_gc():
            _locate(text, 0, _trie(edits), out)
    except (_NotFound, IndexError, ValueError):
        return None
    return out


def splice(text: str, spans: list[Span], render: Any) -> str:
    """``text`` with each span replaced by ``render(new value, old text)``."""
    parts: list[str] = []
    done = 0
    for start, end, value in sorted(spans, key=lambda s: s[0]):
        parts.append(text[done:start])
        parts.append(render(value, text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts)


# ---------------------------------------------------------------- YAML

_YAML_KEEP = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_YAML_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}


def yaml_string(value: str) -> str:
    """A double-quoted YAML scalar that reads back as exactly ``value``."""
    out = ['"']
    for ch in value:
        if ch in _YAML_ESC:
            out.append(_YAML_ESC[ch])
        elif _YAML_KEEP.match(ch):
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _yaml_key(constructor: Any, node: Any) -> Any:
    try:
        return constructor.construct_object(node, deep=True)
    except Exception:  # an unhashable or odd key never matches a path
        return object()


def yaml_spans(root: Any, edits: Mapping[Path, Any], constructor: Any) -> list[Span] | None:
    """Spans (character indices) of the edited values, from composed YAML nodes.

    For a value under a mapping key the span starts right after the key, so a block
    collection (which begins on the next line) is replaced by ``: "new"`` on the key's
    line; trailing white space of the span is kept so the next line keeps its indent.
    """
    import yaml

    out: list[Span] = []

    def walk(node: Any, trie: dict[Any, Any], key_end: int | None) -> bool:
        if key_end is not None and node.start_mark.index < key_end:
            key_end = None  # an alias: the value sits at its anchor
        if _LEAF in trie:
            start = key_end if key_end is not None else node.start_mark.index
            out.append((start, node.end_mark.index, (trie[_LEAF], key_end is not None)))
            return True
        if isinstance(node, yaml.MappingNode):
            for key in trie:
                match = None
                for knode, vnode in node.value:  # the last equal key wins, as in construction
                    if _yaml_key(constructor, knode) == key:
                        match = (knode, vnode)
                if match is None or not walk(match[1], trie[key], match[0].end_mark.index):
                    return False
            return True
        if isinstance(node, yaml.SequenceNode):
            for key in trie:
                if not isinstance(key, int) or not 0 <= key < len(node.value):
                    return False
                if not walk(node.value[key], trie[key], None):
                    return False
            return True
        return False

    if not walk(root, _trie(edits), None):
        return None
    unique = {(start, end): value for start, end, value in out}  # two paths through one alias
    return [(start, end, value) for (start, end), value in unique.items()]


_ANCHOR = re.compile(r"\s*:?\s*(&[^\s,\[\]{}]+)")


def render_yaml(value: tuple[Any, bool], old: str) -> str:
    """The text that replaces ``old`` (a YAML value, after its key when ``keyed``)."""
    new, keyed = value
    body = old.rstrip(" \t\r\n")
    tail = old[len(body) :]
    anchor = _ANCHOR.match(body)
    prefix = (anchor.group(1) + " ") if anchor else ""
    if isinstance(new, (bytes, bytearray)):  # a binary body, as PyYAML reads it back
        import base64

        text = '!!binary "' + base64.b64encode(bytes(new)).decode("ascii") + '"'
    else:
        text = yaml_string(new) if isinstance(new, str) else json.dumps(new, ensure_ascii=False)
    return (": " if keyed else "") + prefix + text + tail
