"""What a client offers a server: roots, sampling, elicitation, and running those as tasks.

The capabilities declared in `initialize` come from here and name exactly the features a
handler was given for, so a server never sends a request the client then refuses.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import ValidationError

from yiem.mcp import apps
from yiem.mcp._revision import STATELESS_VERSIONS
from yiem.mcp.errors import INVALID_PARAMS, McpError
from yiem.mcp.models import (
    ElicitationRequest,
    ElicitationResult,
    Root,
    SamplingRequest,
    SamplingResult,
)

ElicitationHandler = Callable[[ElicitationRequest], ElicitationResult]
SamplingHandler = Callable[[SamplingRequest], SamplingResult]
Handler = Callable[[dict[str, Any]], dict[str, Any]]
_Request = TypeVar("_Request", SamplingRequest, ElicitationRequest)
TASK_TTL_MS = 600_000
TASK_POLL_MS = 500


class _ClientTask:
    """A server request the client runs in the background, polled by the server (`tasks/get`)."""

    def __init__(self, ttl: int) -> None:
        self.task_id = uuid.uuid4().hex
        self.created_at = _now()
        self.last_updated_at = self.created_at
        self.ttl = ttl
        self.status = "working"
        self.status_message: str | None = None
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        self.done = threading.Event()

    def wire(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl,
            "pollInterval": TASK_POLL_MS,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        return task

    def finish(self, status: str, result: dict[str, Any] | None, error: McpError | None) -> None:
        if self.done.is_set():
            return
        self.status, self.result, self.error = status, result, error
        self.status_message = error.message if error is not None else None
        self.last_updated_at = _now()
        self.done.set()


class ClientFeatures:
    """Roots, sampling and elicitation handlers, the capabilities they mean, and client-side tasks."""

    def __init__(
        self,
        roots: Sequence[Root] | None = None,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
    ) -> None:
        self.roots = list(roots) if roots is not None else None
        self.sampling = sampling
        self.elicitation = elicitation
        self._tasks: dict[str, _ClientTask] = {}
        self._lock = threading.Lock()

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
        """The client's capabilities at `version` (None: the handshake's): only what a handler exists for.

        At 2026-07-28 tasks are the `io.modelcontextprotocol/tasks` extension, which a request
        declares for itself (`_ext_tasks.opt_in`); the 2025 `tasks` capability is not declared."""
        declared: dict[str, Any] = {}
        if self.roots is not None:
            declared["roots"] = {"listChanged": True}
        requests: dict[str, Any] = {}
        if self.sampling is not None:
            declared["sampling"] = {}
            requests["sampling"] = {"createMessage": {}}
        if self.elicitation is not None:
            declared["elicitation"] = {"form": {}, "url": {}}
            requests["elicitation"] = {"create": {}}
        if requests and version not in STATELESS_VERSIONS:
            declared["tasks"] = {"list": {}, "cancel": {}, "requests": requests}
        # The app draws MCP Apps views (Tools and Chat), so servers may offer tools that have one.
        declared["extensions"] = {apps.EXTENSION_ID: apps.UI_CAPABILITY}
        return declared

    def handlers(self) -> dict[str, Handler]:
        """Method -> handler for what the server may ask of this client."""
        handlers: dict[str, Handler] = {}
        if self.roots is not None:
            handlers["roots/list"] = self._list_roots
        if self.sampling is not None:
            handlers["sampling/createMessage"] = self._as_task(self._sample)
        if self.elicitation is not None:
            handlers["elicitation/create"] = self._as_task(self._elicit)
        if self.sampling is not None or self.elicitation is not None:
            handlers |= {
                "tasks/get": self._get_task,
                "tasks/result": self._task_result,
                "tasks/list": self._list_tasks,
                "tasks/cancel": self._cancel_task,
            }
        return handlers

    # --- the requests ------------------------------------------------------------------

    def _list_roots(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [root.to_wire() for root in self.roots or []]}

    def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.sampling is not None
        return self.sampling(_parse(SamplingRequest, params)).to_wire()

    def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.elicitation is not None
        result = self.elicitation(_parse(ElicitationRequest, params))
        return result.model_dump(mode="json", exclude_none=True)

    # --- client-side tasks -------------------------------------------------------------

    def _as_task(self, handler: Handler) -> Handler:
        """Answer at once with a task when the server asks for one; else answer when done."""

        def handle(params: dict[str, Any]) -> dict[str, Any]:
            task_params = params.get("task")
            if not isinstance(task_params, dict):
                return handler(params)
            ttl = task_params.get("ttl")
            task = _ClientTask(ttl if isinstance(ttl, int) and ttl > 0 else TASK_TTL_MS)
            with self._lock:
                self._forget_expired()
                self._tasks[task.task_id] = task
            request = {key: value for key, value in params.items() if key != "task"}
            threading.Thread(
                target=self._run_task, args=(task, handler, request), name="mcp-client-task", daemon=True
            ).start()
            return {"task": task.wire()}

        return handle

    def _run_task(self, task: _ClientTask, handler: Handler, params: dict[str, Any]) -> None:
        try:
            task.finish("completed", handler(params), None)
        except McpError as exc:
            task.finish("failed", None, exc)
        except Exception as exc:
            task.finish("failed", None, McpError(-32603, f"the client failed: {exc}"))

    def _task(self, params: dict[str, Any]) -> _ClientTask:
        with self._lock:
            task = self._tasks.get(str(params.get("taskId")))
        if task is None:
            raise McpError(INVALID_PARAMS, f"no task {params.get('taskId')!r} on this client")
        return task

    def _get_task(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._task(params).wire()

    def _task_result(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._task(params)
        task.done.wait(task.ttl / 1000)
        if task.error is not None:
            raise task.error
        if task.result is None:
            raise McpError(INVALID_PARAMS, f"task {task.task_id} has no result ({task.status})")
        return {**task.result, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}}

    def _list_tasks(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            return {"tasks": [task.wire() for task in self._tasks.values()]}

    def _cancel_task(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._task(params)
        task.finish("cancelled", None, None)
        return task.wire()

    def _forget_expired(self) -> None:
        now = time.time()
        for task_id, task in list(self._tasks.items()):
            created = datetime.fromisoformat(task.created_at).timestamp()
            if task.done.is_set() and now > created + task.ttl / 1000:
                del self._tasks[task_id]


def _parse(model: type[_Request], params: dict[str, Any]) -> _Request:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise McpError(INVALID_PARAMS, f"the request's parameters are not valid: {exc}") from exc


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
