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
from toolclear.media import anthropic_image_tokens, gemini_image_tokens, image_size, openai_image_tokens


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
