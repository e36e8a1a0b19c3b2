"""toolclear inspector: what a context policy does to a real agent run, tuned and compared.

    toolclear app [FILE]          # or, in a checkout: streamlit run app.py

A thin router: ``st.navigation`` over one module per page (``one_run``, ``corpus_page``),
each run from its file in ``routes/``. Every number shown comes from ``toolclear``;
transcript text is always shown as text (code blocks, tables, escaped markdown), never
as HTML.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from toolclear.inspector.one_run import DEFAULTS, init_state, session_choices
from toolclear.inspector.widgets import keep_widget_state, safely

__all__ = ["ROUTES", "main", "session_choices"]

ROUTES = Path(__file__).resolve().parent / "routes"
PAGES = (("one_run.py", "One run", "run",
          "A transcript in depth: the verdict, what the policy leaves, every view."),
         ("corpus.py", "Corpus", "corpus", "Many runs at once, and which setting to pick across them."))
"""(file in routes/, title, URL path, what it is for)."""


def main() -> None:
    st.set_page_config(page_title="toolclear inspector", page_icon=":material/content_cut:", layout="wide")
    keep_widget_state(tuple(DEFAULTS))
    pages = [st.Page(ROUTES / file, title=title, url_path=url, default=n == 0)
             for n, (file, title, url, _) in enumerate(PAGES)]
    page = st.navigation(pages, position="sidebar")
    goto = st.session_state.pop("_goto", None)  # the Corpus page opened one of its runs
    if goto is not None and goto != page.title:
        st.switch_page(next(p for p in pages if p.title == goto))
    init_state()
    st.title("toolclear inspector")
    safely(page.run)


if __name__ == "__main__":  # `toolclear app` runs this file itself
    main()
