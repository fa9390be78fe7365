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


@pytest.fixture(scope="module")
def themed_app(shared_streamlit_app: StreamlitApp) -> StreamlitApp:
    """The module's one app with demo usage for the Costs charts; the tests only read it (the
    theme is each browser context's own)."""
    now_ms = int(time.time() * 1000)
    seed_demo(create_store_engine(shared_streamlit_app.database_url), 400, days=20, end_ms=now_ms)
    return shared_streamlit_app


@pytest.mark.parametrize(("scheme", "background"), [("light", LIGHT_BACKGROUND), ("dark", DARK_BACKGROUND)])
def test_the_costs_page_follows_the_browser_preference(
    themed_app: StreamlitApp, chromium: Any, scheme: str, background: str
) -> None:
    streamlit_app = themed_app
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


def _wait_for_background(page: Any, background: str) -> None:
    page.wait_for_function(
        "want => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor === want",
        arg=background,
        timeout=60_000,
    )


def _pick_theme(page: Any, name: str) -> None:
    # Streamlit's own switch: System, Light and Dark in the ⋮ menu at the top right (toolbarMode viewer).
    page.locator('[data-testid="stMainMenu"]').click()
    page.get_by_role("menuitemradio", name=name).click()
    page.keyboard.press("Escape")  # the menu may stay open after a pick; the next pick opens it again
    page.locator('[data-testid="stMainMenuList"]').wait_for(state="detached")


def test_a_dark_browser_gets_the_dark_theme_and_the_menu_switch_turns_it_light_and_back(
    themed_app: StreamlitApp, chromium: Any
) -> None:
    streamlit_app = themed_app
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    try:
        page = context.new_page()
        open_app(page, streamlit_app.url)
        _wait_for_background(page, DARK_BACKGROUND)
        _pick_theme(page, "Light")
        _wait_for_background(page, LIGHT_BACKGROUND)
        screenshot(page, "theme-switched-light")
        # The choice is kept by this browser: a reload stays light although the browser prefers dark.
        page.reload()
        _wait_for_background(page, LIGHT_BACKGROUND)
        _pick_theme(page, "Dark")
        _wait_for_background(page, DARK_BACKGROUND)
        # Back to System: the page follows the browser again, whichever way it turns.
        _pick_theme(page, "System")
        page.emulate_media(color_scheme="light")
        _wait_for_background(page, LIGHT_BACKGROUND)
        page.emulate_media(color_scheme="dark")
        _wait_for_background(page, DARK_BACKGROUND)
        screenshot(page, "theme-system-dark")
    finally:
        context.close()
