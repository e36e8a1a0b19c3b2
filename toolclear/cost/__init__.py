"""What a run costs: a policy's replay priced call by call with the prompt cache, and
the log's own bill.

One public face over the modules that do it, one job each:

* ``prices``: the price lists (``Pricing``, ``PRICING``, ``pricing_for``);
* ``cache_model``: the cache model, its reference loop and its array fast path;
* ``calibration``: what the log's recorded usage says the transcript lacks;
* ``logfacts``: the facts of the log every replay of it shares (compactions, usage, times);
* ``media``: what images, PDFs and audio cost beyond their text;
* ``windows``: the models' context windows;
* ``billing``: ``cost`` and ``recorded_cost``, which put them together.
"""

from __future__ import annotations

from .billing import Cost, cost, recorded_cost
from .cache_model import CallCost
from .calibration import Calibration, calibrate
from .prices import PRICING, Pricing, pricing_for
from .windows import CONTEXT_WINDOWS, context_window, run_context_window, run_model

__all__ = ["CONTEXT_WINDOWS", "PRICING", "Calibration", "CallCost", "Cost", "Pricing", "calibrate",
           "context_window", "cost", "pricing_for", "recorded_cost", "run_context_window", "run_model"]
