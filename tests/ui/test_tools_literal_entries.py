"""Entries typed on the Tools page are taken literally: `${VAR}` is expanded only in mcp.json as the
operator wrote it (issue 11). A scripted loopback server stands in for a server of the person's own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply
from yiem.mcp import load_mcp_config, resolve_server

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "tools.py")
SECRET = "sk-env-only-31c8e0d2aa"


@pytest.fixture
def loopback_app() -> Iterator[None]:
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "127.0.0.1")
    yield
    st_config.set_option("server.address", before)


def _page_text(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in (*at.markdown, *at.caption, *at.error, *at.warning, *at.code))


def test_a_typed_url_and_header_are_never_filled_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer, loopback_app: Any
) -> None:
    monkeypatch.setenv("YIEM_TEST_SECRET", SECRET)
    config_path = tmp_path / "mcp.json"
    config_path.write_text(json.dumps({"mcpServers": {}}))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(config_path))
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    scripted_server.script(*(json_reply({"detail": "no such thing"}, status=404) for _ in range(4)))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="tools-add-name").input("mine")
    at.text_input(key="tools-add-url").input(f"{scripted_server.url}/mcp/${{YIEM_TEST_SECRET}}")
    at.text_area(key="tools-add-headers").input("X-Token: ${YIEM_TEST_SECRET}")
    at.checkbox(key="tools-add-save").check()
    at.button(key="tools-add-connect").click().run()
    assert not at.exception, at.exception

    assert scripted_server.requests, "the typed URL was asked"
    for request in scripted_server.requests:
        assert SECRET not in request.path and SECRET not in str(request.headers)
        assert request.headers.get("X-Token") == "${YIEM_TEST_SECRET}"
    assert SECRET not in _page_text(at)
    # What a typed URL answers (here a page that is not MCP) is not quoted back.
    assert "answered HTTP 404" in _page_text(at) and "no such thing" not in _page_text(at)
    # Saved to mean what was typed: a later session reading mcp.json gets the literal text back.
    saved = config_path.read_text()
    assert SECRET not in saved
    entry = load_mcp_config(config_path).servers["mine"]
    resolved: Any = resolve_server("mine", entry)
    assert resolved.url.endswith("/mcp/${YIEM_TEST_SECRET}")
    assert resolved.headers == {"X-Token": "${YIEM_TEST_SECRET}"}


def test_mcp_json_as_the_operator_wrote_it_is_still_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YIEM_TEST_SECRET", SECRET)
    config_path = tmp_path / "mcp.json"
    written = {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${YIEM_TEST_SECRET}"}}
    config_path.write_text(json.dumps({"mcpServers": {"ops": written}}))
    resolved: Any = resolve_server("ops", load_mcp_config(config_path).servers["ops"])
    assert resolved.headers == {"Authorization": f"Bearer {SECRET}"}
