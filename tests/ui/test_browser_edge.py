"""The browser edge (issue 11): the app refuses WebSocket handshakes for a Host it does not serve
(DNS rebinding), sets Streamlit's XSRF cookie, and a remote image in a reply is never fetched."""

from __future__ import annotations

import base64
import json
import os
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.browser import StreamlitApp, open_app, screenshot, start_streamlit
from tests.scripted_http import ScriptedServer, json_reply
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

pytestmark = pytest.mark.browser


def _handshake(app: StreamlitApp, host: str) -> str:
    """The status line the app answers a WebSocket upgrade of /_stcore/stream with, for this Host."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        "GET /_stcore/stream HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", app.port), timeout=10) as sock:
        sock.sendall(request.encode())
        answer = b""
        while b"\r\n" not in answer:
            part = sock.recv(4096)
            if not part:
                break
            answer += part
    return answer.split(b"\r\n", 1)[0].decode(errors="replace")


def test_a_rebinding_handshake_is_refused_and_the_app_own_name_is_served(
    shared_streamlit_app: StreamlitApp,
) -> None:
    streamlit_app = shared_streamlit_app
    assert " 101 " in _handshake(streamlit_app, f"127.0.0.1:{streamlit_app.port}")
    assert " 101 " in _handshake(streamlit_app, f"localhost:{streamlit_app.port}")
    refused = _handshake(streamlit_app, "evil.example")
    assert " 101 " not in refused and refused.startswith("HTTP/1.1 4"), refused
    assert " 101 " not in _handshake(streamlit_app, f"evil.example:{streamlit_app.port}")


def test_xsrf_protection_is_on(shared_streamlit_app: StreamlitApp) -> None:
    streamlit_app = shared_streamlit_app
    # Streamlit hands out its XSRF cookie (which uploads must echo) only while the protection is on.
    health = httpx.get(f"{streamlit_app.url}/_stcore/health", timeout=10)
    assert "_streamlit_xsrf=" in health.headers.get("set-cookie", ""), health.headers


def test_a_remote_image_in_a_reply_is_a_link_and_never_fetched(
    tmp_path: Path, page: Any, scripted_server: ScriptedServer
) -> None:
    secret_url = f"{scripted_server.url}/?d=secret"
    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'yiem-browser.db'}"))
    conversation = store.create("pictures")
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="show me")]))
    reply = f"Here is the picture you asked for.\n\n![]({secret_url})\n\nAnything else?"
    store.append_message(conversation.id, AssistantMessage(content=[TextContent(text=reply)]))
    with start_streamlit(tmp_path) as app:
        open_app(page, f"{app.url}/?c={conversation.id}")
        page.get_by_text("Anything else?").wait_for()
        # Every image on the page has finished loading (or failing): a fetch would have happened by now.
        page.wait_for_function("() => Array.from(document.images).every(img => img.complete)", timeout=30_000)
        sources = page.evaluate("() => Array.from(document.images).map(img => img.src)")
        assert scripted_server.requests == [], [request.path for request in scripted_server.requests]
        assert not any("d=secret" in source for source in sources), sources
        # What is there instead: a link the person may click, its address in plain sight.
        page.locator(f'a[href="{secret_url}"]').wait_for()
        screenshot(page, "browser-edge-remote-image")


def test_the_real_app_keeps_server_secrets_out_of_its_page_log_and_database(
    tmp_path: Path, page: Any, scripted_server: ScriptedServer
) -> None:
    """`make run` as a team would use it: a provider and an MCP server that echo the server's
    secrets back; neither reaches the page, the app's log or the database (and its WAL)."""
    key, token = f"sk-proj-{os.urandom(12).hex()}", f"mcp-{os.urandom(12).hex()}"
    provider = ScriptedServer()
    try:
        echo = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error"}}
        # Any request after the model list gets the echo: a busy machine's reconnect may ask twice.
        provider.script(
            json_reply({"data": [{"id": "gpt-4o-mini"}]}), *(json_reply(echo, status=401) for _ in range(8))
        )
        scripted_server.script(*(json_reply({"detail": f"bad token {token}"}, status=401) for _ in range(4)))
        config = tmp_path / "mcp.json"
        entry = {
            "url": f"{scripted_server.url}/mcp",
            "headers": {"Authorization": "Bearer ${YIEM_TEST_TOKEN}"},
        }
        config.write_text(json.dumps({"mcpServers": {"remote": entry}}))
        env = {
            "OPENAI_API_KEY": key,
            "OPENAI_BASE_URL": f"{provider.url}/v1",
            "YIEM_TEST_TOKEN": token,
            "YIEM_MCP_CONFIG": str(config),
        }
        with start_streamlit(tmp_path, env) as app:
            open_app(page, app.url)
            box = page.locator('[data-testid="stChatInputTextArea"]')
            box.fill("hello")
            box.press("Enter")
            page.get_by_text("Incorrect API key provided: ***").first.wait_for(timeout=120_000)
            screenshot(page, "browser-edge-secrets-masked")
            shown = page.content()
            log = app.log_path.read_bytes()
        assert provider.requests[-1].headers.get("Authorization") == f"Bearer {key}"  # it was used
        assert scripted_server.requests, "the MCP server was asked"
        for secret in (key, token):
            assert secret not in shown
            assert secret.encode() not in log
            for path in tmp_path.glob("yiem-browser.db*"):
                assert secret.encode() not in path.read_bytes(), path.name
    finally:
        provider.close()
