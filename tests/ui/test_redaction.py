"""No secret the server knows is stored, exported, logged or shown (issue 11, "Redaction").

A distinctive provider key and MCP token are set on the server; a scripted provider echoes the key in
its error, a scripted MCP server echoes the token; the test chats, exports, saves a server to mcp.json,
then greps the database (and its WAL), the exports, mcp.json, the log and the page for either.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply
from yiem.chat import export_json, export_markdown
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage

ROOT = Path(__file__).resolve().parents[2]
KEY = f"sk-proj-{uuid.uuid4().hex}"
TOKEN = f"mcp-{uuid.uuid4().hex}"


@pytest.fixture
def app_log(tmp_path: Path) -> Iterator[Path]:
    """Everything logged in this process during the test, as the app's log file would hold it."""
    path = tmp_path / "app.log"
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield path
    root.removeHandler(handler)
    root.setLevel(level)
    handler.close()


@pytest.fixture
def provider() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


def _page_text(at: AppTest) -> str:
    elements = (*at.markdown, *at.caption, *at.error, *at.warning, *at.code, *at.text, *at.toast)
    return "\n".join(str(element.value) for element in elements)


def test_no_secret_is_stored_exported_logged_or_shown(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: ScriptedServer,
    scripted_server: ScriptedServer,
    app_log: Path,
) -> None:
    database = tmp_path / "app.db"
    config_path = tmp_path / "mcp.json"
    config_path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "remote": {
                        "url": f"{scripted_server.url}/mcp",
                        "headers": {"Authorization": "Bearer ${YIEM_TEST_MCP_TOKEN}"},
                    }
                }
            }
        )
    )
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(config_path))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{provider.url}/v1")
    monkeypatch.setenv("YIEM_TEST_MCP_TOKEN", TOKEN)
    monkeypatch.setattr(st_config, "get_option", _loopback(st_config.get_option))
    # The MCP server refuses the token and quotes it; the provider refuses the key and quotes it.
    scripted_server.script(
        *(json_reply({"detail": f"token Bearer {TOKEN} is not valid"}, status=401) for _ in range(4))
    )
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    provider.script(json_reply({"data": [{"id": "gpt-4o-mini"}]}), json_reply(echo, status=401))

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert "remote" in at.session_state["mcp_errors"]  # the MCP error happened
    at.chat_input[0].set_value(f"hello, my key is {KEY}").run()
    assert not at.exception, at.exception
    assert provider.requests[-1].headers.get("Authorization") == f"Bearer {KEY}"  # it did go out
    shown = _page_text(at)
    assert "Incorrect API key provided: ***" in shown, shown
    logging.getLogger("yiem.app").warning("the provider said: Incorrect API key provided: %s", KEY)

    chat = at.session_state["chat"]
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "chat.json").write_text(export_json(chat.transcript()))
    (exports / "chat.md").write_text(export_markdown(chat.transcript()))

    # A person pastes the key into a server they add on the Tools page and saves it to mcp.json.
    at.switch_page("ui/pages/tools.py").run()
    assert not at.exception, at.exception
    shown += "\n" + _page_text(at)
    at.text_input(key="tools-add-name").input("pasted")
    at.text_input(key="tools-add-url").input(f"{scripted_server.url}/mcp")
    at.text_area(key="tools-add-headers").input(f"Authorization: Bearer {KEY}")
    at.checkbox(key="tools-add-save").check()
    at.button(key="tools-add-connect").click().run()
    assert not at.exception, at.exception
    shown += "\n" + _page_text(at)
    assert "pasted" in json.loads(config_path.read_text())["mcpServers"]

    # The reply was stored, with the key masked (so the grep below is not vacuous).
    stored = ConversationStore(create_store_engine(f"sqlite:///{database}")).load_messages(
        at.query_params["c"][0] if isinstance(at.query_params["c"], list) else at.query_params["c"]
    )
    errors = [m.error_message for m in stored if isinstance(m, AssistantMessage) and m.error_message]
    assert errors and "***" in errors[0], errors

    files = [*tmp_path.glob("app.db*"), *exports.iterdir(), config_path, app_log]
    assert any(path.name.endswith("-wal") for path in files) or database.exists()
    for secret in (KEY, TOKEN):
        assert secret not in shown
        for path in files:
            assert secret.encode() not in path.read_bytes(), f"{secret[:8]}… found in {path.name}"


def _loopback(get_option: Any) -> Any:
    """The app believes it listens on 127.0.0.1, as under `make run` (typed servers may start)."""

    def patched(name: str) -> Any:
        return "127.0.0.1" if name == "server.address" else get_option(name)

    return patched
