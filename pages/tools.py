"""The Tools page (coming soon)."""

import streamlit as st

st.title("Tools")
st.info("This page is coming soon.")
