"""One run: a transcript in depth (``toolclear.inspector.one_run``)."""
from toolclear.inspector.one_run import render_page

render_page()
