"""Server-side tasks on the Tools page: whether a call runs as one, its status in words, the task list."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from yiem.mcp import TASKS_EXTENSION_ID, CallToolResult, McpClient, McpTask, McpTool
from yiem.redaction import redact

_STATUS_WORDS = {
    "working": "Working",
    "input_required": "Waiting for your answer",
    "completed": "Completed",
    "failed": "Failed",
    "cancelled": "Cancelled",
}
# How long "Get result" waits for a finished task's result (the server has it already).
RESULT_TIMEOUT_S = 30.0


def task_toggle(tool: McpTool, capabilities: Mapping[str, Any] | None = None) -> tuple[bool, bool] | None:
    """The "Run as a task" toggle for `tool`: (on by default, can be turned off); None when it has none.

    A 2026-07-28 server that offers the tasks extension does not say which tools run as tasks (it
    decides per call), so each of its tools gets the toggle, off by default."""
    if tool.task_support == "required":
        return True, False
    if tool.task_support == "optional" or offers_task_extension(capabilities or {}):
        return False, True
    return None


def offers_task_extension(capabilities: Mapping[str, Any]) -> bool:
    """Whether the server declared the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`)."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION_ID in extensions


def lists_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether the server declared `tasks.list`, so the page may show its tasks."""
    tasks = capabilities.get("tasks")
    return isinstance(tasks, dict) and "list" in tasks


def cancels_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether the server declared `tasks.cancel`."""
    tasks = capabilities.get("tasks")
    return isinstance(tasks, dict) and "cancel" in tasks


def status_words(task: McpTask) -> str:
    """The task's status for a person: "Cancelled — Client cancelled task execution."."""
    words = _STATUS_WORDS.get(task.status, task.status.replace("_", " ").capitalize())
    return f"{words} — {redact(task.status_message)}" if task.status_message else words


def ttl_words(ttl_ms: int | None) -> str:
    """How long the server keeps the task after it was made: "2 min", "45 s"; "no limit" when unset."""
    if ttl_ms is None:
        return "no limit"
    seconds = ttl_ms / 1000
    if seconds < 120:
        return f"{seconds:g} s"
    minutes = seconds / 60
    return f"{minutes:g} min" if minutes < 120 else f"{minutes / 60:g} h"


def created_words(task: McpTask) -> str:
    """When the task was made, as "01:40:19 UTC"; the server's text when it is not a timestamp."""
    if not task.created_at:
        return "—"
    try:
        return f"{datetime.fromisoformat(task.created_at):%H:%M:%S} UTC"
    except ValueError:
        return task.created_at


def task_rows(tasks: list[McpTask]) -> list[dict[str, str]]:
    """tasks/list as table rows, newest first."""
    ordered = sorted(tasks, key=lambda task: task.created_at or "", reverse=True)
    return [
        {
            "Task": task.task_id,
            "Status": status_words(task),
            "Created": created_words(task),
            "Kept for": ttl_words(task.ttl),
        }
        for task in ordered
    ]


def has_result(task: McpTask) -> bool:
    """Completed or failed: `tasks/result` answers at once (a cancelled task has none)."""
    return task.status in ("completed", "failed")


def fetch_result(client: McpClient, task: McpTask) -> CallToolResult:
    """A finished task's result (`tasks/result`); raises `McpError` when the server has none."""
    return client.task_result(task.task_id, timeout=RESULT_TIMEOUT_S)
