"""Prices: what a model's tokens cost, from a maintained price library or the presets.

``pricing_for(model)`` takes the model's prices from ``genai-prices`` (the library
pydantic-ai uses: about 2,300 models, long-context tiers, 1-hour cache writes, batch
prices, kept up to date by its maintainers) when it is installed
(``pip install 'toolclear[prices]'``), and the cache mechanics (the cache's kind, its
minimum length and life, the tokenizer's scale) from the preset of the same model, or
its provider's. Without the library, or for a model it does not know, the presets in
``toolclear/data/pricing.json`` are the offline fallback: each names the date and page
its numbers come from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

from ..errors import ConfigError

__all__ = ["MAX_PRICE", "PRICING", "CacheKind", "Pricing", "pricing_for", "resolve"]

CacheKind = Literal["anthropic", "openai", "gemini", "none"]
CACHE_KINDS: tuple[CacheKind, ...] = ("anthropic", "openai", "gemini", "none")

MAX_PRICE = 100_000.0
"""The most a price may be, in dollars per million tokens: past it a number is a typo (and
would overflow the sums into inf / nan)."""


@dataclass(frozen=True)
class Pricing:
    """US dollars per million tokens, and how the provider caches."""

    input: float
    output: float
    cache_write: float = 0.0
    cache_read: float = 0.0
    cache: CacheKind = "anthropic"
    ttl_seconds: int = 300
    min_cacheable: int = 1024
    overhead_tokens: int = 0
    """Tokens every call sends that the transcript does not hold (system prompt, tool schemas)."""
    name: str = "custom"
    model: str = ""
    as_of: str = ""
    source: str = ""
    cache_write_1h: float | None = None
    aliases: tuple[str, ...] = ()
    """Other model names billed at these prices (``pricing_for`` matches them too)."""
    token_scale: float = 1.0
    """The provider's tokens per counted token, before calibration (Claude's tokenizer
    gives about a third more than bytes / 4 on code and logs)."""
    long_context_from: int = 0
    """A call whose prompt holds more input tokens than this pays the ``long`` prices
    for all its tokens (Anthropic's and Gemini's long-context tier; 0: no tier)."""
    long: tuple[float, float, float, float, float | None] | None = None
    """The long-context tier's (input, output, cache write, cache read, 1-hour cache write)."""

    def __post_init__(self) -> None:
        prices = [(f, getattr(self, f)) for f in ("input", "output", "cache_write", "cache_read")]
        if self.cache_write_1h is not None:
            prices.append(("cache_write_1h", self.cache_write_1h))
        if self.long is not None:
            if not isinstance(self.long, tuple) or len(self.long) != 5:
                raise ConfigError("pricing long: expected (input, output, cache write, cache read, 1-hour write)")
            prices += [(f"long {f}", v) for f, v in zip(("input", "output", "cache_write", "cache_read",
                                                         "cache_write_1h"), self.long) if v is not None]
        for f, v in prices:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= MAX_PRICE:
                raise ConfigError(f"pricing {f}: expected dollars per million tokens from 0 to {MAX_PRICE:,.0f}, "
                                  f"got {v!r}")
        if self.cache not in ("anthropic", "openai", "gemini", "none"):
            raise ConfigError(f"pricing cache: expected anthropic, openai, gemini or none, got {self.cache!r}")
        for f in ("ttl_seconds", "min_cacheable", "overhead_tokens", "long_context_from"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10**15:
                raise ConfigError(f"pricing {f}: expected a whole number from 0 to 10**15, got {v!r}")

    def with_ttl_1h(self) -> Pricing:
        """Anthropic's 1-hour cache: a longer life at the higher write price."""
        write = self.cache_write_1h if self.cache_write_1h is not None else 2 * self.input
        long = self.long
        if long is not None:
            long = (long[0], long[1], long[4] if long[4] is not None else 2 * long[0], long[3], long[4])
        return replace(self, ttl_seconds=3600, cache_write=write, long=long)

    def batch(self) -> Pricing:
        """The same model through the provider's batch API: Anthropic, OpenAI and Google
        bill batch requests at half price (``pricing_for(model, batch=True)`` takes the
        price library's own batch figures where it has them)."""
        def half(v: float | None) -> float | None:
            return None if v is None else v / 2
        long = None if self.long is None else (
            self.long[0] / 2, self.long[1] / 2, self.long[2] / 2, self.long[3] / 2, half(self.long[4]))
        return replace(self, input=self.input / 2, output=self.output / 2, cache_write=self.cache_write / 2,
                       cache_read=self.cache_read / 2, cache_write_1h=half(self.cache_write_1h), long=long,
                       name=f"{self.name} (batch)")

    def for_prompt(self, prompt_tokens: int) -> Pricing:
        """The prices a call of ``prompt_tokens`` input tokens pays: the long-context
        tier's past its threshold (for all of its tokens, as the providers bill it)."""
        if self.long is None or not self.long_context_from or prompt_tokens <= self.long_context_from:
            return self
        i, o, w, r, w1 = self.long
        return replace(self, input=i, output=o, cache_write=w, cache_read=r,
                       cache_write_1h=w1 if w1 is not None else self.cache_write_1h, long=None, long_context_from=0)

    def dollars(self, uncached: float, write: float, read: float, output: float) -> float:
        return (uncached * self.input + write * self.cache_write + read * self.cache_read
                + output * self.output) / 1e6


@cache
def _presets() -> dict[str, Pricing]:
    data = json.loads(resources.files("toolclear").joinpath("data/pricing.json").read_text("utf-8"))
    out = {}
    for name, d in data["presets"].items():
        fields_ = {k: v for k, v in d.items() if k in Pricing.__dataclass_fields__}
        fields_["aliases"] = tuple(fields_.get("aliases", ()))
        out[name] = Pricing(name=name, **fields_)
    return out


class _Presets(Mapping[str, Pricing]):
    """Named presets from ``toolclear/data/pricing.json``, read on first use."""

    def __getitem__(self, key: str) -> Pricing:
        try:
            return _presets()[key]
        except KeyError:
            raise ConfigError(f"no pricing preset {key!r}; presets: {', '.join(_presets())}") from None

    def __iter__(self) -> Any:
        return iter(_presets())

    def __contains__(self, key: object) -> bool:
        return key in _presets()

    def __len__(self) -> int:
        return len(_presets())


PRICING: Mapping[str, Pricing] = _Presets()


def _model_key(model: str) -> str:
    """A model name as presets are keyed: lower case, no provider prefix (``anthropic/``,
    ``models/``), dots as dashes (``claude-sonnet-4.5``), no date or version suffix."""
    import re

    name = model.strip().lower().rsplit("/", 1)[-1].split("@", 1)[0].replace(".", "-").replace("_", "-")
    name = re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest|preview[\w-]*|v\d+(:\d+)?)$", "", name)
    return name


