"""Tool calls as server-side tasks against the real server-everything (SDK task store): an optional-task
tool both ways, status as it changes, result retrieval, failure, Cancel, and tasks/list."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer, count_step
from yiem.mcp import McpCancelledError, McpClient, McpError, McpProgress, McpTask
from yiem.types import AbortSignal


@pytest.fixture
def tasks_client(everything_tasks_stdio: StdioServer) -> Iterator[McpClient]:
    with McpClient.stdio(everything_tasks_stdio.command, everything_tasks_stdio.args) as client:
        client.list_tools()
        yield client


def _sent_calls(client: McpClient) -> list[dict[str, object]]:
    return [m["params"] for _, d, m in client.protocol_log if d == "sent" and m.get("method") == "tools/call"]


def test_an_optional_task_tool_runs_plainly_by_default_and_as_a_task_when_asked(
    tasks_client: McpClient,
) -> None:
    tools = {tool.name: tool for tool in tasks_client.list_tools()}
    assert tools["count-slowly"].task_support == "optional"

    plain = tasks_client.call_tool("count-slowly", {"steps": 2, "stepMs": 20})
    assert plain.text == "Counted to 2"
    assert "task" not in _sent_calls(tasks_client)[-1]

    seen: list[McpTask] = []
    progress: list[McpProgress] = []
    result = tasks_client.call_tool(
        "count-slowly",
        {"steps": 3, "stepMs": 300},
        as_task=True,
        on_task=seen.append,
        on_progress=progress.append,
    )
    assert result.text == "Counted to 3"
    assert "task" in _sent_calls(tasks_client)[-1]
    assert len({task.task_id for task in seen}) == 1
    assert seen[0].status == "working" and seen[0].ttl == 120_000 and seen[0].poll_interval == 100
    messages = [task.status_message for task in seen]
    assert "Step 1 of 3" in messages and "Step 3 of 3" in messages
    assert seen[-1].status == "completed"
    assert any(p.message == "working: Step 2 of 3 (kept 120 s)" for p in progress)
    # The finished task's result can be fetched again by its id.
    assert tasks_client.task_result(seen[0].task_id).text == "Counted to 3"


def test_a_forbidden_tool_asked_as_a_task_runs_plainly(tasks_client: McpClient) -> None:
    seen: list[McpTask] = []
    assert tasks_client.call_tool("echo", {"message": "hi"}, as_task=True, on_task=seen.append).text
    assert "task" not in _sent_calls(tasks_client)[-1] and seen == []


def test_a_required_task_tool_cannot_be_run_plainly(tasks_client: McpClient) -> None:
    seen: list[McpTask] = []
    result = tasks_client.call_tool(
        "simulate-research-query", {"topic": "tides"}, as_task=False, on_task=seen.append
    )
    assert "Research Report: tides" in result.text
    assert "task" in _sent_calls(tasks_client)[-1] and seen[-1].status == "completed"


def test_a_failing_task_ends_failed_with_its_error_result(tasks_client: McpClient) -> None:
    seen: list[McpTask] = []
    result = tasks_client.call_tool(
        "count-slowly", {"steps": 4, "stepMs": 50, "fail": True}, as_task=True, on_task=seen.append
    )
    assert result.is_error and result.text == "Counting broke at step 2"
    assert seen[-1].status == "failed"


def _cancelled_at_step_two(client: McpClient, slow_report: float = 0.0) -> list[McpTask]:
    """Run a long counting task and press Cancel at its second step; what `on_task` heard.
    `slow_report` holds the report of the cancelled status that long."""
    signal = AbortSignal()
    seen: list[McpTask] = []

    def on_task(task: McpTask) -> None:
        if task.status == "cancelled":
            time.sleep(slow_report)
        seen.append(task)
        if count_step(task.status_message) >= 2 and not signal.aborted:
            # From another thread, as the page's Cancel button does.
            threading.Thread(target=signal.abort, args=("the person pressed Cancel",)).start()

    with pytest.raises(McpCancelledError):
        client.call_tool(
            "count-slowly", {"steps": 50, "stepMs": 100}, as_task=True, on_task=on_task, signal=signal
        )
    return seen


def test_cancel_sends_tasks_cancel_and_the_task_ends_cancelled(tasks_client: McpClient) -> None:
    seen = _cancelled_at_step_two(tasks_client)
    assert seen[-1].status == "cancelled"
    task_id = seen[-1].task_id
    assert tasks_client.get_task(task_id).status == "cancelled"
    sent = [m.get("method") for _, d, m in tasks_client.protocol_log if d == "sent"]
    assert "tasks/cancel" in sent
    listed = {task.task_id: task for task in tasks_client.list_tasks()}
    assert listed[task_id].status == "cancelled" and listed[task_id].created_at
    # A cancelled task has no result: the server's error reaches the caller in words.
    with pytest.raises(McpError, match="no result"):
        tasks_client.task_result(task_id)


def test_a_cancelled_call_ends_only_once_the_cancel_is_answered_and_reported(tasks_client: McpClient) -> None:
    """The abort wakes the call before its listener, on the aborting thread, has sent `tasks/cancel`
    (ci46): a slow `on_task` makes that window wide, and the call must still end after the report."""
    assert _cancelled_at_step_two(tasks_client, slow_report=0.5)[-1].status == "cancelled"


def test_required_task_over_streamable_http_reports_its_status(everything_http_url: str) -> None:
    seen: list[McpTask] = []
    with McpClient.http(everything_http_url) as client:
        client.list_tools()
        result = client.call_tool("simulate-research-query", {"topic": "tides"}, on_task=seen.append)
        listed = {task.task_id for task in client.list_tasks()}
    assert "Research Report: tides" in result.text
    assert any(task.status_message == "Gathering sources..." for task in seen)
    assert seen[-1].status == "completed" and seen[-1].task_id in listed


def test_a_tasks_result_error_after_a_cancel_elsewhere_reports_the_cancelled_task(
    tasks_client: McpClient,
) -> None:
    seen: list[McpTask] = []

    def on_task(task: McpTask) -> None:
        seen.append(task)
        if len(seen) == 1:  # another client, or the task list, cancels it
            threading.Thread(target=tasks_client.cancel_task, args=(task.task_id,)).start()

    with pytest.raises(McpError, match="no result stored"):
        tasks_client.call_tool("count-slowly", {"steps": 50, "stepMs": 100}, as_task=True, on_task=on_task)
    assert seen[-1].status == "cancelled"
