"""Images as the providers count them, not as base64 text.

A screenshot in a tool result is a few hundred kilobytes of base64 in the log; the
provider bills it by its pixels (Anthropic ``width x height / 750`` after its resize,
OpenAI 85 + 170 per 512-px tile, Gemini 258 per 768-px tile). The size is read from
the image's header (PNG, JPEG, GIF, WebP), decoding a few kilobytes of the base64, not
the image.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Sequence

from ._kept import KeptFor
from .model import Message

__all__ = ["anthropic_image_tokens", "gemini_image_tokens", "image_size", "media_corrections",
           "openai_image_tokens", "payloads"]

_PAYLOAD = re.compile(r'(?:"data":"|;base64,)([A-Za-z0-9+/]{256,}={0,2})')
_HEAD = 65_536  # base64 characters decoded to find a JPEG's frame header


def payloads(text: str) -> list[str]:
    """The base64 payloads of the image blocks a content's text holds."""
    if '"data":"' not in text and ";base64," not in text:
        return []
    return _PAYLOAD.findall(text)


def image_size(b64: str) -> tuple[int, int] | None:
    """(width, height) from an image's header, or None when it is not a known image."""
    head = b64[:_HEAD]
    head = head[: len(head) // 4 * 4]
    try:
        raw = base64.b64decode(head)
    except (binascii.Error, ValueError):
        return None
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        w, h = struct.unpack(">II", raw[16:24])
        return w, h
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        w, h = struct.unpack("<HH", raw[6:10])
        return w, h
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP" and len(raw) >= 30:
        kind = raw[12:16]
        if kind == b"VP8X":
            return 1 + int.from_bytes(raw[24:27], "little"), 1 + int.from_bytes(raw[27:30], "little")
        if kind == b"VP8 " and len(raw) >= 30:
            w, h = struct.unpack("<HH", raw[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if kind == b"VP8L" and len(raw) >= 25:
            bits = int.from_bytes(raw[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        return None
    if raw[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(raw):
            if raw[i] != 0xFF:
                i += 1
                continue
            marker = raw[i + 1]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                h, w = struct.unpack(">HH", raw[i + 5:i + 9])
                return w, h
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            i += 2 + int.from_bytes(raw[i + 2:i + 4], "big")
    return None


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic: ``width x height / 750`` (rounded up) after scaling down an image whose
    long edge is over 1,568 px or that would cost over about 1,600 tokens."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_200_000 / max(1, width * height)))
    return max(1, math.ceil(width * scale * height * scale / 750))


def openai_image_tokens(width: int, height: int, detail: str = "high") -> int:
    """OpenAI (GPT-4o family): 85 at low detail; at high, fit in 2,048 x 2,048, scale
    the short side to 768, then 85 + 170 per 512-px tile."""
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini: 258 when both sides are at most 384 px, else 258 per 768 x 768 tile."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def provider_tokens(width: int, height: int, provider: str) -> int:
    if provider == "openai":
        return openai_image_tokens(width, height)
    if provider == "gemini":
        return gemini_image_tokens(width, height)
    return anthropic_image_tokens(width, height)


_facts_kept: KeptFor[dict[int, tuple[int, tuple[tuple[int, int], ...]]]] = KeptFor(4)


def _media_facts(messages: Sequence[Message]) -> dict[int, tuple[int, tuple[tuple[int, int], ...]]]:
    """Per message holding images: the base64 characters of its images and their sizes.
    Read once per transcript (pricing asks again for every replay of a sweep)."""
    def read() -> dict[int, tuple[int, tuple[tuple[int, int], ...]]]:
        out = {}
        for i, m in enumerate(messages):
            text = m.content
            if len(text) < 1024:
                continue
            chars, sizes = 0, []
            for b64 in payloads(text):
                size = image_size(b64)
                if size is not None:
                    chars += len(b64)
                    sizes.append(size)
            if sizes:
                out[i] = (chars, tuple(sizes))
        return out
    return _facts_kept.get(messages, read)


def media_corrections(messages: Sequence[Message], counts: Sequence[int], provider: str) -> dict[int, int]:
    """Per message holding images: the provider's tokens for them less what the counter
    gave their base64 (its share of the message's characters)."""
    out: dict[int, int] = {}
    for i, (chars, sizes) in _media_facts(messages).items():
        billed = sum(provider_tokens(w, h, provider) for w, h in sizes)
        out[i] = billed - round(counts[i] * chars / max(1, len(messages[i].content)))
    return out
