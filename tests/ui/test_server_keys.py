"""A key configured on the server goes only to the URL it was configured for (issue 11, "Base URL").

A scripted loopback server stands in for "a server of theirs" that a browser user types as Base URL.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply

ROOT = Path(__file__).resolve().parents[2]
SERVER_KEY = "sk-server-only-7f3a9c1e5b"
BODY_SECRET = "internal-page-content-93ab"


def _page_text(at: AppTest) -> str:
    parts = [str(element.value) for element in (*at.markdown, *at.caption, *at.error, *at.warning)]
    return "\n".join(parts)


def _no_server_key_sent(server: ScriptedServer) -> None:
    for request in server.requests:
        assert SERVER_KEY not in str(request.headers), request.headers


def test_a_typed_base_url_never_receives_the_server_key(
    db_url: str, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    error = {"error": {"message": f"see {BODY_SECRET}", "type": "invalid_request_error"}}
    scripted_server.script(*(json_reply(error, status=401) for _ in range(6)))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert at.session_state["settings"].provider == "openai"
    at.sidebar.text_input(key="set-url-openai").set_value(f"{scripted_server.url}/v1").run()
    at.chat_input[0].set_value("hello").run()
    assert not at.exception
    _no_server_key_sent(scripted_server)
    # No key for this URL: the page says to type one, and nothing was sent with the server's.
    assert any("type a key" in e.value.lower() for e in at.error), _page_text(at)

    # A key typed in this session is the one a typed URL gets; the answer's body is not quoted.
    at.sidebar.text_input(key="set-key-openai").set_value("sk-typed-for-mine").run()
    at.chat_input[0].set_value("again").run()
    assert not at.exception
    _no_server_key_sent(scripted_server)
    sent = [request.headers.get("Authorization") for request in scripted_server.requests]
    assert "Bearer sk-typed-for-mine" in sent, sent
    assert any("401" in e.value for e in at.error), _page_text(at)
    assert BODY_SECRET not in _page_text(at)


def test_the_configured_url_still_gets_the_server_key_and_its_words(
    db_url: str, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    # OPENAI_BASE_URL binds the server's key to that URL (the OpenAI SDK's own variable).
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{scripted_server.url}/v1")
    scripted_server.script(
        json_reply({"data": [{"id": "gpt-4o-mini"}]}),
        json_reply({"error": {"message": "quota exceeded for this project"}}, status=400),
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.chat_input[0].set_value("hello").run()
    assert not at.exception
    sent = [request.headers.get("Authorization") for request in scripted_server.requests]
    assert sent == [f"Bearer {SERVER_KEY}"] * 2, sent
    assert any("quota exceeded for this project" in e.value for e in at.error), _page_text(at)
