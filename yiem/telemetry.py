"""OpenTelemetry export of agent runs (GenAI semantic conventions); off unless an OTLP endpoint is set.

Each run is an `invoke_agent` span; each model request a `chat` child, each tool call an
`execute_tool` child, their times taken from the spans the loop stored on the messages
(`yiem.timeline`). Spans go out through the SDK's batch processor in its own thread, so a slow or
dead collector never delays a reply, and a failure here is logged, never raised into the run.
Message content is attached only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and
always with every known secret masked (`yiem.redaction`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from yiem.events import AgentEndEvent, AgentEvent, MessageEndEvent
from yiem.redaction import redact
from yiem.timeline import Span
from yiem.types import (
    AgentContext,
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
)

logger = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
COST_ATTRIBUTE = "gen_ai.usage.cost"
"""Dollars, when the model's price is known (the name Langfuse reads; the conventions have none yet)."""

_lock = threading.Lock()
_exporting: dict[str, Any] = {}  # "key": the endpoint settings, "provider", "tracer"


def export_enabled() -> bool:
    """Whether runs are exported: an OTLP endpoint is set in the environment."""
    return any(os.environ.get(name) for name in ENDPOINT_VARIABLES)


def _tracer() -> Any:
    """The tracer for the current endpoint settings, built once per setting (None when export is off)."""
    if not export_enabled():
        return None
    key = tuple(os.environ.get(name, "") for name in (*ENDPOINT_VARIABLES, "OTEL_EXPORTER_OTLP_HEADERS"))
    with _lock:
        if _exporting.get("key") == key:
            return _exporting["tracer"]
        # Loaded only when export is on: a program that never exports never pays for the SDK.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        old = _exporting.get("provider")
        attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "yiem"}
        provider = TracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _exporting.update(key=key, provider=provider, tracer=provider.get_tracer("yiem"))
    if old is not None:
        # The settings changed: what the old exporter holds still goes out, in its own time.
        threading.Thread(target=old.shutdown, name="yiem-otel-shutdown", daemon=True).start()
    return _exporting["tracer"]


def shutdown_export() -> None:
    """Send what is queued, then stop; the next run starts afresh (tests, a program about to exit)."""
    with _lock:
        provider = _exporting.get("provider")
        _exporting.clear()
    if provider is not None:
        provider.shutdown()


def flush_export(timeout_s: float = 30.0) -> bool:
    """Send what is queued now (tests, and a program about to exit); True when all went out."""
    provider = _exporting.get("provider")
    return True if provider is None else bool(provider.force_flush(int(timeout_s * 1000)))


def traced(
    events: Iterator[AgentEvent], context: AgentContext, model: LlmModel, run: str
) -> Iterator[AgentEvent]:
    """`events` unchanged; when export is on, each run also becomes spans as its messages end."""
    try:
        tracer = _tracer()
        export = None if tracer is None else _RunExport(tracer, context, model, run)
    except Exception:
        logger.exception("OpenTelemetry export could not start; the run goes on without it")
        export = None
    return events if export is None else export.watch(events)


def _clock_offset_ns() -> int:
    """What to add to `perf_counter()` nanoseconds to get the wall clock's (the spans' time base)."""
    return time.time_ns() - time.perf_counter_ns()


