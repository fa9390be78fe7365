"""Deep links in a real Chromium: a shared /costs or /tools link opens inside the app's shell."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, screenshot


@pytest.mark.browser
@pytest.mark.parametrize(("path", "heading"), [("costs", "Costs"), ("tools", "Tools")])
def test_a_deep_link_opens_the_page_inside_the_top_navigation(
    streamlit_app: StreamlitApp, page: Any, path: str, heading: str
) -> None:
    open_app(page, f"{streamlit_app.url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for()
    # The shell's top navigation, not Streamlit's folder navigation in the sidebar.
    navigation = page.locator('[data-testid="stTopNavLinkContainer"], header [data-testid="stTopNavLink"]')
    expect(page.get_by_role("link", name="Chat").first).to_be_visible()
    expect(navigation.first).to_be_visible()
    screenshot(page, f"deep-link-{path}")
    expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
    expect(page.get_by_role("link", name="app")).to_have_count(0)
