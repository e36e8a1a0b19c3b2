"""Corpus: many runs at once, and which setting to pick (``toolclear.inspector.corpus_page``)."""
from toolclear.inspector.corpus_page import render_corpus_page

render_corpus_page()
