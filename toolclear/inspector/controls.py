"""The One run page's policy controls, read from the registry: the picker, the two
main numbers as slider pairs sized to the transcript, the other options in an expander,
offloading for a policy that takes it, the token counter. No policy is named here: a
plugin's policy gets the same controls as a built-in one."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import fields, replace
from typing import Any

import streamlit as st

import toolclear as tc
from toolclear._kept import KeptFor
from toolclear.counters import DEFAULT_COUNTER
from toolclear.inspector.widgets import md, plural, safe, slider_pair, store
from toolclear.policies import Knob, preset_named, registered
from toolclear.policies._spec import default_knobs
from toolclear.runs import lab, report
from toolclear.runs.numbers import nice_ceil
from toolclear.runs.sweep import unit_sizes

__all__ = ["current_policy", "knobs_for", "pick_counter", "policy_choices", "policy_help", "render_offloading",
           "sent_calibration", "sizes_of", "widget_key"]


def policy_choices() -> dict[str, str]:
    """The sidebar's policy picker: label -> the name ``lab.parse_policy`` takes, read
    from the registry each time (a policy registered since is there): a policy with
    named presets is picked by them."""
    choices: dict[str, str] = {}
    for spec in registered():
        for preset in spec.presets[1:] or spec.presets:
            choices.setdefault(preset.label, preset.name)
    return choices


def policy_help(kind: str) -> str:
    return preset_named(kind)[1].help


def knobs_for(kind: str) -> tuple[Knob, ...]:
    """The sliders of a policy (or preset) by name: its knobs, else its whole numbers."""
    spec, preset = preset_named(kind)
    return preset.knobs or default_knobs(spec.config)


def widget_key(kind: str, field: str) -> str:
    """The session-state key of one of a policy's controls."""
    return f"p_{kind.replace('-', '_')}_{field}"


def sizes_of(t: tc.Transcript, counter: str) -> dict[str, int]:
    """What each kind of knob can range over on this conversation (keyed by
    ``SliderUnit``): several passes over it, so worked out once per conversation and
    counter, not on every slider move."""
    memo = st.session_state.get("_policy_sizes")
    if memo is not None and memo[0] is t and memo[1] == counter:
        return dict(memo[2])
    sizes = unit_sizes(t.messages, counter)
    st.session_state["_policy_sizes"] = (t, counter, sizes)
    return dict(sizes)


def _top(unit: str, size: int) -> tuple[int, int]:
    if unit.endswith("tokens"):
        top = nice_ceil(max(1000, size * 1.1))
        return top, max(1, nice_ceil(top / 200))
    return max(5, size + 1), 1


def _set_defaults(kind: str) -> None:
    base = lab.parse_policy(kind)
    for knob in knobs_for(kind):
        store(widget_key(kind, knob.field), int(getattr(base, knob.field)))
    for name in list(st.session_state):
        if str(name).startswith(widget_key(kind, "opt_")):
            del st.session_state[name]


def _knobs(kind: str, base: Any, t: tc.Transcript, counter: str) -> dict[str, int]:
    sizes = sizes_of(t, counter)
    knobs = knobs_for(kind)
    cols = st.columns(2)
    values = {}
    for col, knob in zip(cols, knobs):
        top, step = _top(knob.unit, sizes[knob.unit])
        values[knob.field] = slider_pair(col, widget_key(kind, knob.field), knob.label, top, step, knob.help,
                                         int(getattr(base, knob.field)))
    defaults = ", ".join(f"{int(getattr(base, k.field)):,}" for k in knobs)
    cols[0].button(f"Defaults of the reference ({defaults})" if defaults else "Defaults of the reference",
                   key=widget_key(kind, "defaults"), on_click=_set_defaults, args=(kind,),
                   help="Back to the numbers the reference itself uses.")
    shown = {"tokens": "tokens in all", "tool_tokens": "tool-result tokens", "lc_tokens": "tokens (the policy's own "
             "count)", "rd_tokens": "tokens (the policy's own counter)"}
    counts = ", ".join(f"{sizes[k.unit]:,} {shown.get(k.unit, k.unit)}" for k in knobs if k.unit != "steps")
    cols[-1].caption(f"This conversation: {counts}. {policy_help(kind)}" if counts else policy_help(kind))
    return values


