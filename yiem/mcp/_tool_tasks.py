"""A tool call run as a server-side task: start it, report its status, wait for its result, cancel it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from yiem.mcp import _ext_tasks
from yiem.mcp._rpc import ProgressCallback, RequestHandler
from yiem.mcp.errors import McpError
from yiem.mcp.models import CallToolResult, McpProgress, McpTask
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)
DEFAULT_POLL_S = 1.0
TaskCallback = Callable[[McpTask], None]


class ToolTaskMethods:
    """McpClient's tool calls and task methods (`tools/call`, with a task when the revision and tool
    say so, and `tasks/*`), each choosing by revision: the 2025 core tasks or the 2026-07-28 extension."""

    _task_support: dict[str, str]

    @property
    def timeout(self) -> float:
        raise NotImplementedError

    @property
    def request_handlers(self) -> dict[str, RequestHandler]:
        raise NotImplementedError

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _paginate(self, method: str, key: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    @property
    def stateless(self) -> bool:
        raise NotImplementedError

    @property
    def label(self) -> str:
        raise NotImplementedError

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
        *,
        as_task: bool | None = None,
        on_task: TaskCallback | None = None,
    ) -> CallToolResult:
        """Run a tool (SP-010); a failing tool gives `is_error`, a protocol failure raises `McpError`.

        A tool `list_tools` said requires a task runs as one, an optional one too with `as_task=True`;
        `on_task` hears the task as it changes, its status also comes as progress; `signal` cancels it.
        """
        raw = self.call_tool_raw(
            name, arguments, timeout, on_progress, signal, as_task=as_task, on_task=on_task
        )
        return CallToolResult.from_wire(raw)

    def call_tool_raw(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
        *,
        as_task: bool | None = None,
        on_task: TaskCallback | None = None,
    ) -> dict[str, Any]:
        """`call_tool`, the result as the server sent it (for a raw view)."""
        if self.stateless:
            # At 2026-07-28 the server decides, once the call opts in to the tasks extension.
            return _ext_tasks.call_tool(
                self.request,
                name,
                arguments or {},
                as_task=as_task,
                timeout=timeout,
                default_timeout=self.timeout,
                on_progress=on_progress,
                signal=signal,
                report=TaskReporter(on_progress, on_task),
                handlers=self.request_handlers,
                label=self.label,
            )
        if runs_as_task(self._task_support.get(name), as_task):
            return run_tool_task(self, name, arguments or {}, timeout, on_progress, signal, on_task)
        params = {"name": name, "arguments": arguments or {}}
        return self.request("tools/call", params, timeout=timeout, on_progress=on_progress, signal=signal)

    def start_tool_task(
        self, name: str, arguments: dict[str, Any] | None = None, ttl_ms: int | None = None
    ) -> McpTask:
        """Start `name` as a task (`tools/call` with `task`); the server answers with the task at once."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}, "task": {}}
        if ttl_ms is not None:
            params["task"]["ttl"] = ttl_ms
        return McpTask.model_validate(self.request("tools/call", params).get("task") or {})

    def get_task(self, task_id: str) -> McpTask:
        """Where the task stands (`tasks/get`)."""
        if self.stateless:
            return _ext_tasks.get(self.request, task_id, self.label)
        return McpTask.model_validate(self.request("tasks/get", {"taskId": task_id}))

    def task_result(
        self, task_id: str, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """The tool's result, waiting until the task ends (`tasks/result`)."""
        result = self.request("tasks/result", {"taskId": task_id}, timeout=timeout, signal=signal)
        return CallToolResult.from_wire(result)

    def cancel_task(self, task_id: str) -> McpTask:
        """Ask the server to stop the task (`tasks/cancel`)."""
        if self.stateless:
            return _ext_tasks.cancel(self.request, task_id, self.label)
        return McpTask.model_validate(self.request("tasks/cancel", {"taskId": task_id}))

    def list_tasks(self) -> list[McpTask]:
        """The tasks the server keeps for this session (`tasks/list`)."""
        return [McpTask.model_validate(raw) for raw in self._paginate("tasks/list", "tasks")]


def runs_as_task(support: str | None, as_task: bool | None) -> bool:
    """Whether a call goes as a task: always when required; when asked and the tool does not forbid it.

    `support` is None when `tools/list` has not named the tool; then only `as_task=True` makes a task.
    """
    if support == "required":
        return True
    return bool(as_task) and support != "forbidden"


def run_tool_task(
    client: ToolTaskMethods,
    name: str,
    arguments: dict[str, Any],
    timeout: float | None,
    on_progress: ProgressCallback | None,
    signal: AbortSignal | None,
    on_task: TaskCallback | None = None,
) -> dict[str, Any]:
    """`tools/call` as a task, then `tasks/result`; the status is polled and reported as it changes.

    `tasks/result` is what carries the server's questions (elicitation) while the task needs input,
    so it is asked at once and waited on. `on_task` hears the task when it starts, on each change, when
    it ends and when Cancel (the abort signal) has sent `tasks/cancel`; `on_progress` hears it in words.
    """
    task = client.start_tool_task(name, arguments)
    report = TaskReporter(on_progress, on_task)
    report(task)
    stop = threading.Event()
    poller = None
    if report.listening:
        poller = threading.Thread(
            target=_poll, args=(client, task, report, stop), name="mcp-task-poll", daemon=True
        )
        poller.start()
    cancel_sent = threading.Event()

    def cancel(reason: str | None) -> None:
        try:
            _cancel(client, task.task_id, report)
        finally:
            cancel_sent.set()

    unsubscribe = signal.on_abort(cancel) if signal else None
    # A task may run for its whole time to live; the server stays silent while it does.
    wait = max(timeout or client.timeout, (task.ttl or 0) / 1000)
    try:
        try:
            result = client.request("tasks/result", {"taskId": task.task_id}, timeout=wait, signal=signal)
        except McpError:
            if signal is not None and signal.aborted:
                # The abort wakes this wait before its listener has sent `tasks/cancel` on the aborting
                # thread: the caller hears of the cancel once the server's answer is reported (ci46).
                cancel_sent.wait(client.timeout)
            elif report.listening:
                # Why it failed may be in the task's status (cancelled from elsewhere, say).
                stop.set()
                _report_final(client, task.task_id, report)
            raise
        stop.set()
        if report.listening:
            _report_final(client, task.task_id, report)
        return {key: value for key, value in result.items() if key != "_meta"}
    finally:
        stop.set()
        if unsubscribe is not None:
            unsubscribe()
        if poller is not None:
            poller.join(timeout=2.0)


class TaskReporter:
    """Passes a task to the callbacks when its status or message changed since the last report."""

    def __init__(self, on_progress: ProgressCallback | None, on_task: TaskCallback | None) -> None:
        self.on_progress = on_progress
        self.on_task = on_task
        self.polls = 0
        self._lock = threading.Lock()
        self._last: tuple[str, str | None] | None = None

    @property
    def listening(self) -> bool:
        return self.on_progress is not None or self.on_task is not None

    def __call__(self, task: McpTask) -> None:
        with self._lock:
            # A cancelled or finished task is never reported as working again by a late poll.
            if self._last is not None and self._last[0] in ("completed", "failed", "cancelled"):
                return
            if (task.status, task.status_message) == self._last:
                return
            self._last = (task.status, task.status_message)
            if self.on_task is not None:
                self.on_task(task)
            if self.on_progress is not None:
                self.on_progress(task_progress(task, self.polls))


def task_progress(task: McpTask, polls: int) -> McpProgress:
    """A task's status as a progress report: the status and its message, counted in polls."""
    words = task.status.replace("_", " ")
    if task.status_message:
        words += f": {task.status_message}"
    if task.ttl:
        words += f" (kept {task.ttl / 1000:g} s)"
    return McpProgress(progress=polls, message=words)


def _poll(client: ToolTaskMethods, task: McpTask, report: TaskReporter, stop: threading.Event) -> None:
    interval = (task.poll_interval or DEFAULT_POLL_S * 1000) / 1000
    while not stop.wait(interval):
        try:
            current = client.get_task(task.task_id)
        except McpError as exc:
            logger.info("polling task %s failed: %s", task.task_id, exc)
            return
        report.polls += 1
        if stop.is_set():
            return
        report(current)
        if current.finished:
            return


def _report_final(client: ToolTaskMethods, task_id: str, report: TaskReporter) -> None:
    """The status the task ended with (the result came before a poll saw it)."""
    try:
        report(client.get_task(task_id))
    except McpError as exc:
        logger.info("reading the final status of task %s failed: %s", task_id, exc)


def _cancel(client: ToolTaskMethods, task_id: str, report: TaskReporter) -> None:
    try:
        report(client.cancel_task(task_id))
    except McpError as exc:
        logger.info("cancelling task %s failed: %s", task_id, exc)
