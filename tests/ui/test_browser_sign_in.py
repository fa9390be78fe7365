"""Sign-in for real: the app in Chromium against a real OpenID Connect provider (npm `oidc-provider`).

Ann signs in through the provider's own login page, chats with the embedded model and signs out;
Bob signs in in the same browser and neither sees nor opens her conversation, and his Costs page is
his own; Carol, an admin by the provider's `groups` claim, sees the team's costs per person.
Each step waits for the exact state it asserts. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect
from sqlalchemy import select

from tests.fixtures.browser import (
    StreamlitApp,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    settled,
    start_streamlit,
)
from tests.fixtures.oidc import OidcProvider
from tests.ui.test_browser_chat import _limit_replies, _send
from tests.ui.test_browser_costs import metric_value
from yiem.store import ConversationNotFoundError, ConversationStore, create_store_engine, usage
from yiem.types import AssistantMessage

# Three sign-ins and two replies of the embedded model: about 2.5 minutes alone, more on a busy CI.
pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.timeout(900)]

ANN, BOB, CAROL = "ann@example.com", "bob@example.com", "carol@example.com"
SIDEBAR = '[data-testid="stSidebar"]'


@pytest.fixture
def signed_app(tmp_path: Path, oidc_app_port: int, oidc_provider: OidcProvider) -> Iterator[StreamlitApp]:
    """The app with sign-in on against the provider (the fixture starts and stops it)."""
    app_url = f"http://127.0.0.1:{oidc_app_port}"
    secrets_file = tmp_path / "secrets.toml"
    secrets_file.write_text(oidc_provider.secrets_toml(app_url))
    env = {"YIEM_MCP_CONFIG": str(tmp_path / "no-mcp.json")}
    with start_streamlit(tmp_path, env, port=oidc_app_port, args=(f"--secrets.files={secrets_file}",)) as app:
        yield app


def _sign_in(page: Any, app: StreamlitApp, provider: OidcProvider, login: str, name: str) -> None:
    """From the app's sign-in page through the provider's login form, back to the app, signed in."""
    open_app(page, app.url)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(rf"^{re.escape(provider.url)}/interaction/"))
    page.locator('input[name="login"]').fill(login)
    page.locator('input[name="password"]').fill("any password")  # the dev login form takes any
    page.get_by_role("button", name="Sign-in").click()
    page.wait_for_url(re.compile(rf"^{re.escape(app.url)}/"))
    expect(page.locator(SIDEBAR).get_by_text(f"Signed in as {name}")).to_be_visible(timeout=60_000)


def _sign_out(page: Any, app: StreamlitApp) -> None:
    """Sign out, and wait for the state that means it: the sign-in page, with no session cookie left.

    The sign-in page can draw before the browser has followed /auth/logout, whose answer drops the
    cookie, so both are waited for. On a busy machine a click can be lost (the button stays) or the
    way through the provider's end-session page slow (the button goes): only the first is clicked again.
    """
    sign_out = page.locator(SIDEBAR).get_by_role("button", name="Sign out")
    sign_in = page.get_by_role("button", name="Sign in", exact=True)
    # The cookie goes with a response (/auth/logout's): each response is when to look at it again.
    # Counted by a listener, since events reach it only inside a Playwright call such as `cookies()`.
    responses = [0]

    def count(_: Any) -> None:
        responses[0] += 1

    def signed_out(ms: float) -> None:
        expect(sign_in).to_be_visible(timeout=ms)
        deadline = time.monotonic() + ms / 1000
        still_in = "the sign-in page is drawn but the session cookie is still there"
        while True:
            seen = responses[0]
            if not [c for c in page.context.cookies() if c["name"].startswith("_streamlit_user")]:
                return
            left_ms = (deadline - time.monotonic()) * 1000
            if left_ms <= 0:
                raise AssertionError(still_in)
            if responses[0] == seen:  # none came while looking: wait for the next one
                try:
                    page.wait_for_event("response", timeout=left_ms)
                except PlaywrightTimeoutError:
                    raise AssertionError(still_in) from None

    page.on("response", count)
    settled(page)
    for _ in range(3):
        sign_out.click()
        try:
            signed_out(45_000)
            break
        except AssertionError:
            # Back on one of the app's pages: signed out after all, or still in with the click lost.
            expect(sign_in.or_(sign_out).first).to_be_visible(timeout=60_000)
            if not sign_out.is_visible():
                signed_out(60_000)  # slow, not lost: nothing to click again
                break
            settled(page)
    else:
        raise AssertionError("three clicks on Sign out never signed out")
    page.remove_listener("response", count)
    # Out of the app and of the provider (its end-session page), back on the app's sign-in page.
    assert page.url.startswith(app.url)


def _chat(page: Any, app: StreamlitApp, prompt: str) -> str:
    """Send `prompt` to the embedded model; the new conversation's id once its reply is stored."""
    _limit_replies(page, 16)
    _send(page, prompt)
    expect(page.get_by_text(re.compile(r"\d+ in · \d+ out")).first).to_be_visible(timeout=180_000)
    conversation_id = open_conversation_id(page)
    page.locator('[data-testid="stChatInputStopButton"]').wait_for(state="detached", timeout=120_000)
    return conversation_id


def _stored(app: StreamlitApp, owner: str, conversation_id: str) -> list[Any]:
    """`owner`'s stored messages of the conversation, once its reply is there."""
    return saved_messages(app, conversation_id, 2, owner)


