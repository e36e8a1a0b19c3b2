"""Prices from the maintained price library (genai-prices), checked against the library
itself: what it bills for the usage a real log recorded is what toolclear prices."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import toolclear as tc
from toolclear.cost import prices

from ..conftest import CORPUS_FILES, corpus_id

genai_prices = pytest.importorskip("genai_prices")  # pinned in requirements-dev: present in CI
SNAPSHOT = genai_prices.data_snapshot.get_snapshot()

CLAUDE = [p for p in CORPUS_FILES if p.parent.name == "claude_code"]


def _library_bill(path) -> float:
    """genai-prices' own total for the log: its usage extractor on each call's raw
    response (the last streamed line of each message id), priced by the library."""
    last = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        if (isinstance(rec, dict) and rec.get("type") == "assistant" and isinstance(msg, dict)
                and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>"
                and not rec.get("isSidechain")):
            last[msg.get("id") or len(last)] = msg
    total = Decimal(0)
    for msg in last.values():
        total += SNAPSHOT.extract_usage(msg, provider_id="anthropic").calc_price().total_price
    return float(total)


@pytest.mark.parametrize("path", CLAUDE, ids=corpus_id)
def test_recorded_cost_is_what_the_price_library_bills(path) -> None:
    t = tc.load_all(path)[0]
    want = _library_bill(path)
    got = tc.recorded_cost(t.messages).dollars  # each call at its own model's prices
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gemini-2.5-pro"])
@pytest.mark.parametrize("batch", [False, True])
def test_a_call_past_the_long_context_threshold_pays_the_tier_for_all_its_tokens(model, batch) -> None:
    p = tc.pricing_for(model, batch=batch)
    assert p.long is not None and p.long_context_from == 200_000
    context = {"processing": "batch"} if batch else None
    for prompt in (150_000, 200_000, 200_001, 450_000):
        read = prompt // 2
        usage = tc.Usage(input_tokens=prompt - read, cache_read_tokens=read, output_tokens=2_000, model=model)
        got = tc.recorded_cost([tc.Message("user", "q"), tc.Message("assistant", "a", usage=usage)], p).dollars
        want = genai_prices.calc_price(genai_prices.Usage(input_tokens=prompt, cache_read_tokens=read,
                                                          output_tokens=2_000), model, price_context=context)
        assert got == pytest.approx(float(want.total_price), rel=1e-9), prompt


def test_batch_prices_are_the_librarys_and_half_where_it_has_none() -> None:
    for model in ("claude-opus-4-6", "gpt-4o", "gemini-2.5-flash"):
        p, b = tc.pricing_for(model), tc.pricing_for(model, batch=True)
        u = genai_prices.Usage(input_tokens=1_000_000, output_tokens=1_000_000)
        want = genai_prices.calc_price(u, model, price_context={"processing": "batch"}).total_price
        assert b.input + b.output == pytest.approx(float(want))
        assert b.input < p.input and b.name.endswith("(batch)")
    custom = tc.Pricing(input=4.0, output=8.0, cache_write=5.0, cache_read=0.4, cache_write_1h=8.0).batch()
    assert (custom.input, custom.output, custom.cache_write, custom.cache_read, custom.cache_write_1h) == (
        2.0, 4.0, 2.5, 0.2, 4.0)


def test_models_no_preset_names_are_priced_with_their_providers_cache() -> None:
    mini = tc.pricing_for("gpt-4o-mini")
    assert mini.source.startswith("genai-prices") and mini.cache == "openai" and mini.min_cacheable == 1024
    opus4 = tc.pricing_for("anthropic/claude-opus-4-20250514")
    assert (opus4.input, opus4.output, opus4.cache) == (15.0, 75.0, "anthropic")
    assert opus4.min_cacheable == 1024  # Opus 4's, not the 4,096 of the newer Opus presets
    lite = tc.pricing_for("gemini-2.5-flash-lite")
    assert lite.input == 0.1 and lite.cache == "gemini"
    with pytest.raises(tc.ConfigError, match="no price for model 'gpt-99-turbo'"):
        tc.pricing_for("gpt-99-turbo")
    assert "x" not in tc.PRICING and "gpt-5" in tc.PRICING


def test_without_the_library_the_presets_answer_and_name_their_date(monkeypatch) -> None:
    monkeypatch.setattr(prices, "_library", lambda: None)
    prices._library_pricing.cache_clear()
    try:
        p = tc.pricing_for("claude-opus-4-6-20260101")
        assert p is tc.PRICING["claude-opus-4-6"] and p.as_of and p.source.startswith("https://")
        with pytest.raises(tc.ConfigError, match=r"\(not installed\)"):
            tc.pricing_for("gpt-4o-mini")
    finally:
        prices._library_pricing.cache_clear()


def test_cost_prices_long_prompts_at_the_tier() -> None:
    tier = tc.Pricing(input=1.0, output=2.0, cache_write=1.25, cache_read=0.1, cache="anthropic", min_cacheable=100,
                      long_context_from=3_000, long=(2.0, 3.0, 2.5, 0.2, None))
    msgs = []
    for _ in range(4):
        msgs += [tc.Message("user", "x" * 4 * 1_000), tc.Message("assistant", "ok")]
    c = tc.cost(tc.replay(msgs, tc.ClearToolResultConfig(10**9, 10**9)), tier)
    for r in c.calls:
        p = tier.for_prompt(r.prompt_tokens)
        assert (p.input == 2.0) == (r.prompt_tokens > 3_000)
        assert r.input_dollars == pytest.approx(p.dollars(r.uncached_tokens, r.cache_write_tokens,
                                                           r.cache_read_tokens, 0))
    assert any(r.prompt_tokens > 3_000 for r in c.calls) and any(r.prompt_tokens <= 3_000 for r in c.calls)


def test_cli_prices_a_model_and_takes_it_as_pricing(tmp_path) -> None:
    from ..cli.test_cli import run as cli

    code, raw, err = cli("prices", "claude-sonnet-4-5", "gpt-4o-mini")
    out = raw.decode()
    assert code == 0 and "gpt-4o-mini" in out and "past 200,000 input tokens" in out, err
    code, _, err = cli("prices", "nope-model")
    assert code == 2 and err.count("\n") == 1 and "nope-model" in err
    sample = sorted(p for p in CLAUDE if "2.1.31" in p.name)[0]
    code, _, err = cli("reduce", str(sample), "--pricing", "gpt-4o-mini", "--replay", "-o", str(tmp_path / "o.jsonl"))
    assert code == 0 and "gpt-4o-mini" in err, err


def test_cost_without_pricing_takes_the_logs_model() -> None:
    path = sorted(p for p in CLAUDE if "2.1.31" in p.name)[0]
    t = tc.load_all(path)[0]
    rp = tc.replay(t.messages, tc.ClearToolResultConfig())
    assert tc.cost(rp, calibrate=True).dollars == tc.cost(rp, tc.pricing_for(tc.run_model(t.messages)),
                                                          calibrate=True).dollars
    with pytest.raises(tc.ConfigError, match="names no model"):
        tc.cost(tc.replay([tc.Message("user", "q"), tc.Message("assistant", "a")], tc.ClearToolResultConfig()))
