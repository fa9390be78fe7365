"""The agent loop: stream an assistant reply, run the tool calls it asks for, repeat.

Each tool call goes through three named steps, as in pi-mono's agent loop:
`prepare_tool_call` (look up, validate, `before_tool_call`), `execute_tool_call` (run the tool)
and `finalize_tool_call` (`after_tool_call`). `yiem._tool_runner` schedules them: tools in worker
threads with a timeout each, hooks in the caller's thread.

Every reply and tool result carries its spans (`yiem.timeline`), so a run's timeline is stored
with its messages.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from time import perf_counter
from typing import Any, TypeVar

from pydantic import ValidationError

from yiem._tool_runner import (
    OnUpdate,
    PreparedToolCall,
    ToolBatch,
    ToolThreads,
    accepts_keyword,
    accepts_on_update,
    describe_exception,
    error_output,
    result_message,
    to_tool_output,
)
from yiem.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
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
from yiem.telemetry import traced
from yiem.timeline import Span, new_run_id, with_span
from yiem.types import (
    AbortSignal,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentToolCall,
    AnyAssistantMessage,
    AssistantMessageToolCall,
    BeforeToolCallContext,
    BeforeToolCallResult,
    LlmModel,
    ToolOutput,
    ToolResultMessage,
)
from yiem.validation import ToolArgumentError, validate_tool_arguments

logger = logging.getLogger(__name__)

_UPDATE_KINDS = {"text_delta": "text", "reasoning_delta": "reasoning", "toolcall_delta": "toolcall"}


# --- the three steps of a tool call ------------------------------------------------------------


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
            answer: Any = config.before_tool_call(
                BeforeToolCallContext(assistant_message=assistant, tool_call=call, args=args, context=context)
            )
        except Exception as error:
            logger.exception("before_tool_call failed for %s", call.name)
            return error_output(f"before_tool_call failed: {describe_exception(error)}")
        verdict = _hook_result(answer, BeforeToolCallResult, "before_tool_call")
        if isinstance(verdict, ToolOutput):
            return verdict
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
        answer: Any = config.after_tool_call(
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
    change = _hook_result(answer, AfterToolCallResult, "after_tool_call")
    if isinstance(change, ToolOutput):
        return change
    if change is None:
        return output
    return ToolOutput(
        content=output.content if change.content is None else change.content,
        details=output.details if change.details is None else change.details,
        is_error=output.is_error if change.is_error is None else change.is_error,
    )


HookResult = TypeVar("HookResult", BeforeToolCallResult, AfterToolCallResult)


def _hook_result(value: Any, kind: type[HookResult], hook: str) -> HookResult | ToolOutput | None:
    """A hook's answer as its result model: a plain dict is read as one; anything else is an error."""
    if value is None or isinstance(value, kind):
        return value
    if isinstance(value, dict):
        try:
            return kind.model_validate(value)
        except ValidationError as error:
            return error_output(f"{hook} returned a dict that is not a {kind.__name__}: {error}")
    return error_output(f"{hook} returned {type(value).__name__}, not a {kind.__name__}, a dict or None")


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
    run = _LoopRun(context, llm, model, config or AgentLoopConfig(), signal or AbortSignal())
    # With an OTLP endpoint set, the run is also exported as OpenTelemetry spans (yiem.telemetry).
    return traced(run.events(), context, model, run.run_id)


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
        schema = config.response_schema
        options = GenerationOptions(
            temperature=config.temperature, max_tokens=config.max_tokens, response_schema=schema
        )
        # A client written to `stream(model, context, signal)` gets no options rather than a TypeError.
        self.stream_options = {"options": options} if accepts_keyword(llm.stream, "options") else {}
        self.threads = ToolThreads()
        self.run_id = new_run_id()

    def events(self) -> Iterator[AgentEvent]:
        yield AgentStartEvent()
        added: list[Any] = []
        try:
            stop_reason, error = yield from self._turns(added)
        except Exception as failure:  # a bug or a broken part: the run still ends, its history valid
            logger.exception("the agent loop failed")
            stop_reason, error = "error", f"The agent loop failed: {describe_exception(failure)}"
            yield from self._answer_open_calls(added)
        finally:
            self.threads.close()
        yield AgentEndEvent(messages=added, stop_reason=stop_reason, error_message=error)

    def _turns(self, added: list[Any]) -> Generator[AgentEvent, None, tuple[str, str | None]]:
        """Turn after turn until one ends the run; returns its stop reason and error message."""
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
                error = message.error_message if message.stop_reason == "aborted" else None
                return "aborted", error or aborted_text(self.signal.reason)
            if message.stop_reason == "error":
                return "error", message.error_message or "The model's reply ended with an error"
            if not results:
                return message.stop_reason, None
            if turn >= self.config.max_turns:
                limit = self.config.max_turns
                return "max_turns", (
                    f"Stopped after {turn} turns (max_turns={limit}) while the model was still calling tools"
                )

    def _answer_open_calls(self, added: list[Any]) -> Iterator[AgentEvent]:
        """Give every tool call of this run that has no result an error one, so the history stays valid."""
        answered = {message.tool_call_id for message in added if isinstance(message, ToolResultMessage)}
        for message in list(added):
            if not isinstance(message, AssistantMessageToolCall):
                continue
            for call in message.tool_calls:
                if call.id not in answered:
                    output = error_output("Tool call not finished: the agent loop failed")
                    result = result_message(call, output)
                    added.append(result)
                    self.context.messages.append(result)
                    yield MessageStartEvent(message=result)
                    yield MessageEndEvent(message=result)

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
        request = Span("llm", final.model or self.model.id, started, finished, first_token=first_delta)
        final.timeline = with_span(final.timeline, self.run_id, request)
        # An unknown price shows as "price unknown", never as $0, whatever the provider filled in.
        final.cost = self.model.cost_of(final.usage)
        yield MessageEndEvent(message=final)
        return final

    # --- steps: prepare, execute, finalize every tool call --------------------------------------

    def _run_tool_calls(
        self, assistant: AssistantMessageToolCall
    ) -> Generator[AgentEvent, None, list[ToolResultMessage]]:
        batch = ToolBatch(
            assistant.tool_calls,
            self.threads,
            self.signal,
            parallel=self.config.tool_execution == "parallel",
            timeout=self.config.tool_timeout,
            run=self.run_id,
            hooks=(self.config.before_tool_call is not None, self.config.after_tool_call is not None),
        )
        if assistant.stop_reason in ("error", "aborted"):
            # The reply did not end well: its calls are answered, never run.
            text = "Tool call not run: the assistant reply ended with an error"
            if assistant.stop_reason == "aborted" or self.signal.aborted:
                text = aborted_text(self.signal.reason, "Tool call aborted")
            yield from batch.skip_all(text)
            results = [result for result in batch.results if result is not None]
        else:
            results = yield from batch.run(
                prepare=lambda call: prepare_tool_call(call, assistant, self.context, self.config),
                execute=execute_tool_call,
                finalize=lambda prepared, output: finalize_tool_call(
                    prepared, output, assistant, self.context, self.config
                ),
            )
        for result in results:
            yield MessageStartEvent(message=result)
            yield MessageEndEvent(message=result)
        return results
