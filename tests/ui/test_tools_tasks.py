"""The Tools page's task view under AppTest (issue 16), against server-everything with an optional-task
tool: the "Run as a task" toggle, a running task's status and Cancel, and the server's task list."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_page import TIMEOUT, _call, _choose_tool, _field, _page, address

__all__ = ["address"]  # a fixture, imported for these tests

CANCELLED = "Cancelled — Client cancelled task execution."


@pytest.fixture
def tasks_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_tasks_stdio: StdioServer, address: Any
) -> Iterator[AppTest]:
    entry = {"command": everything_tasks_stdio.command, "args": list(everything_tasks_stdio.args)}
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"everything": entry}})
    if "everything" not in at.session_state["mcp_clients"]:
        at.button(key="tools-connect").click().run()
    assert not at.exception, at.exception
    yield at
    for client in at.session_state["mcp_clients"].values():
        client.close()


def _markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def _rerun_until(at: AppTest, wanted: str) -> None:
    """Redraw (as the browser's timer does) until some markdown on the page contains `wanted`."""
    deadline = time.monotonic() + TIMEOUT
    while not any(wanted in text for text in _markdown(at)):
        assert not at.exception, at.exception
        assert time.monotonic() < deadline, f"{wanted!r} never shown: {_markdown(at)}"
        time.sleep(0.2)
        at.run()


def test_a_required_task_tool_has_the_toggle_on_and_locked(tasks_page: AppTest) -> None:
    at = tasks_page
    _choose_tool(at, "simulate-research-query")
    toggle = at.toggle(key="tools-as-task:everything:simulate-research-query")
    assert toggle.value is True and toggle.disabled
    _choose_tool(at, "echo")
    assert not [t for t in at.toggle if t.key and t.key.startswith("tools-as-task:")]


def test_an_optional_task_runs_as_a_task_shows_its_status_and_cancels(tasks_page: AppTest) -> None:
    at = tasks_page
    _choose_tool(at, "count-slowly")
    toggle = at.toggle(key="tools-as-task:everything:count-slowly")
    assert toggle.value is False and not toggle.disabled
    toggle.set_value(True).run()
    _field(at, "count-slowly", "steps").set_value(60)
    _field(at, "count-slowly", "stepMs").set_value(500)
    at.button(key="tools-call").click().run()
    _rerun_until(at, "· Working — Step ")
    run = at.session_state["tools-run"]
    assert run.task is not None
    assert any(f"**Task** `{run.task.task_id}`" in text for text in _markdown(at))
    assert any("kept for 2 min · checked every 0.1 s" in c.value for c in at.caption)

    at.button(key="tools-cancel").click().run()
    assert not at.exception, at.exception
    record = at.session_state["tools-last"][("everything", "count-slowly")]
    assert record.status == "cancelled" and record.task.status == "cancelled"
    assert any(w.value.startswith("Cancelled after") for w in at.warning)
    assert any(f"`{record.task.task_id}` · {CANCELLED}" in text for text in _markdown(at))
    client = at.session_state["mcp_clients"]["everything"]
    sent = [m.get("method") for _, d, m in client.protocol_log if d == "sent"]
    assert "tasks/cancel" in sent

    # The same tool with the toggle off is an ordinary call.
    at.toggle(key="tools-as-task:everything:count-slowly").set_value(False).run()
    _field(at, "count-slowly", "steps").set_value(1)
    _call(at)
    record = at.session_state["tools-last"][("everything", "count-slowly")]
    assert record.task is None and record.result.text == "Counted to 1"


def test_the_server_task_list_gets_results_and_cancels(tasks_page: AppTest) -> None:
    at = tasks_page
    client = at.session_state["mcp_clients"]["everything"]
    finished = client.start_tool_task("count-slowly", {"steps": 1, "stepMs": 10})
    assert client.task_result(finished.task_id).text == "Counted to 1"
    running = client.start_tool_task("count-slowly", {"steps": 80, "stepMs": 200})
    at.run()
    assert not at.exception, at.exception
    assert any(e.label == "Tasks on this server" for e in at.expander)

    get_running = at.button(key=f"tools-task-get:{running.task_id}")
    assert get_running.disabled  # a working task's result would keep the page waiting
    at.button(key=f"tools-task-get:{finished.task_id}").click().run()
    assert not at.exception, at.exception
    assert any(f"**Result of task** `{finished.task_id}`" in text for text in _markdown(at))
    assert "Counted to 1" in _markdown(at)
    assert at.button(key=f"tools-task-cancel:{finished.task_id}").disabled

    at.button(key=f"tools-task-cancel:{running.task_id}").click().run()
    assert not at.exception, at.exception
    assert f"Task {running.task_id}: {CANCELLED}" in [i.value for i in at.info]
    assert client.get_task(running.task_id).status == "cancelled"
    assert CANCELLED in _markdown(at)  # the list, read again, shows it cancelled
    assert at.button(key=f"tools-task-cancel:{running.task_id}").disabled


@pytest.fixture
def extension_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tasks_extension_stdio: StdioServer, address: Any
) -> Iterator[AppTest]:
    entry = {"command": tasks_extension_stdio.command, "args": list(tasks_extension_stdio.args)}
    # Named as the page helpers of test_tools_page expect.
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"everything": entry}})
    if "everything" not in at.session_state["mcp_clients"]:
        at.button(key="tools-connect").click().run()
    assert not at.exception, at.exception
    yield at
    for client in at.session_state["mcp_clients"].values():
        client.close()


def test_a_2026_server_with_the_tasks_extension_runs_a_tool_as_a_task(extension_page: AppTest) -> None:
    """SP-010 at 2026-07-28: the server decides per call, so each tool has the toggle, off; asked,
    the call goes as a task and the page shows the task and its result."""
    at = extension_page
    assert at.session_state["mcp_clients"]["everything"].protocol_version == "2026-07-28"
    _choose_tool(at, "slow_add")
    toggle = at.toggle(key="tools-as-task:everything:slow_add")
    assert toggle.value is False and not toggle.disabled
    toggle.set_value(True).run()
    _field(at, "slow_add", "a").set_value(20)
    _field(at, "slow_add", "b").set_value(22)
    at.button(key="tools-call").click().run()
    _rerun_until(at, "· Completed")
    record = at.session_state["tools-last"][("everything", "slow_add")]
    assert record.task is not None and record.task.status == "completed"
    assert record.result.text == "42"
    assert any(f"`{record.task.task_id}` · Completed" in text for text in _markdown(at))
