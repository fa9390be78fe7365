"""The Tools page's connection panel under AppTest: adding servers one after another, the example server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import SCRIPTED_STDIO, time_server_command
from tests.mcp_servers.scripted import ScriptedHttpServer
from yiem.explorer import EXAMPLE_SERVER_VARIABLE
from yiem.scripted_llm import ScriptedLlm
from yiem.types import LlmModel

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "ui" / "pages" / "tools.py")
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


def test_a_remote_image_in_the_servers_title_is_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    # The title is the server's own words: an image URL in it would be fetched the moment it is drawn.
    title = ["--title", "Clock ![t](http://127.0.0.1:9/leak.png)"]
    listed = {"command": SCRIPTED_STDIO.command, "args": [*SCRIPTED_STDIO.args, *title]}
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"titled": listed}})
    try:
        assert "titled" in at.session_state["mcp_clients"]
        header = next(m.value for m in at.markdown if "connected" in m.value)
        assert "[:material/image: image: t](<http://127.0.0.1:9/leak.png>)" in header
        assert "![t]" not in header.replace("\\![", "")
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


def _first_look(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, example: str | None) -> AppTest:
    """The whole app as a new user meets it: no mcp.json; `make run` set the example's command."""
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    if example is None:
        monkeypatch.delenv(EXAMPLE_SERVER_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(EXAMPLE_SERVER_VARIABLE, example)
    monkeypatch.chdir(ROOT)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


def test_first_look_offers_the_example_server_and_the_chat_can_use_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12: with no mcp.json the Tools page was empty; now one click connects mcp-server-time."""
    at = _first_look(monkeypatch, tmp_path, time_server_command())
    llm = ScriptedLlm(
        [
            {
                "toolCalls": [
                    {"id": "c1", "name": "get_current_time", "arguments": {"timezone": "Europe/Oslo"}}
                ]
            },
            "It is evening in Oslo.",
        ]
    )
    at.session_state["llm_override"] = (llm, LlmModel(id="scripted-1", provider="scripted"))
    at.run()
    at.switch_page("ui/pages/tools.py").run()
    assert not at.exception, at.exception
    try:
        offer = "\n".join(m.value for m in at.markdown)
        assert "mcp-server-time" in offer
        at.button(key="tools-add-example").click().run()
        assert not at.exception, at.exception
        assert set(at.session_state["mcp_clients"]) == {"time"}
        assert at.selectbox(key="tools-server").value == "time"
        assert "get_current_time" in at.radio(key="tools-tool:time").options
        assert "get_current_time" in at.session_state["enabled_tools"], "the chat may call it at once"
        assert not (tmp_path / "no-mcp.json").exists(), "nothing is written without asking"

        at.switch_page("ui/pages/chat.py").run()
        at.chat_input[0].set_value("What time is it in Oslo?").run()
        assert not at.exception, at.exception
        assert "get_current_time" in llm.requests[0].tool_names
        call = next(e for e in at.expander if "get_current_time" in e.label)
        assert call.icon == ":material/check_circle:", "the call succeeded"
        result = " ".join(code.value for code in call.code)
        assert '"timezone": "Europe/Oslo"' in result and '"datetime"' in result
    finally:
        _close_all(at)


def test_without_the_example_installed_the_first_look_says_how_to_add_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for example in (None, str(tmp_path / "not-installed" / "mcp-server-time")):
        at = _first_look(monkeypatch, tmp_path, example)
        at.run()
        at.switch_page("ui/pages/tools.py").run()
        assert not at.exception, at.exception
        assert "tools-add-example" not in [button.key for button in at.button]
        assert any(info.value.startswith("No MCP servers yet") for info in at.info)


def test_make_run_installs_the_example_with_the_tests_installer() -> None:
    """run_app.sh and setup_mcp.sh share scripts/install_pypi_server.sh (cached: returns at once)."""
    script = (ROOT / "scripts" / "run_app.sh").read_text()
    assert "scripts/install_pypi_server.sh mcp-server-time" in script
    assert EXAMPLE_SERVER_VARIABLE in script
    found = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install_pypi_server.sh"), "mcp-server-time"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert found.stdout.strip() == time_server_command()
    assert found.stderr == "", "already installed: nothing to do"