def _preset_for(model: str) -> Pricing | None:
    key = _model_key(model)
    for name, p in _presets().items():
        if key in (_model_key(name), _model_key(p.model), *map(_model_key, p.aliases)):
            return p
    return None


def pricing_for(model: str, *, batch: bool = False) -> Pricing:
    """The prices of the model a log names (``claude-sonnet-4-5-20250929``,
    ``anthropic/claude-opus-4-1``, ``gemini-2.5-pro-preview-06-05``): from the price
    library when it knows the model, else the preset whose name it is once its
    provider prefix and date suffix are taken off. ``batch``: through the provider's
    batch API. A model neither covers is refused in one line, never guessed from a
    similar name."""
    if not isinstance(model, str) or not _model_key(model):
        raise ConfigError("pricing_for: the log names no model; pick a pricing preset")
    found = _library_pricing(model.strip(), batch)
    if found is not None:
        return found
    preset = _preset_for(model)
    if preset is not None:
        return preset.batch() if batch else preset
    raise ConfigError(f"pricing_for: no price for model {model!r} in genai-prices"
                      f"{'' if _library() is not None else ' (not installed)'} nor in the presets: "
                      f"{', '.join(_presets())}")


def _library() -> Any:
    """genai-prices' bundled snapshot, or None when it is not installed."""
    try:
        from genai_prices import data_snapshot
    except ImportError:
        return None
    return data_snapshot.get_snapshot()


