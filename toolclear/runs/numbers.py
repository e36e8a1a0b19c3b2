"""Round numbers, as a person would type them: the slider ranges, the sweep grids and
the settings the verdict scales, computed one way everywhere."""

from __future__ import annotations

import math

__all__ = ["grid_values", "nice", "nice_ceil", "spread"]


def nice_ceil(value: float) -> int:
    """The next 'round' number at or above value: 1, 2, 2.5 or 5 x a power of ten."""
    if value <= 0:
        return 0
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= value:
            return int(math.ceil(m * exp))
    return int(10 * exp)  # pragma: no cover


_NICE: tuple[float, ...] = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8, 10)


def nice(value: float) -> int:
    """The round number nearest to value (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5 or 8 x 10^k)."""
    if value < 1:
        return 0
    exp = 10.0 ** math.floor(math.log10(value))
    candidates: list[float] = [m * exp for m in _NICE]
    nearest = min(candidates, key=lambda v: abs(v - value))
    return round(nearest)


def spread(a: int, b: int, n: int) -> list[int]:
    """n values from a to b, both included, as a person would type them: round numbers
    spaced evenly on a log scale from a > 0 (5,000:40,000:4 gives 5,000, 10,000, 20,000,
    40,000), evenly from 0 (0:40,000:5 gives 0, 10,000, 20,000, 30,000, 40,000); fewer
    when rounding makes two equal."""
    if n <= 1 or a == b:
        return [a]
    lo, hi = min(a, b), max(a, b)
    if lo > 0:
        raw = [lo * (hi / lo) ** (k / (n - 1)) for k in range(n)]
    else:
        raw = [lo + (hi - lo) * k / (n - 1) for k in range(n)]
    inner = [nice(v) if lo <= nice(v) <= hi else round(v) for v in raw[1:-1]]
    return sorted({lo, hi, *inner})


def grid_values(limit: int, n: int = 10, *, zero: bool = False) -> list[int]:
    """Round values (a 1, 2, 2.5 or 5 x 10^k step) strictly below ``limit``: between
    n/2 and n of them, from the step (or from 0 with ``zero``).

    The limit is the first value at which nothing more happens (a threshold at the
    transcript's tool-result total never triggers; a keep budget at its total keeps
    everything), so the grid never runs into blank cells past it.
    """
    if limit <= 1:
        return [0]
    step = max(1, nice_ceil(limit / n))
    first = 0 if zero else 1
    values = [step * i for i in range(first, n + 1) if step * i < limit]
    return values or [0]
