"""What the Costs page shows before any usage is recorded: what will appear, and demo data to look around."""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from yiem.store import seed_demo

DEMO_ROWS = 5_000
DEMO_DAYS = 90


def draw_empty_store(engine: Engine, owner: str) -> None:
    """Says where the figures come from and offers demo data; the button writes it and reruns."""
    st.info(
        "No usage recorded yet. Every reply in **Chat** records its tokens, cost and timing here.\n\n"
        f"To look around first, load demo data: {DEMO_ROWS:,} requests over the last {DEMO_DAYS} days "
        "across several providers and models, with demo conversations (they appear in Chat, without "
        "messages). For a bigger set run `python -m yiem.store seed-demo 1000000`."
    )
    if st.button("Load demo data", type="primary", icon=":material/dataset:"):
        with st.spinner("Writing demo usage…"):
            seed_demo(engine, DEMO_ROWS, days=DEMO_DAYS, owner=owner)
        st.cache_data.clear()
        st.rerun()