def load_library() -> None:
    """Import the price library now (0.15 s): for a caller that would otherwise wait
    on others, such as a listing whose worker processes are reading the logs."""
    _library()


def _split(value: Any) -> tuple[float | None, int, float | None]:
    """A genai-prices price: (base, the tier's threshold or 0, the tier's price)."""
    if value is None:
        return None, 0, None
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return float(value), 0, None
    first = min(tiers, key=lambda t: t.start) if tiers else None
    return float(value.base), (first.start if first else 0), (float(first.price) if first else None)


_PROVIDER_CACHE: dict[str, CacheKind] = {"anthropic": "anthropic", "openai": "openai", "google": "gemini"}
_CACHE_DEFAULTS: dict[CacheKind, dict[str, Any]] = {
    # a model no preset names: its provider's documented defaults (Anthropic: 1,024 tokens
    # for most models, a 5-minute life; OpenAI: from 1,024 tokens, 5-10 minutes idle;
    # Gemini's implicit cache: from 1,024 tokens)
    "anthropic": {"ttl_seconds": 300, "min_cacheable": 1024, "token_scale": 1.35},
    "openai": {"ttl_seconds": 600, "min_cacheable": 1024, "token_scale": 1.0},
    "gemini": {"ttl_seconds": 300, "min_cacheable": 1024, "token_scale": 1.0},
    "none": {},
}


@lru_cache(maxsize=512)
def _library_pricing(model: str, batch: bool) -> Pricing | None:
    """The model's prices from genai-prices (None: not installed, or no such model),
    with the cache mechanics of its preset, or of its provider's first preset."""
    snapshot = _library()
    if snapshot is None:
        return None
    for ref in dict.fromkeys((model, model.rsplit("/", 1)[-1])):  # with and without a provider prefix
        try:
            provider, info = snapshot.find_provider_model(ref, None, None, None)
            break
        except LookupError:
            continue
    else:
        return None
    now = datetime.now(timezone.utc)
    prices = info.get_prices(now, {"processing": "batch"} if batch else None)
    (inp, t_in, long_in), (out, _, long_out) = _split(prices.input_mtok), _split(prices.output_mtok)
    (write, _, long_w), (read, _, long_r) = _split(prices.cache_write_mtok), _split(prices.cache_read_mtok)
    write_1h, _, long_w1 = _split(getattr(prices, "cache_write_1h_mtok", None))
    if inp is None or out is None:
        return None  # priced per request or per character: not by tokens
    kind = _PROVIDER_CACHE.get(provider.id, "openai" if read is not None else "none")
    like = _preset_for(model) or _preset_for(info.id)
    mechanics: dict[str, Any] = dict(_CACHE_DEFAULTS[kind]) if like is None else {
        "ttl_seconds": like.ttl_seconds, "min_cacheable": like.min_cacheable, "token_scale": like.token_scale}
    long = None
    if t_in and long_in is not None:
        long = (long_in, long_out if long_out is not None else out, long_w if long_w is not None else write or 0.0,
                long_r if long_r is not None else read or 0.0, long_w1)
    from importlib.metadata import version

    made = Pricing(
        input=inp, output=out, cache_write=write or 0.0, cache_read=read or 0.0, cache=kind,
        cache_write_1h=write_1h, name=info.id + (" (batch)" if batch else ""), model=info.id,
        source=f"genai-prices {version('genai-prices')} (its bundled prices; nothing is fetched)",
        long_context_from=t_in if long else 0, long=long, **mechanics)
    if batch and prices == info.get_prices(now):
        # the library has no batch figures for it: the providers' half price
        return replace(made, name=info.id).batch()
    return made




def resolve(pricing: Pricing | str) -> Pricing:
    """A ``Pricing`` as given, or by name: a preset's, else a model's (``pricing_for``),
    so ``--pricing gpt-4o-mini`` works for any model the price library knows."""
    if not isinstance(pricing, str):
        return pricing
    if pricing in PRICING:
        return PRICING[pricing]
    try:
        return pricing_for(pricing)
    except ConfigError:
        raise ConfigError(f"no pricing preset {pricing!r}, nor a model the price library knows; presets: {', '.join(_presets())}") from None
