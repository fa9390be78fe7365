"""Tool calls the Tools page runs in the background: progress, Cancel, the raw exchange, a history."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from yiem.amounts import duration
from yiem.explorer._tasks import status_words
from yiem.json_schema import UnusableSchemaError, iter_errors, usable_validator
from yiem.mcp import CallToolResult, McpClient, McpError, McpProgress, McpPrompt, McpTask
from yiem.mcp.errors import McpCancelledError
from yiem.redaction import redact, redact_data
from yiem.tool_registry import ToolRegistry
from yiem.types import AbortSignal, replace_lone_surrogates, utc_now


class CallStatus(StrEnum):
    """Where a call stands."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class CallRecord(BaseModel):
    """One call as the history keeps and exports it: what was sent, what came back, how long it took."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    server: str
    tool: str
    arguments: dict[str, Any]
    started_at: datetime = Field(default_factory=utc_now)
    duration_ms: float | None = None
    status: CallStatus = CallStatus.RUNNING
    request: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] | None = None
    error: str | None = None
    task: McpTask | None = None  # the server-side task the call ran as, as last seen

    @property
    def result(self) -> CallToolResult | None:
        """The parsed result, when the server answered."""
        return CallToolResult.from_wire(self.response) if self.response is not None else None


class ToolCallRun:
    """A `tools/call` on its own thread, so the page can redraw progress and offer Cancel while it runs.

    `as_task` runs a tool whose taskSupport is optional as a task (a required one always runs as one).
    """

    def __init__(
        self,
        client: McpClient,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        timeout: float | None = None,
        as_task: bool = False,
    ) -> None:
        self._client = client
        self._as_task = as_task
        self._timeout = timeout
        self._signal = AbortSignal()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._progress: McpProgress | None = None
        self._task: McpTask | None = None
        params: dict[str, Any] = {"name": tool, "arguments": dict(arguments)}
        if as_task:
            params["task"] = {}
        self._record = CallRecord(
            server=server,
            tool=tool,
            arguments=dict(arguments),
            request={"jsonrpc": "2.0", "method": "tools/call", "params": params},
        )
        self._thread = threading.Thread(target=self._run, name=f"tool-call-{tool}", daemon=True)

    def start(self) -> ToolCallRun:
        """Send the call; returns at once."""
        self._thread.start()
        return self

    def _run(self) -> None:
        started = time.perf_counter()
        response: dict[str, Any] | None = None
        error: str | None = None
        status = CallStatus.DONE
        try:
            # The raw request keeps the reply exactly as the server sent it, for the raw view.
            params = self._record.request["params"]
            response = self._client.call_tool_raw(
                params["name"],
                params["arguments"],
                timeout=self._timeout,
                on_progress=self._on_progress,
                signal=self._signal,
                as_task=self._as_task,
                on_task=self._on_task,
            )
        except McpCancelledError:
            status, error = CallStatus.CANCELLED, "The call was cancelled."
        except McpError as exc:
            status, error = CallStatus.FAILED, describe_error(exc)
        except Exception as exc:  # a bug must not leave the page waiting forever
            status, error = CallStatus.FAILED, f"The call failed: {exc}"
        task = self.task
        # A task cancelled here or elsewhere (the task list, another client), whose result is then gone.
        if task is not None and task.status == "cancelled" and status is not CallStatus.DONE:
            status, error = (
                CallStatus.CANCELLED,
                f"The task was cancelled. The server's status: {status_words(task)}",
            )
        with self._lock:
            self._record = self._record.model_copy(
                update={
                    "duration_ms": (time.perf_counter() - started) * 1000,
                    "status": status,
                    "response": response,
                    "error": error,
                    "task": self._task,
                }
            )
        self._done.set()

    def _on_progress(self, progress: McpProgress) -> None:
        with self._lock:
            self._progress = progress

    def _on_task(self, task: McpTask) -> None:
        with self._lock:
            self._task = task

    def cancel(self) -> None:
        """Tell the server to stop (`tasks/cancel` for a task, else `notifications/cancelled`)."""
        self._signal.abort("cancelled from the Tools page")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the call ends or `timeout` seconds pass; True when it ended."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def progress(self) -> McpProgress | None:
        """The latest progress notification, if any came."""
        with self._lock:
            return self._progress

    @property
    def task(self) -> McpTask | None:
        """The server-side task the call runs as, as last seen; None when it is not one."""
        with self._lock:
            return self._task

    @property
    def record(self) -> CallRecord:
        """A snapshot of the call so far."""
        with self._lock:
            return self._record

    @property
    def elapsed_s(self) -> float:
        return (utc_now() - self._record.started_at).total_seconds()


def progress_fraction(progress: McpProgress | None) -> float | None:
    """Progress as 0..1 when the server gave a total, else None."""
    if progress is None or not progress.total:
        return None
    return max(0.0, min(1.0, progress.progress / progress.total))


def progress_words(progress: McpProgress | None) -> str:
    """Progress in words: "3 of 10 — message"."""
    if progress is None:
        return "Waiting for the server…"
    amount = f"{progress.progress:g} of {progress.total:g}" if progress.total else f"{progress.progress:g}"
    return f"{amount} — {progress.message}" if progress.message else amount


def check_structured_content(output_schema: Mapping[str, Any] | None, result: CallToolResult) -> str | None:
    """Why `structuredContent` does not match the `outputSchema`, or None when it does (or none is set)."""
    if not output_schema or result.is_error:
        return None
    if result.structured_content is None:
        return "The tool declares an output schema but returned no structured content."
    try:
        validator = usable_validator(output_schema)
    except UnusableSchemaError as error:
        return f"The output schema cannot be checked: {error}."
    errors = sorted(iter_errors(validator, result.structured_content), key=str)
    if not errors:
        return None
    shown = [_where(error.absolute_path) + error.message for error in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(shown) + more


def _where(path: Iterable[Any]) -> str:
    where = "/".join(str(part) for part in path)
    return f"{where}: " if where else ""


def describe_error(error: BaseException) -> str:
    """An error in words, with the server's stderr tail when it left one and the message lacks it."""
    text = str(error)
    data = getattr(error, "data", None)
    stderr = data.get("stderr") if isinstance(data, dict) else None
    if isinstance(stderr, str) and stderr.strip() and stderr.strip() not in text:
        text = f"{text}\n\nThe server's last words (stderr):\n{stderr.strip()}"
    return redact(text)


