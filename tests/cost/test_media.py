"""Images counted as the providers bill them: sizes read from real image files'
headers, the providers' documented examples, and the cost model on a run whose tool
result holds a screenshot."""

from __future__ import annotations

import base64
import io
import json
import random

import pytest
from PIL import Image

import toolclear as tc
from toolclear.cost.media import anthropic_image_tokens, gemini_image_tokens, image_size, openai_image_tokens


def encoded(width: int, height: int, fmt: str, noise: bool = False) -> str:
    buf = io.BytesIO()
    image = (Image.frombytes("RGB", (width, height), random.Random(7).randbytes(width * height * 3)) if noise
             else Image.new("RGB", (width, height), (200, 30, 90)))
    image.save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
@pytest.mark.parametrize("size", [(1, 1), (800, 600), (1919, 1081), (300, 4000)])
def test_sizes_come_from_the_header(fmt: str, size: tuple[int, int]) -> None:
    assert image_size(encoded(*size, fmt)) == size


def test_not_an_image_has_no_size() -> None:
    assert image_size(base64.b64encode(b"%PDF-1.7 " * 100).decode()) is None
    assert image_size("not base64 at all!") is None


def test_the_providers_documented_examples() -> None:
    # Anthropic's vision guide: 200x200 ~54, 1000x1000 ~1,334, 1092x1092 ~1,590 tokens
    assert [anthropic_image_tokens(s, s) for s in (200, 1000, 1092)] == [54, 1334, 1590]
    assert anthropic_image_tokens(4000, 3000) <= 1600  # scaled down first
    # OpenAI: 1024x1024 high detail 765, 2048x4096 1,105, low detail 85
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105
    assert openai_image_tokens(4096, 4096, "low") == 85
    # Gemini: 258 at most 384 px a side, else 258 per 768-px tile
    assert gemini_image_tokens(384, 200) == 258
    assert gemini_image_tokens(1000, 1000) == 258 * 4


def screenshot_run() -> list[tc.Message]:
    body = [{"role": "user", "content": "look at the page"}]
    for k in range(6):
        content: object = "text result " * 50
        if k == 1:
            content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                     "data": encoded(600, 400, "PNG", noise=True)}}]
        body += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "shot", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]}]
    body.append({"role": "assistant", "content": "done"})
    return list(tc.load(text=json.dumps({"messages": body}), format="anthropic"))


def test_the_cost_model_bills_the_image_by_its_pixels() -> None:
    msgs = screenshot_run()
    r = tc.replay(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=10**9))
    c = tc.cost(r, "claude-sonnet-4-5")
    as_text = tc.count_tokens(msgs)[4]
    assert as_text > 50_000  # the base64, counted as text
    image = anthropic_image_tokens(600, 400)
    last = c.columns["prompt_tokens"][-1]
    assert last < sum(tc.count_tokens(msgs)) - as_text + image + 1000
    assert any("images" in a for a in c.assumptions)
    # clearing the screenshot saves its billed tokens, not its base64
    cleared = tc.cost(tc.replay(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=1)),
                      "claude-sonnet-4-5")
    assert 0 < c.columns["prompt_tokens"][-1] - cleared.columns["prompt_tokens"][-1] < image + 2_000


def pdf_b64(pages: int) -> str:
    """A real PDF of ``pages`` pages, written by Pillow."""
    buf = io.BytesIO()
    first, *rest = [Image.new("RGB", (612, 792), (255, 255, 255 - k)) for k in range(pages)]
    first.save(buf, format="PDF", save_all=True, append_images=rest)
    return base64.b64encode(buf.getvalue()).decode()


def wav_b64(seconds: float, rate: int = 16_000) -> str:
    """A real WAV file (the standard library's writer) of ``seconds`` of silence."""
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0\0" * int(seconds * rate))
    return base64.b64encode(buf.getvalue()).decode()


def mp3_b64(seconds: float) -> str:
    """Silent MPEG-1 Layer III frames at 128 kbit/s, 44.1 kHz, behind an ID3 tag."""
    frame = bytes([0xFF, 0xFB, 0x90, 0x64]) + bytes(413)  # 144 * 128000 / 44100 = 417 bytes a frame
    frames = round(seconds * 44_100 / 1152)
    tag = b"ID3\x04\x00\x00\x00\x00\x00\x0a" + bytes(10)
    return base64.b64encode(tag + frame * frames).decode()


