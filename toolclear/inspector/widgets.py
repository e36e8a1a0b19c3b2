"""Small Streamlit helpers the inspector's views share: escaping, numbers, slider pairs."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from toolclear import report

__all__ = ["compact", "md", "plural", "safe", "short", "slider_pair", "sync"]

safe = report.display_text

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=\"'])")


_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?=@)")
_WORD_JOINER = "\u2060"


def md(text: object) -> str:
    """Escape every markdown and HTML character of untrusted text for st.markdown & co.

    Escapes alone do not stop GitHub-flavoured autolinks (they are found in the text
    after escapes are resolved), so an invisible word joiner goes into every ``www.``,
    ``://`` and ``@``: a URL or e-mail address in a file name shows as text, not a link."""
    flat = _AUTOLINK.sub(_WORD_JOINER, " ".join(safe(str(text)).split()))
    return _MD_SPECIAL.sub(r"\\\1", flat)



def sync(src: str, dst: str) -> None:
    value = st.session_state[src]
    if dst.endswith("_slider"):  # an exact value past the slider's range puts the thumb at its end
        value = min(int(value), int(st.session_state.get(f"_{dst.removesuffix('_slider')}_range", value)))
    st.session_state[dst] = value


def short(text: str, width: int) -> str:
    """text cut in the middle to fit a narrow select box (the whole of it is said below)."""
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return text[:half] + "…" + text[-(width - 1 - half):]


def compact(n: int) -> str:
    """n with thousands separators, or in millions/billions past 100 million (sums over
    every call of a long run reach ten digits, too wide for a metric on a laptop)."""
    if abs(n) >= 1_000_000_000:
        return f"{n / 1e9:,.2f} B"
    if abs(n) >= 100_000_000:
        return f"{n / 1e6:,.1f} M"
    return f"{n:,}"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def slider_pair(where: Any, name: str, label: str, top: int, step: int, help: str) -> None:
    """A slider sized to the transcript and an exact number input, kept in step.

    A slider whose range changes is a new widget to Streamlit, so its value is set again
    from the number input (the source of truth) whenever the range changes."""
    slider, exact, marker = f"{name}_slider", f"{name}_input", f"_{name}_range"
    # the slider spans what this conversation holds, so its useful range is all of it; a
    # larger exact value (eino's 20,000 on a small run) sits at the slider's end
    if st.session_state.get(marker) != top:
        st.session_state[marker] = top
        st.session_state[slider] = min(int(st.session_state[exact]), top)
    where.slider(label, 0, top, step=1, key=slider, on_change=sync, args=(slider, exact), help=help,
                 format="localized")
    where.number_input(f"exact {label.lower()}", 0, None, step=step, key=exact, on_change=sync,
                       args=(exact, slider), label_visibility="collapsed")
