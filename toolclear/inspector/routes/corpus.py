"""Corpus: many runs at once, and which setting to pick (``toolclear.inspector.corpus_page``).
Streamlit runs this file as ``__main__``; importing it does nothing."""
from toolclear.inspector.corpus_page import render_corpus_page

if __name__ == "__main__":
    render_corpus_page()
