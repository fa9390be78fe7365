"""The Tools page's connection panel under AppTest: adding servers one after another."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import SCRIPTED_STDIO
from tests.mcp_servers.scripted import ScriptedHttpServer

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "tools.py")
TIMEOUT = 60


@pytest.fixture
def loopback() -> Iterator[None]:
    """The app says it is bound to 127.0.0.1, so typed commands may start."""
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "127.0.0.1")
    yield
    st_config.set_option("server.address", before)


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]) -> AppTest:
    config_path = tmp_path / "mcp.json"
    config_path.write_text(json.dumps(config))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(config_path))
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def _add_stdio(at: AppTest, name: str) -> None:
    at.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    at.text_input(key="tools-add-name").input(name)
    at.text_input(key="tools-add-command").input(SCRIPTED_STDIO.command)
    at.text_input(key="tools-add-args").input(" ".join(SCRIPTED_STDIO.args))
    at.button(key="tools-add-connect").click().run()


def _add_http(at: AppTest, name: str, url: str) -> None:
    at.radio(key="tools-add-kind").set_value("URL (Streamable HTTP)").run()
    at.text_input(key="tools-add-name").input(name)
    at.text_input(key="tools-add-url").input(url)
    at.button(key="tools-add-connect").click().run()


def _close_all(at: AppTest) -> None:
    for client in at.session_state["mcp_clients"].values():
        client.close()


def test_a_second_server_added_from_the_page_connects_and_is_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    """Issue 12: with one server listed, 'Add and connect' crashed (the server picker was drawn)."""
    at = _page(tmp_path, monkeypatch, {"mcpServers": {}})
    try:
        with ScriptedHttpServer() as http:
            _add_stdio(at, "first")
            assert not at.exception, at.exception
            assert at.selectbox(key="tools-server").value == "first"
            _add_stdio(at, "second")
            assert not at.exception, at.exception
            _add_http(at, "third", http.url)
            assert not at.exception, at.exception
            assert set(at.session_state["mcp_clients"]) == {"first", "second", "third"}
            assert at.selectbox(key="tools-server").value == "third"
            assert at.selectbox(key="tools-server").options == ["first", "second", "third"]
            assert "Protocol" in "\n".join(m.value for m in at.markdown)
    finally:
        _close_all(at)


def test_adding_a_server_next_to_one_from_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    listed = {"command": SCRIPTED_STDIO.command, "args": list(SCRIPTED_STDIO.args)}
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"from-file": listed}})
    try:
        assert "from-file" in at.session_state["mcp_clients"], "the bootstrap connects mcp.json's servers"
        _add_stdio(at, "typed")
        assert not at.exception, at.exception
        assert at.selectbox(key="tools-server").value == "typed"
        assert set(at.session_state["mcp_clients"]) == {"from-file", "typed"}
    finally:
        _close_all(at)


def test_a_failed_second_server_is_chosen_and_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    listed = {"command": SCRIPTED_STDIO.command, "args": list(SCRIPTED_STDIO.args)}
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"from-file": listed}})
    try:
        at.radio(key="tools-add-kind").set_value("Command (stdio)").run()
        at.text_input(key="tools-add-name").input("broken")
        at.text_input(key="tools-add-command").input("sh")
        at.text_input(key="tools-add-args").input("-c 'echo no such database >&2; exit 3'")
        at.button(key="tools-add-connect").click().run()
        assert not at.exception, at.exception
        assert at.selectbox(key="tools-server").value == "broken"
        errors = "\n".join(error.value for error in at.error)
        assert "Could not connect to **broken**" in errors and "no such database" in errors
    finally:
        _close_all(at)
