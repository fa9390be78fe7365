"""How the loop runs one reply's tool calls: worker threads, per-call timeouts, abort and progress.

The loop supplies the three steps of a call (prepare, execute, finalize); this module schedules
them. Hooks run in the caller's thread, tools in daemon threads, so a tool that hangs past its
timeout is left behind and never blocks the loop.
"""

from __future__ import annotations

import functools
import inspect
import json
import queue
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from pydantic import TypeAdapter, ValidationError

from yiem.events import AgentEvent, ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent
from yiem.llm import aborted_text
from yiem.timeline import Span, Timeline
from yiem.types import (
    AbortSignal,
    AgentTool,
    AgentToolCall,
    MessageContent,
    TextContent,
    ToolOutput,
    ToolResultMessage,
)


@functools.cache
def _content_list() -> TypeAdapter[list[MessageContent]]:
    return TypeAdapter(list[MessageContent])  # built on first use: it costs start-up time


OnUpdate = Callable[..., None]
"""`on_update(update=None, *, progress=None, total=None, message=None)`, passed to tools that accept it."""


# --- what tools return ----------------------------------------------------------------------


def error_output(text: str) -> ToolOutput:
    """An error result with `text` as its content."""
    return ToolOutput(content=[TextContent(text=text)], is_error=True)


def describe_exception(exc: BaseException) -> str:
    """The exception's message, or its class name when it has none."""
    text = str(exc)
    return text if text else type(exc).__name__


def to_tool_output(result: Any) -> ToolOutput:
    """What a tool returned (string, content blocks, ToolOutput, None, other JSON) as a ToolOutput."""
    if isinstance(result, ToolOutput):
        return result
    if isinstance(result, str):
        return ToolOutput(content=[TextContent(text=result)])
    if result is None:
        return ToolOutput()
    if isinstance(result, list):
        items = [TextContent(text=item) if isinstance(item, str) else item for item in result]
        try:
            return ToolOutput(content=_content_list().validate_python(items))
        except ValidationError:
            pass  # not content blocks after all: shown as JSON below
    try:
        text = json.dumps(result, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(result)
    return ToolOutput(content=[TextContent(text=text)])


def result_message(call: AgentToolCall, output: ToolOutput) -> ToolResultMessage:
    """The tool result message answering `call`."""
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=output.content,
        details=output.details,
        is_error=output.is_error,
    )


