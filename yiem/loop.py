"""The agent loop: stream an assistant reply, run the tool calls it asks for, repeat.

Each tool call goes through three named steps, as in pi-mono's agent loop:
`prepare_tool_call` (look up, validate, `before_tool_call`), `execute_tool_call` (run the tool in a
worker thread) and `finalize_tool_call` (`after_tool_call`). Hooks run in the caller's thread, tools
in daemon threads, so a tool that hangs past its timeout is left behind and never blocks the loop.
"""

from __future__ import annotations

import inspect
import json
import logging
import queue
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from pydantic import TypeAdapter, ValidationError

from yiem.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from yiem.llm import (
    GenerationOptions,
    LlmClient,
    StreamDone,
    StreamStart,
    ToolCallDelta,
    aborted_reply,
    aborted_text,
    unfinished_reply,
)
from yiem.types import (
    AbortSignal,
    AfterToolCallContext,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolCall,
    AnyAssistantMessage,
    AssistantMessageToolCall,
    BeforeToolCallContext,
    LlmModel,
    MessageContent,
    TextContent,
    ToolOutput,
    ToolResultMessage,
)
from yiem.validation import ToolArgumentError, validate_tool_arguments

logger = logging.getLogger(__name__)

_UPDATE_KINDS = {"text_delta": "text", "reasoning_delta": "reasoning", "toolcall_delta": "toolcall"}
_content_list: TypeAdapter[list[MessageContent]] = TypeAdapter(list[MessageContent])

OnUpdate = Callable[..., None]
"""`on_update(update=None, *, progress=None, total=None, message=None)`, passed to tools that accept it."""


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
            return ToolOutput(content=_content_list.validate_python(items))
        except ValidationError:
            pass  # not content blocks after all: shown as JSON below
    try:
        text = json.dumps(result, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(result)
    return ToolOutput(content=[TextContent(text=text)])


_on_update_cache: dict[Any, bool] = {}


def accepts_on_update(execute: Callable[..., Any]) -> bool:
    """Whether `execute` takes an `on_update` keyword (checked once per callable)."""
    try:
        return _on_update_cache[execute]
    except KeyError:
        pass
    except TypeError:  # unhashable callable: inspect every time
        return _inspect_on_update(execute)
    if len(_on_update_cache) > 4096:
        _on_update_cache.clear()
    accepts = _on_update_cache[execute] = _inspect_on_update(execute)
    return accepts


def _inspect_on_update(execute: Callable[..., Any]) -> bool:
    return takes_keyword(execute, "on_update")


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


# --- the three steps of a tool call ------------------------------------------------------------


@dataclass(frozen=True)
class PreparedToolCall:
    """A tool call that passed lookup, validation and `before_tool_call`."""

    call: AgentToolCall
    tool: AgentTool
    args: dict[str, Any]


def prepare_tool_call(
    call: AgentToolCall,
    assistant: AssistantMessageToolCall,
    context: AgentContext,
    config: AgentLoopConfig,
) -> PreparedToolCall | ToolOutput:
    """Look the tool up, validate the arguments (SP-024), ask `before_tool_call`; an error ends it here."""
    tool = (context.tools or {}).get(call.name)
    if tool is None:
        return error_output(f"Tool {call.name} not found")
    try:
        args = validate_tool_arguments(tool, call)
    except ToolArgumentError as error:
        return error_output(str(error))
    except Exception as error:
        logger.exception("validating the arguments of %s failed", call.name)
        return error_output(f"Validating the arguments of {call.name} failed: {describe_exception(error)}")
    if config.before_tool_call is not None:
        try:
            verdict = config.before_tool_call(
                BeforeToolCallContext(assistant_message=assistant, tool_call=call, args=args, context=context)
            )
        except Exception as error:
            logger.exception("before_tool_call failed for %s", call.name)
            return error_output(f"before_tool_call failed: {describe_exception(error)}")
        if verdict is not None and verdict.block:
            return error_output(verdict.reason or f"Tool call {call.name} was blocked")
    return PreparedToolCall(call=call, tool=tool, args=args)


def execute_tool_call(
    prepared: PreparedToolCall, signal: AbortSignal, on_update: OnUpdate | None
) -> ToolOutput:
    """Run the tool; an exception becomes an error result with its message."""
    execute = prepared.tool.execute
    try:
        if on_update is not None and accepts_on_update(execute):
            result = execute(prepared.call.id, prepared.args, signal, on_update=on_update)
        else:
            result = execute(prepared.call.id, prepared.args, signal)
        return to_tool_output(result)
    except BaseException as error:  # a tool's SystemExit must not kill the worker silently either
        return error_output(describe_exception(error))


def finalize_tool_call(
    prepared: PreparedToolCall,
    output: ToolOutput,
    assistant: AssistantMessageToolCall,
    context: AgentContext,
    config: AgentLoopConfig,
) -> ToolOutput:
    """Let `after_tool_call` replace content, details or is_error."""
    if config.after_tool_call is None:
        return output
    try:
        change = config.after_tool_call(
            AfterToolCallContext(
                assistant_message=assistant,
                tool_call=prepared.call,
                args=prepared.args,
                result=output,
                is_error=output.is_error,
                context=context,
            )
        )
    except Exception as error:
        logger.exception("after_tool_call failed for %s", prepared.call.name)
        return error_output(f"after_tool_call failed: {describe_exception(error)}")
    if change is None:
        return output
    return ToolOutput(
        content=output.content if change.content is None else change.content,
        details=output.details if change.details is None else change.details,
        is_error=output.is_error if change.is_error is None else change.is_error,
    )


def _result_message(call: AgentToolCall, output: ToolOutput) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=output.content,
        details=output.details,
        is_error=output.is_error,
    )


