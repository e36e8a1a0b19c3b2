"""The floor: a bare Streamlit app with one slider and one metric (what any slider move costs)."""

import streamlit as st

value = st.slider("Keep-recent token budget", 0, 100_000, 40_000, key="keep")
st.metric("Results cleared", f"{value // 1000:,}")
