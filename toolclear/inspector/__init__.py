"""The presentation layer: the Streamlit inspector (``app``), its charts, the settings
snippets and the downloads. ``import toolclear`` imports none of it; ``app`` and
``charts`` need the ``app`` extra (Streamlit, pandas, plotly)."""
