"""Tasks at 2026-07-28: the `io.modelcontextprotocol/tasks` extension (SEP-2663).

A client opts in per request by declaring the extension in that request's capabilities; the server
then decides whether `tools/call` runs as a task and answers with a handle (`resultType: "task"`).
The client polls `tasks/get` until the task ends (its result or error comes inline), answers an
`input_required` task's questions with `tasks/update`, and stops it with `tasks/cancel`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from yiem.mcp._input_required import Handler, answer_all
from yiem.mcp._revision import CLIENT_CAPABILITIES_KEY
from yiem.mcp._rpc import ProgressCallback
from yiem.mcp.errors import McpCancelledError, McpError, McpProtocolError, McpTimeoutError
from yiem.mcp.models import McpTask
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)
TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks"
MISSING_REQUIRED_CAPABILITY = -32021
# The server's poll interval is a hint; a slow one is capped so a finished task is seen soon,
# a zero one floored so polling never spins.
MIN_POLL_S = 0.05
MAX_POLL_S = 2.0
Request = Callable[..., dict[str, Any]]
TaskReport = Callable[[McpTask], None]


def opt_in(params: dict[str, Any]) -> dict[str, Any]:
    """`params` declaring the tasks extension for this one request."""
    meta = dict(params.get("_meta") or {})
    meta[CLIENT_CAPABILITIES_KEY] = {"extensions": {TASKS_EXTENSION_ID: {}}}
    return {**params, "_meta": meta}


def requires_tasks(error: McpError) -> bool:
    """Whether the server refused a call because the tool only runs as a task (-32021 naming tasks)."""
    if error.code != MISSING_REQUIRED_CAPABILITY or not isinstance(error.data, dict):
        return False
    required = error.data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION_ID in extensions


def task_from_wire(raw: Mapping[str, Any], label: str) -> McpTask:
    """A SEP-2663 task (`ttlMs`, `pollIntervalMs`) as yiem's `McpTask`."""
    task_id, status = raw.get("taskId"), raw.get("status")
    if not isinstance(task_id, str) or not isinstance(status, str):
        raise McpProtocolError(f"MCP server {label} sent a task without a taskId or status", data=dict(raw))
    ttl, poll = raw.get("ttlMs"), raw.get("pollIntervalMs")
    message = raw.get("statusMessage")
    return McpTask(
        task_id=task_id,
        status=status,
        status_message=message if isinstance(message, str) else None,
        created_at=raw.get("createdAt") if isinstance(raw.get("createdAt"), str) else None,
        last_updated_at=raw.get("lastUpdatedAt") if isinstance(raw.get("lastUpdatedAt"), str) else None,
        ttl=ttl if isinstance(ttl, int) else None,
        poll_interval=poll if isinstance(poll, int) else None,
    )


def call_tool(
    request: Request,
    name: str,
    arguments: dict[str, Any],
    *,
    as_task: bool | None,
    timeout: float | None,
    default_timeout: float,
    on_progress: ProgressCallback | None,
    signal: AbortSignal | None,
    report: TaskReport,
    handlers: Mapping[str, Handler],
    label: str,
) -> dict[str, Any]:
    """`tools/call` at 2026-07-28, opted in to tasks when asked or when the tool requires it, and a
    task the server made followed to its end; the result as the server sent it."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    options = {"timeout": timeout, "on_progress": on_progress, "signal": signal}
    try:
        reply = request("tools/call", opt_in(params) if as_task else params, **options)
    except McpError as exc:
        if as_task or not requires_tasks(exc):
            raise
        reply = request("tools/call", opt_in(params), **options)
    if reply.get("resultType") != "task":
        return reply
    task = task_from_wire(reply, label)
    report(task)
    return follow(request, task, timeout or default_timeout, signal, report, handlers, label)


def follow(
    request: Request,
    task: McpTask,
    timeout: float,
    signal: AbortSignal | None,
    report: TaskReport,
    handlers: Mapping[str, Handler],
    label: str,
) -> dict[str, Any]:
    """Poll the task until it ends: its result, or `McpError` for a failed, cancelled or aborted one."""
    woken = threading.Event()
    unsubscribe = signal.on_abort(lambda reason: woken.set()) if signal is not None else None
    # A task may run for its whole time to live; the wait is the longer of that and the timeout.
    deadline = time.monotonic() + max(timeout, (task.ttl or 0) / 1000)
    interval = _interval(task)
    try:
        while True:
            if signal is not None and signal.aborted:
                _cancel_quietly(request, task.task_id, report, label)
                raise McpCancelledError(f"the task {task.task_id} on MCP server {label} was cancelled")
            if time.monotonic() > deadline:
                raise McpTimeoutError(f"the task {task.task_id} on MCP server {label} did not end in time")
            raw = request("tasks/get", opt_in({"taskId": task.task_id}))
            task = task_from_wire(raw, label)
            report(task)
            if task.status == "completed":
                return _result(raw, task, label)
            if task.status == "failed":
                raise _failure(raw, task, label)
            if task.status == "cancelled":
                raise McpCancelledError(f"the task {task.task_id} on MCP server {label} was cancelled")
            if task.status == "input_required":
                asked = raw.get("inputRequests")
                if not isinstance(asked, dict) or not asked:
                    raise McpProtocolError(
                        f"MCP server {label} said task {task.task_id} needs input but asked nothing",
                        data=raw,
                    )
                answers = answer_all(asked, handlers, label)
                update = {"taskId": task.task_id, "inputResponses": answers}
                request("tasks/update", opt_in(update))
                continue
            interval = _interval(task, interval)
            woken.wait(interval)
    finally:
        if unsubscribe is not None:
            unsubscribe()


def get(request: Request, task_id: str, label: str) -> McpTask:
    """Where a task stands (`tasks/get`)."""
    return task_from_wire(request("tasks/get", opt_in({"taskId": task_id})), label)


def cancel(request: Request, task_id: str, label: str) -> McpTask:
    """Ask the server to stop a task (`tasks/cancel`); the task as it stands after."""
    request("tasks/cancel", opt_in({"taskId": task_id}))
    return get(request, task_id, label)


def _cancel_quietly(request: Request, task_id: str, report: TaskReport, label: str) -> None:
    # As the 2025 path does: a cancel that fails is logged, and the call still ends as cancelled.
    try:
        report(cancel(request, task_id, label))
    except McpError as exc:
        logger.info("cancelling task %s on MCP server %s failed: %s", task_id, label, exc)


def _interval(task: McpTask, current: float | None = None) -> float:
    hint = task.poll_interval / 1000 if task.poll_interval is not None else (current or MIN_POLL_S * 4)
    return min(max(hint, MIN_POLL_S), MAX_POLL_S)


def _result(raw: Mapping[str, Any], task: McpTask, label: str) -> dict[str, Any]:
    result = raw.get("result")
    if not isinstance(result, dict):
        raise McpProtocolError(f"MCP server {label} finished task {task.task_id} without a result", data=raw)
    return {key: value for key, value in result.items() if key != "_meta"}


def _failure(raw: Mapping[str, Any], task: McpTask, label: str) -> McpError:
    error = raw.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return McpError(error["code"], str(error.get("message") or "the task failed"), error.get("data"))
    words = task.status_message or "no reason given"
    return McpError(-32603, f"the task {task.task_id} on MCP server {label} failed: {words}")
