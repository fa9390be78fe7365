"""The Chat page (coming soon)."""

import streamlit as st

st.title("Chat")
st.info("This page is coming soon.")
