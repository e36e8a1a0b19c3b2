"""Images, PDFs and audio as the providers count them, not as base64 text.

A screenshot in a tool result is a few hundred kilobytes of base64 in the log; the
provider bills it by its pixels (Anthropic ``width x height / 750`` after its resize,
OpenAI 85 + 170 per 512-px tile, Gemini 258 per 768-px tile). The size is read from
the image's header (PNG, JPEG, GIF, WebP), decoding a few kilobytes of the base64, not
the image. A PDF is billed per page (Gemini: 258 tokens a page; Anthropic and OpenAI:
the page's text and an image of the page), its pages counted from its page objects;
audio per second (Gemini: 32 tokens a second), its length read from a WAV or MP3 header.
What the documentation leaves open is assumed and said in ``ASSUMED``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Sequence

from .._kept import KeptFor
from ..model import Message

__all__ = ["ASSUMED", "anthropic_image_tokens", "audio_seconds", "billed_tokens", "gemini_image_tokens",
           "image_size", "media_corrections", "media_kind", "media_tokens", "openai_image_tokens", "payloads",
           "pdf_pages", "provider_of"]

_PAYLOAD = re.compile(r'(?:"data"\s*:\s*"|;base64,)([A-Za-z0-9+/]{256,}={0,2})')

PDF_TEXT_TOKENS_PER_PAGE = 2_250
"""Anthropic: "1,500-3,000 tokens per page depending on content density" for a page's
text; the middle is taken (OpenAI sends a page's text too and gives no figure)."""
AUDIO_TOKENS_PER_SECOND = {"gemini": 32, "openai": 10, "anthropic": 32}
"""Gemini: 32 tokens a second (documented). OpenAI gives no figure for its audio
models: about one token per 100 ms is assumed. Anthropic's API takes no audio; such a
part is counted as Gemini counts it."""
ASSUMED = ("a PDF page's text taken as 2,250 tokens (Anthropic: 1,500-3,000) plus an image of a US Letter page; "
           "OpenAI audio taken as 10 tokens a second")
_HEAD = 65_536  # base64 characters decoded to find a JPEG's frame header


def payloads(text: str) -> list[str]:
    """The base64 payloads of the image blocks a content's text holds."""
    if '"data"' not in text and ";base64," not in text:
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


def _decoded(b64: str) -> bytes:
    whole = b64[: len(b64) // 4 * 4]
    try:
        return base64.b64decode(whole)
    except (binascii.Error, ValueError):
        return b""


_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_COUNT = re.compile(rb"/Count\s+(\d{1,6})")


def pdf_pages(b64: str) -> int | None:
    """A PDF's pages (its page objects, else its page tree's count, else one), or None
    when it is not a PDF. Pages kept in compressed object streams are not seen: such a
    file counts as its page tree says, or as one page."""
    if not b64.startswith("JVBER"):  # %PDF
        return None
    raw = _decoded(b64)
    if not raw.startswith(b"%PDF"):
        return None
    pages = len(_PAGE.findall(raw))
    if pages:
        return pages
    counts = [int(n) for n in _COUNT.findall(raw)]  # the page tree's root holds the largest
    return max(counts) if counts else 1


_MP3_KBPS = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0)


def audio_seconds(b64: str) -> float | None:
    """An audio clip's length from its header (WAV: its data size over its byte rate;
    MP3: its size over the first frame's bit rate), or None when it is neither."""
    head = _decoded(b64[:_HEAD])
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        i, rate, size = 12, 0, 0
        while i + 8 <= len(head):
            kind, length = head[i:i + 4], int.from_bytes(head[i + 4:i + 8], "little")
            if kind == b"fmt " and i + 16 <= len(head):
                rate = int.from_bytes(head[i + 16:i + 20], "little")
            if kind == b"data":
                size = min(length, len(b64) * 3 // 4 - i - 8)
                break
            i += 8 + length + (length & 1)
        return size / rate if rate and size else None
    i = 0
    if head[:3] == b"ID3" and len(head) >= 10:  # skip the tag: 4 x 7-bit size bytes
        i = 10 + ((head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | (head[9] & 0x7F))
    if i + 4 <= len(head) and head[i] == 0xFF and (head[i + 1] & 0xE0) == 0xE0:
        kbps = _MP3_KBPS[head[i + 2] >> 4] if (head[i + 1] >> 3) & 3 == 3 else 0  # MPEG-1 tables
        if kbps:
            return (len(b64) * 3 // 4 - i) * 8 / (kbps * 1000)
    return None


Kind = tuple[str, float, float]
"""("image", width, height), ("pdf", pages, 0) or ("audio", seconds, 0)."""


def media_kind(b64: str) -> Kind | None:
    """What one base64 payload is, as its header says, or None when none of them."""
    size = image_size(b64)
    if size is not None:
        return ("image", *size)
    pages = pdf_pages(b64)
    if pages is not None:
        return ("pdf", pages, 0)
    seconds = audio_seconds(b64)
    return ("audio", seconds, 0) if seconds is not None else None


def billed_tokens(kind: Kind, provider: str) -> int:
    """What ``provider`` bills for a payload of this kind."""
    what, a, b = kind
    if what == "image":
        return provider_tokens(int(a), int(b), provider)
    if what == "pdf":
        if provider == "gemini":
            return 258 * int(a)
        page_image = openai_image_tokens(1224, 1584) if provider == "openai" else anthropic_image_tokens(1211, 1568)
        return int(a) * (PDF_TEXT_TOKENS_PER_PAGE + page_image)
    return math.ceil(a * AUDIO_TOKENS_PER_SECOND.get(provider, 32))


def media_tokens(b64: str, provider: str) -> int | None:
    """What ``provider`` bills for one base64 payload (an image, a PDF or audio), or None
    when it is none of them."""
    kind = media_kind(b64)
    return billed_tokens(kind, provider) if kind is not None else None


def provider_of(model: str) -> str:
    """Whose rules count a model's media: "anthropic", "openai" or "gemini" (Anthropic's
    when the log names no model: most logs with screenshots are Claude Code's)."""
    name = model.lower()
    if "gemini" in name or "gemma" in name:
        return "gemini"
    if name.startswith(("gpt", "o1", "o3", "o4", "chatgpt", "codex")) or "/gpt" in name or "openai" in name:
        return "openai"
    return "anthropic"


_facts_kept: KeptFor[dict[int, tuple[int, tuple[Kind, ...]]]] = KeptFor(4)


def _media_facts(messages: Sequence[Message]) -> dict[int, tuple[int, tuple[Kind, ...]]]:
    """Per message holding media: the base64 characters of its media and what each is.
    Found once per transcript (pricing asks again for every replay of a sweep)."""
    def read() -> dict[int, tuple[int, tuple[Kind, ...]]]:
        out = {}
        for i, m in enumerate(messages):
            text = m.content
            if len(text) < 1024:
                continue
            chars, kinds = 0, []
            for b64 in payloads(text):
                kind = media_kind(b64)
                if kind is not None:
                    chars += len(b64)
                    kinds.append(kind)
            if kinds:
                out[i] = (chars, tuple(kinds))
        return out
    return _facts_kept.get(messages, read)


def media_corrections(messages: Sequence[Message], counts: Sequence[int], provider: str) -> dict[int, int]:
    """Per message holding media: the provider's tokens for them less what the counter
    gave their base64 (its share of the message's characters)."""
    out: dict[int, int] = {}
    for i, (chars, kinds) in _media_facts(messages).items():
        billed = sum(billed_tokens(k, provider) for k in kinds)
        out[i] = billed - round(counts[i] * chars / max(1, len(messages[i].content)))
    return out
