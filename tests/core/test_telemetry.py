"""OpenTelemetry export of agent runs (issue 15): GenAI spans to a loopback OTLP/HTTP receiver.

The receiver is real HTTP and the spans are decoded from the protobuf bodies the SDK's exporter
sent; Arize Phoenix as the receiver is in tests/core/test_telemetry_phoenix.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.fixtures.core import make_tool, tool_call_response
from tests.fixtures.otel import OtlpCollector
from tests.fixtures.ports import free_port
from yiem import (
    AbortSignal,
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    LlmModel,
    ScriptedLlm,
    TextContent,
    UserMessage,
    run_agent_loop,
)
from yiem.redaction import add_secrets
from yiem.telemetry import flush_export, traced

SECRET = "sk-otel-test-0123456789abcdef"


def _attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in span.attributes:
        value = item.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            found[item.key] = [getattr(v, v.WhichOneof("value")) for v in value.array_value.values]
        else:
            found[item.key] = getattr(value, kind)
    return found


def _run_with_a_tool(model: LlmModel, prompt: str = "What is 2 + 3?") -> AgentEndEvent:
    def add(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return str(arguments["a"] + arguments["b"])

    context = AgentContext(
        system_prompt="You add.",
        messages=[UserMessage(content=[TextContent(text=prompt)])],
        tools={"add": make_tool("add", add)},
    )
    llm = ScriptedLlm([tool_call_response(("add", {"a": 2, "b": 3})), "The sum is 5."])
    events = list(run_agent_loop(context, llm, model, AgentLoopConfig()))
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.stop_reason == "end_turn", end
    return end


def test_export_is_off_without_an_endpoint(
    monkeypatch: Any, make_context: Callable[..., AgentContext]
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    events = iter(())
    assert traced(events, make_context(), LlmModel(id="m"), "run") is events


def test_a_run_with_a_tool_call_is_an_agent_span_with_chat_and_tool_children(
    otlp_collector: OtlpCollector, otel_export: Callable[..., None], core_model: LlmModel
) -> None:
    otel_export(otlp_collector.url)
    _run_with_a_tool(core_model)
    assert flush_export()
    spans = {span.name: span for span in otlp_collector.spans()}
    assert sorted(spans) == ["chat scripted-1", "execute_tool add", "invoke_agent yiem"]
    root = spans["invoke_agent yiem"]
    chats = [span for span in otlp_collector.spans() if span.name == "chat scripted-1"]
    tool = spans["execute_tool add"]
    assert len(chats) == 2
    for child in [*chats, tool]:
        assert child.trace_id == root.trace_id and child.parent_span_id == root.span_id
        assert root.start_time_unix_nano <= child.start_time_unix_nano <= child.end_time_unix_nano
        assert child.end_time_unix_nano <= root.end_time_unix_nano
    first, second = sorted(chats, key=lambda span: span.start_time_unix_nano)
    assert first.end_time_unix_nano <= tool.start_time_unix_nano <= tool.end_time_unix_nano
    assert tool.end_time_unix_nano <= second.start_time_unix_nano
    asked = _attributes(first)
    assert asked["gen_ai.operation.name"] == "chat"
    assert asked["gen_ai.provider.name"] == "scripted"
    assert asked["gen_ai.request.model"] == asked["gen_ai.response.model"] == "scripted-1"
    assert (asked["gen_ai.usage.input_tokens"], asked["gen_ai.usage.output_tokens"]) == (100, 20)
    assert asked["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert abs(asked["gen_ai.usage.cost"] - (100 * 3.0 + 20 * 15.0) / 1e6) < 1e-12
    called = _attributes(tool)
    assert called["gen_ai.operation.name"] == "execute_tool"
    assert (called["gen_ai.tool.name"], called["gen_ai.tool.call.id"]) == ("add", "call_0")
    whole = _attributes(root)
    assert whole["gen_ai.operation.name"] == "invoke_agent"
    assert whole["gen_ai.response.finish_reasons"] == ["end_turn"]
    # No content unless asked for.
    assert not any(key.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.tool.call.arg")) for key in asked)
    assert "gen_ai.tool.call.result" not in called


def test_content_only_when_asked_and_never_a_secret(
    otlp_collector: OtlpCollector, otel_export: Callable[..., None], core_model: LlmModel
) -> None:
    add_secrets(SECRET)
    otel_export(otlp_collector.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    _run_with_a_tool(core_model, prompt=f"My key is {SECRET}; what is 2 + 3?")
    assert flush_export()
    spans = otlp_collector.spans()
    chat = next(span for span in spans if span.name.startswith("chat"))
    tool = next(span for span in spans if span.name.startswith("execute_tool"))
    sent = _attributes(chat)["gen_ai.input.messages"]
    assert "what is 2 + 3?" in sent and "***" in sent
    assert _attributes(chat)["gen_ai.system_instructions"] == '[{"type": "text", "content": "You add."}]'
    assert '"tool_call"' in _attributes(chat)["gen_ai.output.messages"]
    assert _attributes(tool)["gen_ai.tool.call.arguments"] == '{"a": 2, "b": 3}'
    assert _attributes(tool)["gen_ai.tool.call.result"] == "5"
    assert all(SECRET.encode() not in body for body in otlp_collector.bodies)


def test_a_collector_that_hangs_or_is_gone_never_holds_up_a_reply(
    otlp_collector: OtlpCollector, otel_export: Callable[..., None], core_model: LlmModel
) -> None:
    otlp_collector.hold.clear()  # the collector takes requests and does not answer them
    # A generous exporter timeout: an export made in the run's own thread would hold it that long.
    otel_export(otlp_collector.url, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="300")
    ended: list[AgentEndEvent] = []
    runs = [threading.Thread(target=lambda: ended.append(_run_with_a_tool(core_model))) for _ in range(2)]
    runs[0].start()
    assert otlp_collector.received.wait(60)  # the first run's spans are being sent, unanswered...
    runs[0].join(60)
    runs[1].start()  # ...and a whole second run completes meanwhile
    runs[1].join(60)
    assert not runs[0].is_alive() and not runs[1].is_alive() and len(ended) == 2
    assert not otlp_collector.hold.is_set()  # the collector is still holding the first export
    otlp_collector.hold.set()

    dead = f"http://127.0.0.1:{free_port()}/v1/traces"  # connections are refused
    otel_export(dead)
    end = _run_with_a_tool(core_model)
    assert end.messages[-1].text == "The sum is 5."
    # The export fails in its own thread, and says so only in the log.
    failing = threading.Thread(target=flush_export, args=(5.0,))
    failing.start()
    failing.join(60)
    assert not failing.is_alive()
