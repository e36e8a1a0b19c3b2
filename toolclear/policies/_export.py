"""What the policies export share: Go literals, for eino's two policies."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["go_int", "go_list", "go_str"]

_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def go_str(text: str) -> str:
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


def go_int(value: int, default: int, field: str, notes: list[str]) -> str:
    if value == 0:
        notes.append(f"// {field}: eino reads 0 as its default ({default}); use 1 for the smallest real value")
    return str(value)


def go_list(names: Sequence[str]) -> str:
    return "[]string{" + ", ".join(go_str(n) for n in names) + "}" if names else "nil"