def _usage_by_owner(app: StreamlitApp) -> dict[str, tuple[int, int, int]]:
    """Per owner: requests, input tokens (cache writes included, as the page counts them), output tokens."""
    with create_store_engine(app.database_url).connect() as conn:
        rows = conn.execute(select(usage)).all()
    found: dict[str, tuple[int, int, int]] = {}
    for row in rows:
        requests, tokens_in, tokens_out = found.get(row.owner, (0, 0, 0))
        tokens_in += row.input_tokens + row.cache_write_tokens
        found[row.owner] = (requests + 1, tokens_in, tokens_out + row.output_tokens)
    return found


def test_each_person_signs_in_and_sees_only_their_own(
    signed_app: StreamlitApp, oidc_provider: OidcProvider, page: Any
) -> None:
    app = signed_app
    open_app(page, app.url)
    expect(page.get_by_text("Sign in to see your conversations")).to_be_visible(timeout=60_000)
    expect(page.locator('[data-testid="stChatInputTextArea"]')).to_have_count(0)
    screenshot(page, "sign-in-page")

    # Ann: signs in, chats, signs out.
    _sign_in(page, app, oidc_provider, "ann", "Ann Example")
    anns = _chat(page, app, "Ann asks about tulips. Say hello.")
    saved = _stored(app, ANN, anns)
    assert [m.role for m in saved] == ["user", "assistant"], app.log()
    assert isinstance(saved[1], AssistantMessage) and saved[1].text.strip()
    ann_title = ConversationStore(create_store_engine(app.database_url), ANN).get(anns).title
    expect(page.locator(SIDEBAR).locator(f".st-key-open-{anns}")).to_have_text(ann_title)
    screenshot(page, "sign-in-ann-chatted")
    _sign_out(page, app)

    # Bob, in the same browser: nothing of Ann's is listed, and her link is refused in words.
    _sign_in(page, app, oidc_provider, "bob", "Bob Example")
    sidebar = page.locator(SIDEBAR)
    expect(sidebar.get_by_text("No conversations yet.")).to_be_visible()
    expect(sidebar.get_by_text(ann_title)).to_have_count(0)
    open_app(page, f"{app.url}/?c={anns}")
    expect(page.get_by_text("is not yours to open")).to_be_visible(timeout=60_000)
    expect(sidebar.get_by_text("No conversations yet.")).to_be_visible()  # the run drew its list
    expect(page.get_by_text("tulips")).to_have_count(0)
    expect(page.locator('[data-testid="stChatMessage"]')).to_have_count(0)
    # Renaming, deleting and exporting go through the sidebar's rows and the open conversation:
    # Bob has no row of Ann's and no conversation open, so none of them is there to click.
    expect(sidebar.locator(f".st-key-open-{anns}, .st-key-menu-{anns}")).to_have_count(0)
    sidebar.get_by_text("Export and import").click()
    expect(sidebar.get_by_text("Import a JSON export")).to_be_visible()
    expect(sidebar.locator(".st-key-export-json, .st-key-export-md")).to_have_count(0)
    screenshot(page, "sign-in-bob-refused")
    bobs = _chat(page, app, "Bob asks about roses. Say hello.")
    assert [m.role for m in _stored(app, BOB, bobs)] == ["user", "assistant"], app.log()
    expect(sidebar.locator(f".st-key-open-{bobs}")).to_be_visible()
    expect(sidebar.locator(f".st-key-open-{anns}")).to_have_count(0)

    # Bob's Costs are his own: one request, his tokens, no team view.
    spent = _usage_by_owner(app)
    assert {owner: n for owner, (n, _, _) in spent.items()} == {ANN: 1, BOB: 1}, app.log()
    open_app(page, f"{app.url}/costs")
    expect(metric_value(page, "Requests")).to_have_text("1", timeout=60_000)
    expect(metric_value(page, "Input tokens")).to_have_text(f"{spent[BOB][1]:,}")
    expect(metric_value(page, "Output tokens")).to_have_text(f"{spent[BOB][2]:,}")
    expect(page.get_by_role("tab", name="By model")).to_be_visible()  # the tabs are drawn, all at once
    expect(page.get_by_text("The whole team")).to_have_count(0)
    expect(page.get_by_role("tab", name="By person")).to_have_count(0)
    screenshot(page, "sign-in-bob-costs")
    _sign_out(page, app)

    # Carol, an admin by her groups claim: the whole team's costs, per person.
    _sign_in(page, app, oidc_provider, "carol", "Carol Admin")
    expect(page.locator(SIDEBAR).get_by_text(re.compile(r"Carol Admin · admin$"))).to_be_visible()
    open_app(page, f"{app.url}/costs")
    expect(page.get_by_role("switch", name="The whole team")).to_be_checked(timeout=60_000)
    expect(metric_value(page, "Requests")).to_have_text("2", timeout=60_000)
    expect(metric_value(page, "Output tokens")).to_have_text(f"{spent[ANN][2] + spent[BOB][2]:,}")
    expect(page.get_by_role("tab", name="By person", selected=True)).to_be_visible()
    screenshot(page, "sign-in-carol-team-costs")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download by person (CSV)").click()
    per_person = {
        row["owner"]: (int(row["requests"]), int(row["output_tokens"]))
        for row in csv.DictReader(io.StringIO(Path(download.value.path()).read_text()))
    }
    assert per_person == {owner: (n, tokens_out) for owner, (n, _, tokens_out) in spent.items()}

    # Through the store, as Bob: Ann's conversation cannot be renamed, deleted or read, and is intact.
    as_bob = ConversationStore(create_store_engine(app.database_url), BOB)
    for attempt in (lambda: as_bob.rename(anns, "Bob's now"), lambda: as_bob.delete(anns)):
        with pytest.raises(ConversationNotFoundError, match="not yours"):
            attempt()
    assert as_bob.load_messages(anns) == []
    assert _stored(app, ANN, anns) == saved