def takes_keyword(function: Callable[..., Any], name: str) -> bool:
    """Whether `function` can be called with the keyword argument `name`."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(
        (p.name == name and p.kind in keyword) or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


_keyword_cache: dict[tuple[Any, str], bool] = {}


def accepts_keyword(function: Callable[..., Any], name: str) -> bool:
    """`takes_keyword`, checked once per function (a bound method by its class's): asked on every run."""
    key = (getattr(function, "__func__", function), name)
    try:
        return _keyword_cache[key]
    except KeyError:
        pass
    except TypeError:  # unhashable callable: inspect every time
        return takes_keyword(function, name)
    if len(_keyword_cache) > 4096:
        _keyword_cache.clear()
    accepts = _keyword_cache[key] = takes_keyword(function, name)
    return accepts


def accepts_on_update(execute: Callable[..., Any]) -> bool:
    """Whether `execute` takes an `on_update` keyword (checked once per callable)."""
    return accepts_keyword(execute, "on_update")


# --- worker threads ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedToolCall:
    """A tool call that passed lookup, validation and `before_tool_call`."""

    call: AgentToolCall
    tool: AgentTool
    args: dict[str, Any]


Prepare = Callable[[AgentToolCall], PreparedToolCall | ToolOutput]
Execute = Callable[[PreparedToolCall, AbortSignal, OnUpdate], ToolOutput]
Finalize = Callable[[PreparedToolCall, ToolOutput], ToolOutput]


class ToolThreads:
    """Daemon threads reused across the turns of one run; a stuck tool is left behind, never joined."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[tuple[Callable[[], Any], Callable[[Any], None]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0

    def submit(self, work: Callable[[], Any], deliver: Callable[[Any], None]) -> None:
        """Run `work()` in a worker thread, then `deliver(its result)`."""
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._count += 1
            else:
                self._idle -= 1
        self._tasks.put((work, deliver))
        if spawn:
            threading.Thread(target=self._work, name="yiem-tool", daemon=True).start()

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            work, deliver = task
            result = work()
            # Idle before delivering: the loop may submit the next call the moment it hears back.
            with self._lock:
                self._idle += 1
            deliver(result)

    def close(self) -> None:
        with self._lock:
            count, self._count, self._idle = self._count, 0, 0
        for _ in range(count):
            self._tasks.put(None)


@dataclass
class _Running:
    prepared: PreparedToolCall
    signal: AbortSignal
    unlink: Callable[[], None]
    started: float
    deadline: float


# A call that waited less than this for earlier ones gets no wait span: parallel calls all "wait" µs.
_WAIT_SHOWN = 0.001


_ABORTED = ("aborted", -1, None)
Inbox = queue.SimpleQueue[tuple[str, int, Any]]


class ToolBatch:
    """One reply's tool calls, run in order (sequential) or all at once (parallel).

    `run()` yields the tool execution events and returns one result per call, in the order the
    model asked for them; a call that times out or is aborted gets an error result. Each result
    carries its spans (`yiem.timeline`): the wait for earlier calls, the hooks named in `hooks`
    (`before_tool_call`, `after_tool_call`, when configured) and the tool's run in its worker.
    """

    def __init__(
        self,
        calls: Sequence[AgentToolCall],
        threads: ToolThreads,
        signal: AbortSignal,
        *,
        parallel: bool,
        timeout: float,
        run: str = "",
        hooks: tuple[bool, bool] = (False, False),
    ) -> None:
        self.calls = list(calls)
        self.threads = threads
        self.signal = signal
        self.parallel = parallel
        self.timeout = timeout
        self.results: list[ToolResultMessage | None] = [None] * len(self.calls)
        self.run_id = run
        self.hooks = hooks
        self.queued = perf_counter()
        self.spans: list[list[Span]] = [[] for _ in self.calls]
        self._inbox: Inbox = queue.SimpleQueue()
        self._running: dict[int, _Running] = {}

    def run(
        self, prepare: Prepare, execute: Execute, finalize: Finalize
    ) -> Generator[AgentEvent, None, list[ToolResultMessage]]:
        unsubscribe = self.signal.on_abort(lambda _reason: self._inbox.put(_ABORTED))
        try:
            yield from self._schedule(prepare, execute, finalize)
            if self.signal.aborted:
                yield from self._answer_the_rest(aborted_text(self.signal.reason, "Tool call aborted"))
        finally:
            unsubscribe()
            for job in self._running.values():  # the consumer stopped early: tell the tools to stop too
                job.signal.abort("the agent loop was closed")
                job.unlink()
        return [result for result in self.results if result is not None]

    def skip_all(self, text: str) -> Iterator[AgentEvent]:
        """Answer every call with an error `text` without running any."""
        for index in range(len(self.calls)):
            yield self._finish(index, error_output(text), perf_counter())

    def _schedule(self, prepare: Prepare, execute: Execute, finalize: Finalize) -> Iterator[AgentEvent]:
        calls, running = self.calls, self._running
        next_index = 0
        while next_index < len(calls) or running:
            while next_index < len(calls) and (self.parallel or not running) and not self.signal.aborted:
                index, call = next_index, calls[next_index]
                next_index += 1
                started = perf_counter()
                if started - self.queued > _WAIT_SHOWN:
                    self.spans[index].append(Span("wait", "queued", self.queued, started, call_id=call.id))
                prepared = prepare(call)
                if self.hooks[0]:
                    self._span_hook(index, "before_tool_call", started)
                if isinstance(prepared, ToolOutput):
                    yield self._finish(index, prepared, started)
                    continue
                running[index] = self._start(index, prepared, execute)
                yield ToolExecutionStartEvent(tool_call=call, args=prepared.args)
            if self.signal.aborted:
                return
            if not running:
                continue
            soonest = min(job.deadline for job in running.values())
            try:
                kind, index, payload = self._inbox.get(timeout=max(soonest - perf_counter(), 0.0))
            except queue.Empty:
                yield from self._time_out_overdue()
                continue
            job = running.get(index)
            if job is None:
                continue  # aborted marker, or news from a call that already timed out
            if kind == "update":
                yield update_event(calls[index], payload)
            elif kind == "done":
                del running[index]
                job.unlink()
                began, output, ended = payload
                self._span_tool(index, job.prepared, began, ended)
                finalizing = perf_counter()
                output = finalize(job.prepared, output)
                if self.hooks[1]:
                    self._span_hook(index, "after_tool_call", finalizing)
                yield self._finish(index, output, job.started)

    def _time_out_overdue(self) -> Iterator[AgentEvent]:
        now = perf_counter()
        for index, job in list(self._running.items()):
            if job.deadline <= now:
                del self._running[index]
                job.signal.abort("timeout")
                job.unlink()
                self._span_tool(index, job.prepared, job.started, now)
                text = f"Tool {job.prepared.call.name} timed out after {self.timeout:g} s"
                yield self._finish(index, error_output(text), job.started)

    def _answer_the_rest(self, text: str) -> Iterator[AgentEvent]:
        # Every call still running or never started gets exactly one `aborted` result.
        for index, job in self._running.items():
            job.unlink()
            self._span_tool(index, job.prepared, job.started, perf_counter())
            yield self._finish(index, error_output(text), job.started)
        self._running.clear()
        for index in range(len(self.calls)):
            if self.results[index] is None:
                yield self._finish(index, error_output(text), perf_counter())

    def _span_tool(self, index: int, prepared: PreparedToolCall, began: float, ended: float) -> None:
        name, server = prepared.call.name, prepared.tool.server
        self.spans[index].append(Span("tool", name, began, ended, call_id=prepared.call.id, server=server))

    def _span_hook(self, index: int, hook: str, started: float) -> None:
        self.spans[index].append(Span("hook", hook, started, perf_counter(), call_id=self.calls[index].id))

    def _finish(self, index: int, output: ToolOutput, started: float) -> ToolExecutionEndEvent:
        self.results[index] = message = result_message(self.calls[index], output)
        message.timeline = Timeline(self.run_id, self.spans[index])
        return ToolExecutionEndEvent(
            tool_call=self.calls[index],
            result=message,
            is_error=output.is_error,
            duration_ms=(perf_counter() - started) * 1000,
        )

    def _start(self, index: int, prepared: PreparedToolCall, execute: Execute) -> _Running:
        # Each call gets its own signal: a timeout stops only that tool, an abort stops them all.
        call_signal = AbortSignal()
        unlink = self.signal.on_abort(call_signal.abort)
        inbox = self._inbox

        def on_update(
            update: Any = None,
            *,
            progress: float | None = None,
            total: float | None = None,
            message: str | None = None,
        ) -> None:
            inbox.put(("update", index, (update, progress, total, message)))

        def work() -> tuple[float, ToolOutput, float]:
            # Stamped in the worker: the span is the tool's own run, not when the loop heard of it.
            began = perf_counter()
            output = execute(prepared, call_signal, on_update)
            return began, output, perf_counter()

        started = perf_counter()
        self.threads.submit(work, lambda done: inbox.put(("done", index, done)))
        return _Running(prepared, call_signal, unlink, started, started + self.timeout)


def update_event(
    call: AgentToolCall, payload: tuple[Any, float | None, float | None, str | None]
) -> AgentEvent:
    """A tool's `on_update(...)` call as a `tool_execution_update` event."""
    update, progress, total, message = payload
    if isinstance(update, dict):
        if {"content", "details", "is_error"} & update.keys():
            update = _tool_output_or_text(update)
        else:
            # Progress information as a dict, as MCP progress notifications carry it.
            progress = update.get("progress", progress)
            total = update.get("total", total)
            message = update.get("message", message)
            update = None
    partial = ToolOutput() if update is None else to_tool_output(update)
    return ToolExecutionUpdateEvent(
        tool_call=call, partial_result=partial, progress=progress, total=total, message=message
    )


def _tool_output_or_text(update: dict[str, Any]) -> Any:
    try:
        return ToolOutput.model_validate(update)
    except ValidationError:
        return update  # shown as JSON text
