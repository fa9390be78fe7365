"""Signing in to an OAuth-protected MCP server from the Tools page, in a real Chromium: the server's
authorization server's own login and consent pages in a new tab, the way back connected, a call
made as the signed-in person, and signing out. Screenshots go to tests/artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from tests.fixtures.browser import StreamlitApp, open_app, screenshot, script_run, start_streamlit
from tests.fixtures.mcp_oauth import ProtectedServers
from yiem.store import create_store_engine, mcp_sign_ins

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def _sign_ins(app: StreamlitApp) -> int:
    with create_store_engine(app.database_url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(mcp_sign_ins)).scalar_one())


def test_sign_in_to_a_protected_server_call_a_tool_and_sign_out(
    streamlit_app: StreamlitApp, page: Any, protected_mcp: ProtectedServers
) -> None:
    open_app(page, f"{streamlit_app.url}/tools")
    page.get_by_text("URL (Streamable HTTP)", exact=True).click()
    page.get_by_label("URL", exact=True).fill(protected_mcp.tools)
    page.get_by_label("Name", exact=True).fill("protected")
    page.get_by_label("Name", exact=True).press("Tab")
    # Each click waits for its run to end: a click while the run before was still drawing was
    # lost once on a busy machine (the page stayed on "needs you to sign in").
    with script_run(page):
        page.get_by_role("button", name="Add and connect").click()
    expect(page.get_by_text("protected needs you to sign in.")).to_be_visible(timeout=60_000)
    with script_run(page):
        page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_text("It asks for: mcp:tools, offline_access.")).to_be_visible(timeout=60_000)
    screenshot(page, "mcp-sign-in-offer")

    # The authorization server's own pages, in the tab the link opens.
    with page.context.expect_page() as opened:
        page.get_by_role("link", name="Open the sign-in page").click()
    tab = opened.value
    tab.get_by_placeholder("Enter any login").fill("ann")
    tab.get_by_placeholder("and password").fill("any")
    tab.get_by_role("button", name="Sign-in").click()
    tab.get_by_role("button", name="Continue").click()  # consent to the scopes

    # Back on the Tools page, in that tab: connected, and the tool answers as ann.
    expect(tab.get_by_role("combobox", name="Server")).to_have_value("protected", timeout=60_000)
    expect(tab.get_by_role("button", name="Disconnect")).to_be_visible(timeout=60_000)
    assert "code=" not in tab.url  # the code is taken out of the address at once
    assert _sign_ins(streamlit_app) == 1
    tab.get_by_role("radiogroup", name="Tool").get_by_text("whoami", exact=True).click()
    tab.get_by_role("button", name="Call", exact=True).click()
    expect(tab.get_by_test_id("stMarkdownContainer").filter(has_text="signed in as ann").first).to_be_visible(
        timeout=60_000
    )
    screenshot(tab, "mcp-signed-in-call")

    tab.get_by_role("button", name="Sign out of this server").click()
    expect(tab.get_by_role("button", name="Connect", exact=True)).to_be_visible(timeout=60_000)
    assert _sign_ins(streamlit_app) == 0


def test_the_app_serves_its_client_metadata_document_at_its_client_id(tmp_path: Path, page: Any) -> None:
    public = "https://yiem.example.com"
    with start_streamlit(tmp_path, {"YIEM_PUBLIC_URL": public}) as app:
        open_app(page, f"{app.url}/tools")  # returns when the page's first run has ended: it writes the file
        served = httpx.get(f"{app.url}/app/static/client-metadata.json", timeout=10)
    assert served.status_code == 200 and served.headers["content-type"].startswith("application/json")
    document = served.json()
    assert document["client_id"] == f"{public}/app/static/client-metadata.json"
    assert document["redirect_uris"] == [f"{public}/tools"]
    assert document["token_endpoint_auth_method"] == "none" and "client_secret" not in document
