"""The inspector's pages as Streamlit runs them (``st.navigation`` runs each file): one
line each, the page itself is a module of ``toolclear.inspector``."""