# --- worker threads ---------------------------------------------------------------------------


class _ToolThreads:
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


_ABORTED = ("aborted", -1, None)


# --- the loop ---------------------------------------------------------------------------------


def run_agent_loop(
    context: AgentContext,
    llm: LlmClient,
    model: LlmModel,
    config: AgentLoopConfig | None = None,
    signal: AbortSignal | None = None,
) -> Iterator[AgentEvent]:
    """Run turns until a reply asks for no tools, an error, an abort or `max_turns`; yield every event.

    `context` is left as it is; the new messages arrive in `message_end` events and `agent_end`.
    """
    return _LoopRun(context, llm, model, config or AgentLoopConfig(), signal or AbortSignal()).events()


class _LoopRun:
    def __init__(
        self,
        context: AgentContext,
        llm: LlmClient,
        model: LlmModel,
        config: AgentLoopConfig,
        signal: AbortSignal,
    ) -> None:
        # A working copy: the messages list grows here, the caller's context stays as it was.
        self.context = AgentContext.model_construct(
            system_prompt=context.system_prompt, messages=list(context.messages), tools=context.tools
        )
        self.llm = llm
        self.model = model
        self.config = config
        self.signal = signal
        options = GenerationOptions(temperature=config.temperature, max_tokens=config.max_tokens)
        # A client written to `stream(model, context, signal)` gets no options rather than a TypeError.
        self.stream_options = {"options": options} if takes_keyword(llm.stream, "options") else {}
        self.threads = _ToolThreads()

    def events(self) -> Iterator[AgentEvent]:
        yield AgentStartEvent()
        added: list[Any] = []
        stop_reason = "end_turn"
        error: str | None = None
        try:
            turn = 0
            while True:
                turn += 1
                yield TurnStartEvent(turn=turn)
                message = yield from self._stream_reply()
                self.context.messages.append(message)
                added.append(message)
                results: list[ToolResultMessage] = []
                if isinstance(message, AssistantMessageToolCall) and message.tool_calls:
                    results = yield from self._run_tool_calls(message)
                    self.context.messages.extend(results)
                    added.extend(results)
                yield TurnEndEvent(turn=turn, message=message, tool_results=results)
                if self.signal.aborted or message.stop_reason == "aborted":
                    stop_reason = "aborted"
                    error = message.error_message if message.stop_reason == "aborted" else None
                    error = error or aborted_text(self.signal.reason)
                    break
                if message.stop_reason == "error":
                    stop_reason = "error"
                    error = message.error_message or "The model's reply ended with an error"
                    break
                if not results:
                    stop_reason = message.stop_reason
                    break
                if turn >= self.config.max_turns:
                    stop_reason = "max_turns"
                    error = (
                        f"Stopped after {turn} turns (max_turns={self.config.max_turns}) "
                        "while the model was still calling tools"
                    )
                    break
        finally:
            self.threads.close()
        yield AgentEndEvent(messages=added, stop_reason=stop_reason, error_message=error)

    # --- step: stream the assistant reply ----------------------------------------------------

    def _stream_reply(self) -> Generator[AgentEvent, None, AnyAssistantMessage]:
        started = perf_counter()
        first_delta: float | None = None
        partial: AnyAssistantMessage | None = None
        final: AnyAssistantMessage | None = None
        announced = False
        stream: Iterator[Any] = iter(())
        try:
            stream = self.llm.stream(self.model, self.context, self.signal, **self.stream_options)
            for event in stream:
                if isinstance(event, StreamDone):
                    final = event.message
                    break
                partial = event.partial
                if not announced:
                    announced = True
                    yield MessageStartEvent(message=partial)
                if not isinstance(event, StreamStart):
                    if first_delta is None:
                        first_delta = perf_counter()
                    delta = event.arguments_delta if isinstance(event, ToolCallDelta) else event.delta
                    yield MessageUpdateEvent(message=partial, kind=_UPDATE_KINDS[event.type], delta=delta)
                if self.signal.aborted:
                    break
        except Exception as error:  # LlmClient.stream must not raise; one that does still ends the turn
            logger.exception("the LLM client raised")
            final = unfinished_reply(
                partial, self.model, "error", f"The LLM client failed: {describe_exception(error)}"
            )
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if final is None:
            if self.signal.aborted:
                final = aborted_reply(partial, self.model, self.signal.reason)
            else:
                final = unfinished_reply(
                    partial, self.model, "error", "The LLM stream ended without a final message"
                )
        if not announced:
            yield MessageStartEvent(message=final)
        finished = perf_counter()
        final.duration_ms = (finished - started) * 1000
        final.ttft_ms = None if first_delta is None else (first_delta - started) * 1000
        # An unknown price shows as "price unknown", never as $0, whatever the provider filled in.
        final.cost = self.model.cost_of(final.usage)
        yield MessageEndEvent(message=final)
        return final

    # --- steps: prepare, execute, finalize every tool call --------------------------------------

    def _run_tool_calls(
        self, assistant: AssistantMessageToolCall
    ) -> Generator[AgentEvent, None, list[ToolResultMessage]]:
        calls = assistant.tool_calls
        results: list[ToolResultMessage | None] = [None] * len(calls)
        if assistant.stop_reason in ("error", "aborted"):
            text = "Tool call not run: the assistant reply ended with an error"
            if assistant.stop_reason == "aborted" or self.signal.aborted:
                text = aborted_text(self.signal.reason, "Tool call aborted")
            for index, call in enumerate(calls):
                results[index] = result = _result_message(call, error_output(text))
                yield ToolExecutionEndEvent(tool_call=call, result=result, is_error=True, duration_ms=0.0)
        else:
            yield from self._execute_all(assistant, results)
        finished = [result for result in results if result is not None]
        for result in finished:
            yield MessageStartEvent(message=result)
            yield MessageEndEvent(message=result)
        return finished

    def _execute_all(
        self, assistant: AssistantMessageToolCall, results: list[ToolResultMessage | None]
    ) -> Iterator[AgentEvent]:
        calls = assistant.tool_calls
        parallel = self.config.tool_execution == "parallel"
        inbox: queue.SimpleQueue[tuple[str, int, Any]] = queue.SimpleQueue()
        unsubscribe = self.signal.on_abort(lambda _reason: inbox.put(_ABORTED))
        running: dict[int, _Running] = {}
        next_index = 0

        def finish(index: int, output: ToolOutput, started: float) -> ToolExecutionEndEvent:
            results[index] = message = _result_message(calls[index], output)
            return ToolExecutionEndEvent(
                tool_call=calls[index],
                result=message,
                is_error=output.is_error,
                duration_ms=(perf_counter() - started) * 1000,
            )

        try:
            while next_index < len(calls) or running:
                while next_index < len(calls) and (parallel or not running) and not self.signal.aborted:
                    index, call = next_index, calls[next_index]
                    next_index += 1
                    started = perf_counter()
                    prepared = prepare_tool_call(call, assistant, self.context, self.config)
                    if isinstance(prepared, ToolOutput):
                        yield finish(index, prepared, started)
                        continue
                    running[index] = self._start(index, prepared, inbox)
                    yield ToolExecutionStartEvent(tool_call=call, args=prepared.args)
                if self.signal.aborted:
                    break
                if not running:
                    continue
                soonest = min(job.deadline for job in running.values())
                try:
                    kind, index, payload = inbox.get(timeout=max(soonest - perf_counter(), 0.0))
                except queue.Empty:
                    now = perf_counter()
                    for index, job in list(running.items()):
                        if job.deadline <= now:
                            del running[index]
                            job.signal.abort("timeout")
                            job.unlink()
                            limit = self.config.tool_timeout
                            text = f"Tool {job.prepared.call.name} timed out after {limit:g} s"
                            yield finish(index, error_output(text), job.started)
                    continue
                job_or_none = running.get(index)
                if job_or_none is None:
                    continue  # aborted marker, or news from a call that already timed out
                if kind == "update":
                    yield _update_event(calls[index], payload)
                elif kind == "done":
                    del running[index]
                    job_or_none.unlink()
                    output = finalize_tool_call(
                        job_or_none.prepared, payload, assistant, self.context, self.config
                    )
                    yield finish(index, output, job_or_none.started)
            if self.signal.aborted:
                # Every call still running or never started gets exactly one `aborted` result.
                text = aborted_text(self.signal.reason, "Tool call aborted")
                for index, job in running.items():
                    job.unlink()
                    yield finish(index, error_output(text), job.started)
                running.clear()
                for index in range(len(calls)):
                    if results[index] is None:
                        yield finish(index, error_output(text), perf_counter())
        finally:
            unsubscribe()
            for job in running.values():  # the consumer stopped early: tell the tools to stop too
                job.signal.abort("the agent loop was closed")
                job.unlink()

    def _start(
        self, index: int, prepared: PreparedToolCall, inbox: queue.SimpleQueue[tuple[str, int, Any]]
    ) -> _Running:
        # Each call gets its own signal: a timeout stops only that tool, an abort stops them all.
        call_signal = AbortSignal()
        unlink = self.signal.on_abort(call_signal.abort)

        def on_update(
            update: Any = None,
            *,
            progress: float | None = None,
            total: float | None = None,
            message: str | None = None,
        ) -> None:
            inbox.put(("update", index, (update, progress, total, message)))

        started = perf_counter()
        self.threads.submit(
            lambda: execute_tool_call(prepared, call_signal, on_update),
            lambda output: inbox.put(("done", index, output)),
        )
        return _Running(prepared, call_signal, unlink, started, started + self.config.tool_timeout)


def _update_event(
    call: AgentToolCall, payload: tuple[Any, float | None, float | None, str | None]
) -> AgentEvent:
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
