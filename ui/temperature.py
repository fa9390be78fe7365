"""The temperature control Chat's settings and Compare's columns share: a provider's default, or a slider."""

from __future__ import annotations

import streamlit as st


def temperature_input(current: float | None, default_key: str, slider_key: str) -> float | None:
    """None when "Provider's default temperature" is ticked (nothing is sent), else the slider's value."""
    use_default = st.checkbox("Provider's default temperature", value=current is None, key=default_key)
    if use_default:
        return None
    # Temperature 0 is a setting of its own: only "none set yet" starts the slider at 0.7.
    start = 0.7 if current is None else current
    return st.slider("Temperature", 0.0, 2.0, value=start, step=0.1, key=slider_key)