@pytest.mark.parametrize("pages", [1, 3, 12])
def test_a_pdfs_pages_are_counted_and_billed_per_page(pages: int) -> None:
    from toolclear.cost.media import PDF_TEXT_TOKENS_PER_PAGE, media_tokens, pdf_pages

    b64 = pdf_b64(pages)
    assert pdf_pages(b64) == pages and image_size(b64) is None
    # Gemini's documentation: each document page is 258 tokens
    assert media_tokens(b64, "gemini") == 258 * pages
    # Anthropic's: each page is its text (1,500-3,000 tokens) and an image of the page
    assert media_tokens(b64, "anthropic") == pages * (PDF_TEXT_TOKENS_PER_PAGE + anthropic_image_tokens(1211, 1568))
    assert 1_500 + 1_500 <= media_tokens(b64, "anthropic") / pages <= 3_000 + 1_600


@pytest.mark.parametrize("seconds", [1.0, 7.5, 60.0])
def test_audio_is_billed_by_its_length(seconds: float) -> None:
    from toolclear.cost.media import audio_seconds, media_tokens

    for b64 in (wav_b64(seconds), mp3_b64(seconds)):
        assert audio_seconds(b64) == pytest.approx(seconds, rel=0.01)
        # Gemini's documentation: 32 tokens per second of audio
        assert media_tokens(b64, "gemini") == pytest.approx(32 * seconds, rel=0.01, abs=1)
    assert audio_seconds(base64.b64encode(b"RIFF\0\0\0\0WAVEjunk" * 40).decode()) is None


def pdf_run() -> list[tc.Message]:
    body = [{"role": "user", "content": "summarise the report"}]
    for k in range(4):
        content: object = "text result " * 50
        if k == 0:
            content = [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                        "data": pdf_b64(3)}}]
        body += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "fetch", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": content}]}]
    body.append({"role": "assistant", "content": "done"})
    return list(tc.load(text=json.dumps({"messages": body}), format="anthropic"))


def test_the_cost_model_bills_a_pdf_by_its_pages() -> None:
    from toolclear.cost.media import media_tokens

    msgs = pdf_run()
    counts = tc.count_tokens(msgs)
    r = tc.replay(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=10**9))
    import dataclasses

    c = tc.cost(r, dataclasses.replace(tc.PRICING["claude-sonnet-4-5"], token_scale=1.0))
    billed = media_tokens(pdf_b64(3), "anthropic")
    assert c.columns["prompt_tokens"][-1] == pytest.approx(sum(counts) - counts[-1] - counts[2] + billed, abs=60)
    assert any("PDFs" in a for a in c.assumptions)


def test_tokens_as_sent_count_an_image_as_billed_and_its_clearing_saves_that() -> None:
    msgs = screenshot_run()
    cal = tc.calibrate(msgs)
    image = anthropic_image_tokens(600, 400)
    assert list(cal.media) == [4] and cal.media[4] < -50_000  # its base64 was counted as text
    plain = tc.replay(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=10**9), calibration=cal)
    text = sum(tc.count_tokens(msgs)[:len(msgs) - 1])
    assert plain.steps[-1].context_tokens_unreduced == pytest.approx(text + cal.media[4], abs=5)
    assert plain.steps[-1].context_tokens_unreduced < 10_000  # not the 70,000 of its base64
    cleared = tc.replay(msgs, tc.AnthropicClearToolUsesConfig(trigger_input_tokens=0, keep_tool_uses=1),
                        calibration=cal)
    last = cleared.steps[-1]
    # what clearing saved: each cleared message as billed (the image by its pixels) less its placeholder
    want = sum(cleared.token_counts[i] + cal.media.get(i, 0) - cleared.token_counts_after[i]
               for i, at in enumerate(cleared.cleared_at) if at is not None and at <= last.call_index)
    assert cleared.cleared_at[4] is not None and last.context_tokens > 0
    assert last.context_tokens_unreduced - last.context_tokens == want
    assert image < want < image + 2_000
