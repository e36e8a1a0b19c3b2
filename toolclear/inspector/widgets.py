"""Small Streamlit helpers the inspector's views share: escaping, numbers, slider pairs."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

import toolclear as tc
from toolclear.runs import report

__all__ = ["compact", "md", "plural", "safe", "short", "keep_widget_state", "slider_pair", "slider_range", "store",
           "stored"]

safe = report.display_text

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=\"'])")


_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?=@)")
_WORD_JOINER = "\u2060"


def md(text: object) -> str:
    """Escape every markdown and HTML character of untrusted text for st.markdown & co.

    Escapes alone do not stop GitHub-flavoured autolinks (they are found in the text
    after escapes are resolved), so an invisible word joiner goes into every ``www.``,
    ``://`` and ``@``: a URL or e-mail address in a file name shows as text, not a link."""
    # zero-width and bidi characters shown as escapes first (a U+202E would turn a file name around;
    # read_file and read_file\u200b must not look alike), then the word joiners of our own
    flat = _AUTOLINK.sub(_WORD_JOINER, " ".join(report.visible(safe(str(text))).split()))
    return _MD_SPECIAL.sub(r"\\\1", flat)



def stored(name: str, default: int) -> int:
    """The value in use for a slider pair: kept under a key no widget owns, so Streamlit's
    clean-up of widgets that a run did not draw (another policy picked, the Corpus page
    open) never drops or resets it."""
    key = f"_v_{name}"
    if key not in st.session_state:
        st.session_state[key] = int(default)
    return int(st.session_state[key])


def store(name: str, value: int) -> None:
    """Set a slider pair's value in use (the Defaults buttons, the Corpus page's adopt)."""
    st.session_state[f"_v_{name}"] = int(value)


_KEPT_PREFIXES = ("p_", "pr_", "corpus_", "context_window_", "compare_specs")
_NOT_SETTABLE = ("_defaults", "_button", "_go", "corpus_files", "corpus_runs", "corpus_csv", "corpus_parquet",
                 "corpus_rec", "_table", "_chart", "_heat", "_dist", "_frontier", "_strip", "_dl_")


def keep_widget_state(names: tuple[str, ...]) -> None:
    """Hand every setting's widget value back to Streamlit at the top of a run.

    Streamlit forgets the value of a widget that a run does not draw (the eino
    placeholder while Anthropic is picked, every sidebar setting while the Corpus page is
    open); a value set through the session state is not forgotten. Buttons, uploads,
    tables and charts are left alone: they hold no setting and cannot be set."""
    for key in list(st.session_state):
        k = str(key)
        if (k in names or k.startswith(_KEPT_PREFIXES)) and not any(x in k for x in _NOT_SETTABLE):
            st.session_state[k] = st.session_state[k]


def slider_range(top: int, value: int) -> tuple[int, int]:
    """A slider's end and step: the end sized to the conversation but never below the
    value in use (so the thumb always shows it), the step a round number about a
    hundredth of the range (one key press moves it by an amount a person would type)."""
    from toolclear.runs.numbers import nice_ceil

    end = max(int(top), 1)
    if value > end:
        end = nice_ceil(value)
    step = max(1, nice_ceil(end / 100)) if end >= 100 else 1
    end = -(-end // step) * step  # a whole number of steps
    return end, step


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


def slider_pair(where: Any, name: str, label: str, top: int, step: int, help: str, default: int) -> int:
    """A slider sized to the transcript and an exact number input, kept in step; returns
    the value in use.

    The value lives under a key no widget owns (``stored``). At each run the widget the
    user moved since the last run (its value differs from what this pair last drew) sets
    it; otherwise the stored value, which a Defaults button or the Corpus page may have
    changed, is drawn into both widgets. Reading the widgets rather than relying on
    callbacks keeps quick key presses whose reruns overtake each other: the newest value
    the browser sent always wins, and no thumb is pulled back while it moves."""
    slider, exact, seen_key = f"{name}_slider", f"{name}_input", f"_seen_{name}"
    value = stored(name, default)
    seen = st.session_state.get(seen_key)
    if seen is not None:
        for key, last in zip((slider, exact), seen[:2]):
            now = st.session_state.get(key)
            if now is not None and now != last:
                value = max(0, int(now))
                store(name, value)
                break
    end, slider_step = slider_range(top, value)
    # a slider whose range changed is a new widget to Streamlit: it must be told its value
    renewed = seen is None or seen[2:] != (end, slider_step)
    for key in (slider, exact):
        if renewed or st.session_state.get(key) != value:
            st.session_state[key] = value
    where.slider(label, 0, end, step=slider_step, key=slider, help=help, format="localized")
    where.number_input(f"exact {label.lower()}", 0, None, step=max(step, slider_step), key=exact,
                       label_visibility="collapsed")
    st.session_state[seen_key] = (value, value, end, slider_step)
    return value


def safely(run: Any, *args: Any) -> None:
    """Run a part of the app; an error is one st.error line, and the app keeps working."""
    try:
        run(*args)
    except tc.ToolclearError as exc:  # e.g. a setting the core refuses: say so, keep working
        st.error(md(str(exc)))
    except Exception as exc:  # a bug: one line instead of a traceback
        st.error(md(f"Something went wrong inside toolclear ({type(exc).__name__}: {exc}); please report it."))


def ensure_counts(messages: tuple[tc.Message, ...], counter: str) -> tuple[int, ...]:
    """Count every message (once; cached on the message), with a progress bar while the
    counting of a long transcript runs."""
    bar = None

    def shown(fraction: float) -> None:
        nonlocal bar
        if bar is None:
            bar = st.progress(0.0, text=f"Counting tokens ({counter})…")
        bar.progress(fraction, text=f"Counting tokens ({counter})…")

    counts = tc.count_tokens(messages, counter, progress=shown if len(messages) > 2000 else None)
    if bar is not None:
        bar.empty()
    return counts
