"""A tool call run as a server-side task: start it, report its status, wait for its result, cancel it."""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from yiem.mcp._rpc import ProgressCallback
from yiem.mcp.errors import McpError
from yiem.mcp.models import McpProgress, McpTask
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)
DEFAULT_POLL_S = 1.0


class TaskSession(Protocol):
    """What a task run needs of McpClient; named here so this module never imports the client."""

    @property
    def timeout(self) -> float: ...

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]: ...

    def start_tool_task(
        self, name: str, arguments: dict[str, Any] | None = None, ttl_ms: int | None = None
    ) -> McpTask: ...

    def get_task(self, task_id: str) -> McpTask: ...

    def cancel_task(self, task_id: str) -> McpTask: ...


def run_tool_task(
    client: TaskSession,
    name: str,
    arguments: dict[str, Any],
    timeout: float | None,
    on_progress: ProgressCallback | None,
    signal: AbortSignal | None,
) -> dict[str, Any]:
    """`tools/call` as a task, then `tasks/result`; the status is polled and reported as progress.

    `tasks/result` is what carries the server's questions (elicitation) while the task needs input,
    so it is asked at once and waited on; Cancel sends `tasks/cancel`.
    """
    task = client.start_tool_task(name, arguments)
    stop = threading.Event()
    poller = None
    if on_progress is not None:
        on_progress(task_progress(task, 0))
        poller = threading.Thread(
            target=_poll, args=(client, task, on_progress, stop), name="mcp-task-poll", daemon=True
        )
        poller.start()
    unsubscribe = signal.on_abort(lambda reason: _cancel(client, task.task_id)) if signal else None
    # A task may run for its whole time to live; the server stays silent while it does.
    wait = max(timeout or client.timeout, (task.ttl or 0) / 1000)
    try:
        result = client.request("tasks/result", {"taskId": task.task_id}, timeout=wait, signal=signal)
        return {key: value for key, value in result.items() if key != "_meta"}
    finally:
        stop.set()
        if unsubscribe is not None:
            unsubscribe()
        if poller is not None:
            poller.join(timeout=2.0)


def task_progress(task: McpTask, polls: int) -> McpProgress:
    """A task's status as a progress report: the status and its message, counted in polls."""
    words = task.status.replace("_", " ")
    if task.status_message:
        words += f": {task.status_message}"
    if task.ttl:
        words += f" (kept {task.ttl / 1000:g} s)"
    return McpProgress(progress=polls, message=words)


def _poll(client: TaskSession, task: McpTask, on_progress: ProgressCallback, stop: threading.Event) -> None:
    interval = (task.poll_interval or DEFAULT_POLL_S * 1000) / 1000
    polls = 0
    last = (task.status, task.status_message)
    while not stop.wait(interval):
        try:
            current = client.get_task(task.task_id)
        except McpError as exc:
            logger.info("polling task %s failed: %s", task.task_id, exc)
            return
        polls += 1
        if (current.status, current.status_message) != last:
            last = (current.status, current.status_message)
            on_progress(task_progress(current, polls))
        if current.finished:
            return


def _cancel(client: TaskSession, task_id: str) -> None:
    try:
        client.cancel_task(task_id)
    except McpError as exc:
        logger.info("cancelling task %s failed: %s", task_id, exc)