class _RunExport:
    def __init__(self, tracer: Any, context: AgentContext, model: LlmModel, run: str) -> None:
        from opentelemetry import trace

        self.tracer = tracer
        self.model = model
        self.capture = os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"
        self.history: list[AgentMessage] = list(context.messages)
        self.system_prompt = context.system_prompt
        self.arguments: dict[str, Any] = {}
        self.root = tracer.start_span(
            "invoke_agent yiem",
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "yiem",
                "yiem.run.id": run,
                "gen_ai.provider.name": model.provider,
                "gen_ai.request.model": model.id,
            },
        )
        self.parent = trace.set_span_in_context(self.root)
        self.totals = {"input": 0, "output": 0, "cost": 0.0, "priced": True}

    def watch(self, events: Iterator[AgentEvent]) -> Iterator[AgentEvent]:
        try:
            for event in events:
                try:
                    self._observe(event)
                except Exception:
                    logger.exception("exporting a span failed; the run goes on")
                yield event
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()  # the reader stopped early: stop the run too, as without export
            self.root.end()

    def _observe(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            message = event.message
            if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                self._chat(message)
            elif isinstance(message, ToolResultMessage):
                self._tool(message)
            self.history.append(message)
        elif isinstance(event, AgentEndEvent):
            self._end(event)

    def _chat(self, reply: AssistantMessage | AssistantMessageToolCall) -> None:
        from opentelemetry import trace

        usage = reply.usage
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": reply.provider or self.model.provider,
            "gen_ai.request.model": self.model.id,
            "gen_ai.response.model": reply.model or self.model.id,
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.response.finish_reasons": [reply.stop_reason],
        }
        self.totals["input"] += usage.input_tokens
        self.totals["output"] += usage.output_tokens
        if reply.cost is not None:
            attributes[COST_ATTRIBUTE] = reply.cost.total
            self.totals["cost"] += reply.cost.total
        else:
            self.totals["priced"] = False
        if self.capture:
            if self.system_prompt:
                instructions = [{"type": "text", "content": self.system_prompt}]
                attributes["gen_ai.system_instructions"] = _json(instructions)
            attributes["gen_ai.input.messages"] = _json([_message_parts(m) for m in self.history])
            attributes["gen_ai.output.messages"] = _json([_message_parts(reply)])
        for call in getattr(reply, "tool_calls", []):
            self.arguments[call.id] = call.arguments
        spans = reply.timeline.spans if reply.timeline is not None else []
        start, end = _reach(spans)
        span = self.tracer.start_span(
            f"chat {self.model.id}",
            context=self.parent,
            kind=trace.SpanKind.CLIENT,
            start_time=start,
            attributes=attributes,
        )
        if reply.stop_reason in ("error", "aborted"):
            span.set_attribute("error.type", reply.stop_reason)
            span.set_status(trace.Status(trace.StatusCode.ERROR, redact(reply.error_message or "")))
        span.end(end_time=end)

    def _tool(self, result: ToolResultMessage) -> None:
        from opentelemetry import trace

        spans = result.timeline.spans if result.timeline is not None else []
        server = next((s.server for s in spans if s.kind == "tool" and s.server), None)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": result.tool_name,
            "gen_ai.tool.call.id": result.tool_call_id,
            "gen_ai.tool.type": "extension" if server else "function",
        }
        if server:
            attributes["yiem.mcp.server"] = server
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(self.arguments.get(result.tool_call_id, {}))
            attributes["gen_ai.tool.call.result"] = redact(result.text)
        start, end = _reach(spans)
        span = self.tracer.start_span(
            f"execute_tool {result.tool_name}",
            context=self.parent,
            kind=trace.SpanKind.INTERNAL,
            start_time=start,
            attributes=attributes,
        )
        if result.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(trace.Status(trace.StatusCode.ERROR, redact(result.text)[:500]))
        # Hooks and the wait in the queue, as children: they are part of the call's time.
        inside = trace.set_span_in_context(span)
        offset = _clock_offset_ns()
        for part in spans:
            if part.kind in ("hook", "wait"):
                child = self.tracer.start_span(
                    part.name, context=inside, start_time=offset + int(part.start * 1e9)
                )
                child.end(end_time=offset + int(part.end * 1e9))
        span.end(end_time=end)

    def _end(self, event: AgentEndEvent) -> None:
        from opentelemetry import trace

        root = self.root
        root.set_attribute("gen_ai.usage.input_tokens", self.totals["input"])
        root.set_attribute("gen_ai.usage.output_tokens", self.totals["output"])
        root.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
        if self.totals["priced"]:
            root.set_attribute(COST_ATTRIBUTE, self.totals["cost"])
        if event.stop_reason in ("error", "aborted", "max_turns"):
            root.set_attribute("error.type", event.stop_reason)
            root.set_status(trace.Status(trace.StatusCode.ERROR, redact(event.error_message or "")))


def _reach(spans: Sequence[Span]) -> tuple[int | None, int | None]:
    """Wall-clock nanoseconds from the first span's start to the last one's end (None: now)."""
    if not spans:
        return None, None
    offset = _clock_offset_ns()
    return offset + int(min(s.start for s in spans) * 1e9), offset + int(max(s.end for s in spans) * 1e9)


def _json(value: Any) -> str:
    return redact(json.dumps(value, ensure_ascii=False, default=str))


def _message_parts(message: AgentMessage) -> dict[str, Any]:
    """A message in the conventions' shape: a role and its parts (images named, not sent)."""
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ReasoningContent):
            parts.append({"type": "reasoning", "content": block.text})
        elif isinstance(block, ImageContent):
            parts.append({"type": "blob", "modality": "image", "mime_type": block.mime_type})
    if isinstance(message, AssistantMessageToolCall):
        for call in message.tool_calls:
            parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
    if isinstance(message, ToolResultMessage):
        response = {"type": "tool_call_response", "id": message.tool_call_id, "response": message.text}
        return {"role": "tool", "parts": [response]}
    return {"role": message.role, "parts": parts}
