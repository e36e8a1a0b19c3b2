"""The toolclear inspector (``streamlit run app.py``); it lives in toolclear.inspector.app."""
from toolclear.inspector.app import main

main()