def history_json(records: Sequence[CallRecord]) -> str:
    """The call history as a JSON document a person can keep or share."""
    data = [redact_data(record.model_dump(mode="json")) for record in records]
    return str(replace_lone_surrogates(json.dumps(data, indent=2, ensure_ascii=False)))


def ping_ms(client: McpClient, timeout: float = 10.0) -> float:
    """Round-trip time of one `ping`, in milliseconds; raises `McpError` when the server does not answer."""
    started = time.perf_counter()
    client.ping(timeout=timeout)
    return (time.perf_counter() - started) * 1000


def chat_tool_name(registry: ToolRegistry, server: str, tool: str) -> str | None:
    """The name the chat agent knows an MCP tool by (`server__tool` after a clash); None if not there."""
    return registry.chat_names(server).get(tool)


def prompt_input_schema(prompt: McpPrompt) -> dict[str, Any]:
    """A prompt's arguments as an object schema of strings, so the tool form can ask for them."""
    properties = {
        argument.name: {"type": "string", "description": argument.description or ""}
        for argument in prompt.arguments
    }
    required = [argument.name for argument in prompt.arguments if argument.required]
    return {"type": "object", "properties": properties, "required": required}


_HINT_WORDS = {
    "readOnlyHint": ("read-only", "changes things"),
    "destructiveHint": ("destructive", "not destructive"),
    "idempotentHint": ("idempotent", "not idempotent"),
    "openWorldHint": ("open-world", "closed-world"),
}


def annotation_badges(annotations: Mapping[str, Any] | None) -> list[str]:
    """A badge for each hint a tool states outright (MCP `ToolAnnotations`), true or false."""
    hints = annotations or {}
    badges = []
    for hint, (if_true, if_false) in _HINT_WORDS.items():
        value = hints.get(hint)
        if isinstance(value, bool):
            badges.append(if_true if value else if_false)
    return badges


def duration_words(duration_ms: float | None) -> str:
    """How long a call took, as a person reads it: "17 ms", "6.7 s"; "…" while it runs."""
    if duration_ms is None:
        return "…"
    return duration(duration_ms, "…")