def _tool_choice(t: tc.Transcript, key: str, label: str, help_text: str | None) -> tuple[str, ...]:
    """The run's tool names, the most used first, with how many results each has; a
    choice kept from another file that this one lacks is dropped."""
    tools = _tools_kept.get(t.messages, lambda: Counter(m.tool_name for m in t.messages
                                                        if m.role == "tool" and m.tool_name))
    if key in st.session_state:
        st.session_state[key] = [n for n in st.session_state[key] if n in tools]
    return tuple(st.multiselect(
        label, sorted(tools, key=lambda n: (-tools[n], n)), key=key, help=help_text,
        format_func=lambda n: f"{report.visible(safe(n)) or '(unnamed)'} ({plural(tools[n], 'result')})"))


_tools_kept: KeptFor[Counter[str]] = KeptFor(4)
"""A run's tool names and their results, counted once (every slider move asks)."""


def _options(kind: str, base: Any, t: tc.Transcript) -> tuple[dict[str, Any], bool]:
    """The policy's other options, as its spec lists them; returns them and whether a
    backend saves files."""
    out: dict[str, Any] = {}
    options = preset_named(kind)[0].options
    files = False
    with st.expander("More options", expanded=False):
        for o in options:
            key = widget_key(kind, o.key or f"opt_{o.field}")
            help_text = o.help or None
            if o.kind == "saves_files":
                files = st.toggle(o.label, value=True, key=key, help=help_text)
                out[o.field] = not files
            elif o.kind in ("number", "number_or_none"):
                n = int(st.number_input(o.label, 0, None, int(getattr(base, o.field) or 0), 1000, key=key,
                                        help=help_text, disabled=o.needs_files and not files))
                out[o.field] = (n or None) if o.kind == "number_or_none" else n
            elif o.kind == "tools":
                out[o.field] = _tool_choice(t, key, o.label, help_text)
            elif o.kind == "toggle":
                out[o.field] = st.toggle(o.label, value=bool(getattr(base, o.field)), key=key, help=help_text)
            elif o.kind == "json":  # the framework's own form, read by the config
                out[o.field] = st.text_input(o.label, json.dumps(base.spec_value(o.field)), key=key, help=help_text)
            else:
                out[o.field] = st.text_input(o.label, str(getattr(base, o.field)), key=key, help=help_text)
        if not options:
            st.caption("This policy has no other options.")
    return out, files


def current_policy(kind: str, t: tc.Transcript, counter: str) -> tuple[Any, bool]:
    """The config the controls set (the picked counter in it, where the policy counts
    with one of its own) and whether a backend saves its files."""
    base: Any = lab.parse_policy(kind)
    values = _knobs(kind, base, t, counter)
    options, files = _options(kind, base, t)
    own_counter = preset_named(kind)[0].aliases.get("counter")
    if own_counter in {f.name for f in fields(base)}:
        options[own_counter] = counter
    return replace(base, **values, **options), files


def pick_counter() -> str:
    """The counter select box; an unavailable choice falls back to the default, and says so."""
    infos = _counter_infos()
    by_name = {c.name: c for c in infos}
    if st.session_state.counter not in by_name:
        st.session_state.counter = DEFAULT_COUNTER
    st.sidebar.selectbox(
        "Token counter", [c.name for c in infos], key="counter",
        format_func=lambda n: n + ("" if by_name[n].available else " (not here)"),
    )
    chosen = by_name[st.session_state.counter]
    if chosen.available:
        st.sidebar.caption(md(chosen.label))
        return chosen.name
    st.sidebar.warning(f"{md(chosen.name)} is not available here: {md(chosen.reason)}. Counting with the "
                       f"{DEFAULT_COUNTER} count instead.")
    return DEFAULT_COUNTER


@st.cache_data(ttl=600, show_spinner=False)
def _counter_infos() -> list[tc.CounterInfo]:
    return list(tc.list_counters())


def render_offloading(counter: str) -> tc.ToolResultOffloadingConfig | None:
    """Offloading, for a policy that takes it: the sidebar's switch, limit and read tool."""
    st.sidebar.header("Offloading")
    st.sidebar.toggle("Offload too-large results first", key="offload_on")
    if not st.session_state.offload_on:
        return None
    st.sidebar.number_input("Offloading token limit", 0, None, step=1000, key="offload_limit")
    st.sidebar.text_input("Read tool named in the notice", key="read_tool")
    offloading = tc.ToolResultOffloadingConfig(
        offloading_token_limit=int(st.session_state.offload_limit),
        read_file_tool_name=st.session_state.read_tool,
        token_counter=counter,
    )
    st.sidebar.caption(offloading.trigger_note())
    return offloading


def sent_calibration(t: tc.Transcript, counter: str) -> tc.Calibration | None:
    """The run's calibration as the CLI, compare and the corpus take it (``lab.sent_as``,
    kept per transcript and counter by ``toolclear.calibrate`` itself)."""
    return lab.sent_as(t.messages, counter)
