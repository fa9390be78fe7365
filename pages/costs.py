"""The Costs page (coming soon)."""

import streamlit as st

st.title("Costs")
st.info("This page is coming soon.")
