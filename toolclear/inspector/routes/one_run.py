"""One run: a transcript in depth (``toolclear.inspector.one_run``). Streamlit runs this
file as ``__main__``; importing it does nothing."""
from toolclear.inspector.one_run import render_page

if __name__ == "__main__":
    render_page()
