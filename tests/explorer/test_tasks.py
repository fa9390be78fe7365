"""Tool calls as tasks on the Tools page's side, against server-everything with an optional-task tool."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer, count_step
from yiem.explorer import (
    CallStatus,
    ToolCallRun,
    cancels_tasks,
    created_words,
    fetch_result,
    has_result,
    lists_tasks,
    status_words,
    task_rows,
    task_toggle,
    ttl_words,
)
from yiem.mcp import McpClient, McpError, McpTask


@pytest.fixture(scope="module")
def tasks_client(everything_tasks_stdio: StdioServer) -> Iterator[McpClient]:
    with McpClient.stdio(everything_tasks_stdio.command, everything_tasks_stdio.args) as client:
        client.list_tools()
        yield client


def _statuses_until_done(run: ToolCallRun) -> list[tuple[str, str | None]]:
    seen: list[tuple[str, str | None]] = []
    while not run.wait(0.02):
        task = run.task
        if task is not None and (task.status, task.status_message) not in seen:
            seen.append((task.status, task.status_message))
    return seen


def test_the_toggle_follows_the_tools_task_support(tasks_client: McpClient) -> None:
    tools = {tool.name: tool for tool in tasks_client.list_tools()}
    assert task_toggle(tools["count-slowly"]) == (False, True)
    assert task_toggle(tools["simulate-research-query"]) == (True, False)
    assert task_toggle(tools["echo"]) is None
    assert lists_tasks(tasks_client.capabilities) and cancels_tasks(tasks_client.capabilities)
    assert not lists_tasks({"tools": {}}) and not cancels_tasks({"tasks": {"list": {}}})
    # A 2026-07-28 server with the tasks extension decides per call: every tool may be asked.
    offers = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert task_toggle(tools["echo"], offers) == (False, True)
    assert task_toggle(tools["simulate-research-query"], offers) == (True, False)


def test_a_call_run_as_a_task_shows_the_task_as_it_changes(tasks_client: McpClient) -> None:
    run = ToolCallRun(tasks_client, "everything", "count-slowly", {"steps": 3, "stepMs": 300}, as_task=True)
    seen = _statuses_until_done(run.start())
    record = run.record
    assert record.status is CallStatus.DONE, record.error
    assert record.request["params"]["task"] == {}
    assert record.result is not None and record.result.text == "Counted to 3"
    assert ("working", "Step 2 of 3") in seen
    assert record.task is not None and record.task.status == "completed" and record.task.ttl == 120_000


def test_the_same_tool_without_the_toggle_is_a_plain_call(tasks_client: McpClient) -> None:
    run = ToolCallRun(tasks_client, "everything", "count-slowly", {"steps": 1, "stepMs": 10}).start()
    assert run.wait(30)
    assert run.record.task is None and "task" not in run.record.request["params"]
    assert run.record.result is not None and run.record.result.text == "Counted to 1"


def test_cancel_sends_tasks_cancel_and_records_the_cancelled_status(tasks_client: McpClient) -> None:
    run = ToolCallRun(
        tasks_client, "everything", "count-slowly", {"steps": 50, "stepMs": 100}, as_task=True
    ).start()
    while (task := run.task) is None or count_step(task.status_message) < 2:
        assert not run.wait(0.02), run.record.error
    run.cancel()
    assert run.wait(30)
    record = run.record
    assert record.status is CallStatus.CANCELLED
    assert record.task is not None and record.task.status == "cancelled"
    assert (
        record.error
        == "The task was cancelled. The server's status: Cancelled — Client cancelled task execution."
    )
    assert tasks_client.get_task(record.task.task_id).status == "cancelled"

    rows = {row["Task"]: row for row in task_rows(tasks_client.list_tasks())}
    assert rows[record.task.task_id]["Status"].startswith("Cancelled")
    assert rows[record.task.task_id]["Kept for"] == "2 min"
    assert rows[record.task.task_id]["Created"].endswith(" UTC")
    assert not has_result(record.task)
    with pytest.raises(McpError, match="no result"):
        fetch_result(tasks_client, record.task)


def test_get_result_of_a_finished_task_from_the_list(tasks_client: McpClient) -> None:
    started = tasks_client.start_tool_task("count-slowly", {"steps": 2, "stepMs": 10})
    result = fetch_result(tasks_client, started)
    (listed,) = [task for task in tasks_client.list_tasks() if task.task_id == started.task_id]
    assert has_result(listed) and result.text == "Counted to 2"


def test_words_for_status_ttl_and_creation() -> None:
    task = McpTask(task_id="t1", status="input_required", status_message="Which one?", ttl=45_000)
    assert status_words(task) == "Waiting for your answer — Which one?"
    assert ttl_words(task.ttl) == "45 s" and ttl_words(300_000) == "5 min" and ttl_words(None) == "no limit"
    assert ttl_words(3 * 3_600_000) == "3 h"
    assert created_words(task) == "—"
    assert created_words(McpTask(task_id="t2", status="working", created_at="2026-12-02T01:40:19.669Z")) == (
        "01:40:19 UTC"
    )


def test_a_task_cancelled_from_the_list_ends_the_running_call_as_cancelled(tasks_client: McpClient) -> None:
    """The server then answers tasks/result with an error (no result stored); the call says cancelled."""
    run = ToolCallRun(
        tasks_client, "everything", "count-slowly", {"steps": 50, "stepMs": 100}, as_task=True
    ).start()
    while (task := run.task) is None:
        assert not run.wait(0.02), run.record.error
    tasks_client.cancel_task(task.task_id)
    assert run.wait(30)
    record = run.record
    assert record.status is CallStatus.CANCELLED, record.error
    assert (
        record.error
        == "The task was cancelled. The server's status: Cancelled — Client cancelled task execution."
    )
