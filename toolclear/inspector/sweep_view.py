"""The Parameter sweep view: the policy's two main numbers over a grid sized to the run,
each cell a row of ``toolclear.compare`` (``runs.sweep``): tokens saved, cache breaks,
results needed later and dollars, the user's setting starred."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

import toolclear as tc
from toolclear.inspector import charts
from toolclear.inspector.controls import knobs_for, policy_help, sizes_of
from toolclear.inspector.shown import Shown
from toolclear.inspector.widgets import md
from toolclear.runs import report
from toolclear.runs.numbers import grid_values
from toolclear.runs.sweep import Sweep, sweep

__all__ = ["render_sweep"]

HEAVY = 3000
"""Past this many messages a replay sweep waits for a click."""


@st.cache_resource(max_entries=16, show_spinner="Sweeping…")
def _sweep(key: tuple[Any, ...], _view: Shown, fields: tuple[str | None, str], ys: tuple[int, ...],
           xs: tuple[int, ...]) -> Sweep:
    view = _view
    return sweep(view.t.messages, view.config, ys, xs, fields=fields, mode=view.mode, counter=view.counter,
                 pricing=view.pricing if view.mode == "replay" else None, calibrate=view.calibrate,
                 compactions=view.marks, offloading=view.offloading)


def _axis(unit: str, size: int, current: int) -> tuple[int, ...]:
    if unit.endswith("tokens"):
        return tuple(grid_values(max(size, 2), zero=True))
    if unit == "steps":
        return (1, 2, 3, 5, 8, 10)
    top = max(size, current, 1)
    step = max(1, -(-top // 8))
    return tuple(range(0, top + 1, step))[:10]


def _takes(config: Any, field: str, value: int) -> bool:
    try:
        replace(config, **{field: value})
    except tc.ConfigError:
        return False
    return True


def render_sweep(view: Shown) -> None:
    knobs = knobs_for(view.kind)
    if not knobs:
        st.info("This policy has no number to sweep: the Replay and Compare views show what it does.")
        return
    config, sizes = view.config, sizes_of(view.t, view.counter)
    kx = knobs[-1]
    ky = knobs[0] if len(knobs) > 1 else None
    # only values the policy takes (a trigger of 0 characters is refused by its own checks)
    xs = tuple(v for v in _axis(kx.unit, sizes[kx.unit], getattr(config, kx.field)) if _takes(config, kx.field, v))
    ys = (tuple(v for v in _axis(ky.unit, sizes[ky.unit], getattr(config, ky.field)) if _takes(config, ky.field, v))
          if ky is not None else (0,))
    n = len(view.t.messages)
    if n > HEAVY and view.mode == "replay" and not st.session_state.get("sweep_go"):
        st.info(f"A replay sweep runs {len(xs) * len(ys)} replays of {n:,} messages.")
        st.button("Compute the replay sweep", key="sweep_go_button",
                  on_click=lambda: st.session_state.__setitem__("sweep_go", True))
        return
    fields = (ky.field if ky is not None else None, kx.field)
    others = tuple(sorted((k, repr(v)) for k, v in report.policy_options(config).items() if k not in fields))
    key = (view.digest, view.t.id, view.kind, others, view.mode, view.counter, view.files, view.offloading,
           view.pricing, view.calibrate, xs, ys)
    sw = _sweep(key, view, fields, ys, xs)
    current = (int(getattr(config, ky.field)) if ky is not None else 0, int(getattr(config, kx.field)))
    axes = (kx.label, ky.label if ky is not None else "")
    cols = st.columns(2)
    with cols[0]:
        st.plotly_chart(charts.heatmap_figure(sw, "tokens_saved", current, axes=axes), key="sweep_saved",
                        config={"displaylogo": False})
    with cols[1]:
        what = "cache_breaks" if sw.cache_breaks is not None else "cleared"
        st.plotly_chart(charts.heatmap_figure(sw, what, current, axes=axes), key="sweep_second",
                        config={"displaylogo": False})
    if sw.needed is not None:
        cols = st.columns(2)
        with cols[0]:
            st.plotly_chart(charts.heatmap_figure(sw, "needed", current, axes=axes), key="sweep_needed",
                            config={"displaylogo": False})
        cols[1].caption("Beside what each setting saves, what it loses: how many of the results it changed the "
                        "agent's later replies used (by name, from results only the changed copy held). A "
                        "setting that saves much but loses many makes the agent re-read, or guess.")
    if sw.dollars_saved is not None and view.pricing is not None:
        st.plotly_chart(charts.heatmap_figure(sw, "dollars_saved", current, axes=axes), key="sweep_dollars",
                        config={"displaylogo": False})
        losing = sum(1 for row in sw.dollars_saved for v in row if v < 0)
        st.caption(f"Dollars saved over the run at {md(view.pricing.name)} prices, with the prompt cache: red cells "
                   f"cost more than doing nothing ({losing} of {len(xs) * len(ys)}); the black line is the "
                   "break-even. Each cell is priced as the verdict and the Compare view price it.")
    st.caption(f"Each cell runs the policy with those numbers; the star is your setting. {policy_help(view.kind)}")
    if view.mode == "replay":
        st.caption("Replay: input tokens saved over all model calls, and how often the policy broke the prompt "
                   "cache (each break re-sends the rest of the prompt uncached).")
    else:
        st.info("Single pass shows only what the final history saves, so a smaller budget always looks better. "
                "Set **Mode** to *replay* in the sidebar to see the trade-off: each change that reaches what an "
                "earlier call sent breaks the prompt cache.")
