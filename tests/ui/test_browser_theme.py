"""The theme follows the browser's colour preference (real Chromium): light and dark, charts included."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fixtures.browser import StreamlitApp, open_app, screenshot
from yiem.store import create_store_engine, seed_demo

pytestmark = pytest.mark.browser

# The palettes of .streamlit/config.toml ([theme.light] and [theme.dark]).
LIGHT_BACKGROUND = "rgb(251, 251, 248)"
DARK_BACKGROUND = "rgb(20, 26, 22)"


def _luminance(css: str) -> float:
    red, green, blue = (int(part) for part in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@pytest.mark.parametrize(("scheme", "background"), [("light", LIGHT_BACKGROUND), ("dark", DARK_BACKGROUND)])
def test_the_costs_page_follows_the_browser_preference(
    streamlit_app: StreamlitApp, chromium: Any, scheme: str, background: str
) -> None:
    now_ms = int(time.time() * 1000)
    seed_demo(create_store_engine(streamlit_app.database_url), 400, days=20, end_ms=now_ms)
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        open_app(page, f"{streamlit_app.url}/costs")
        page.locator('[data-testid="stApp"]').wait_for()
        page.wait_for_function(
            "want => getComputedStyle(document.querySelector('[data-testid=stApp]'))"
            ".backgroundColor === want",
            arg=background,
            timeout=60_000,
        )
        # The charts take the page's theme: their axis labels must stand out from the background.
        tick = page.locator('[data-testid="stPlotlyChart"] .xtick text').first
        tick.wait_for(timeout=120_000)
        fill = tick.evaluate("node => getComputedStyle(node).fill")
        screenshot(page, f"costs-{scheme}")
        contrast = abs(_luminance(fill) - _luminance(background))
        assert contrast > 0.45, (fill, background)
    finally:
        context.close()
