"""One rule, one place (issue 10): each shared rule is written once and every caller uses it."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import yiem
from tests.fixtures.core import tool_call_response
from yiem import (
    AbortSignal,
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    LlmUsage,
    MessageEndEvent,
    MessageUpdateEvent,
    ModelCost,
    ReasoningContent,
    ScriptedLlm,
    StreamDone,
    StreamStart,
    TextContent,
    ToolCallDelta,
    ToolResultMessage,
    UsageCost,
    UserMessage,
    YiemError,
    run_agent_loop,
)
from yiem.extract import extract_assistant_message, openai_usage
from yiem.llm import StreamEvent, aborted_reply

PRICED = LlmModel(id="m", provider="p", cost=ModelCost(input=2.0, output=10.0), price_known=True)
UNPRICED = LlmModel(id="m", provider="p", cost=ModelCost(input=2.0, output=10.0))
SENTINEL = UsageCost(total=42.0)


def test_cost_of_is_the_usage_cost_or_none_when_the_price_is_unknown() -> None:
    usage = LlmUsage(input_tokens=1_000_000, output_tokens=100_000)
    assert PRICED.cost_of(usage) == usage.cost(PRICED.cost)
    assert PRICED.cost_of(usage).total == pytest.approx(3.0)  # type: ignore[union-attr]
    # A model whose price is unknown costs "unknown", never $0, whatever its cost fields hold.
    assert UNPRICED.cost_of(usage) is None


def test_every_place_that_prices_a_reply_asks_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The loop, the HTTP clients' message builder, the chat session and the store all call cost_of."""
    from sqlalchemy import select

    from yiem.chat._session import _price
    from yiem.providers._message_builder import MessageBuilder
    from yiem.store import ConversationStore, create_store_engine, usage

    asked: list[LlmUsage] = []

    def cost_of(self: LlmModel, usage: LlmUsage) -> UsageCost | None:
        asked.append(usage)
        return SENTINEL

    monkeypatch.setattr(LlmModel, "cost_of", cost_of)
    events = list(run_agent_loop(AgentContext(), ScriptedLlm(["hi"]), UNPRICED))
    assert events[-1].messages[0].cost == SENTINEL

    builder = MessageBuilder(UNPRICED, "p")
    builder.text("hi")
    assert builder.finish().message.cost == SENTINEL
    assert builder.aborted("stop").message.cost == SENTINEL

    reply = AssistantMessage(usage=LlmUsage(output_tokens=3))
    _price(reply, UNPRICED)
    assert reply.cost == SENTINEL

    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'yiem.db'}"))
    conversation = store.create()
    store.append_message(conversation.id, AssistantMessage(), UNPRICED)
    with store.engine.connect() as conn:
        assert conn.execute(select(usage.c.cost_total)).scalar_one() == 42.0
    assert len(asked) == 5


def test_one_openai_usage_mapping_for_extract_and_the_openai_client() -> None:
    from yiem.providers import openai_chat

    assert openai_chat.openai_usage is openai_usage
    raw = {
        "prompt_tokens": 100,
        "completion_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 30},
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    expected = LlmUsage(input_tokens=70, output_tokens=40, cache_read_tokens=30, reasoning_tokens=25)
    assert openai_usage(raw) == expected
    assert extract_assistant_message({"content": "x", "usage": raw}).usage == expected
    problems: list[str] = []
    assert openai_usage({"prompt_tokens": "many"}, problems) == LlmUsage()
    assert problems == ["usage.prompt_tokens is not a token count: 'many'"]


def test_every_message_type_has_its_text() -> None:
    blocks: list[Any] = [TextContent(text="a"), ImageContent(data="QUJD"), TextContent(text="b")]
    assert UserMessage(content=blocks).text == "ab"
    assert ToolResultMessage(tool_call_id="c", tool_name="t", content=blocks).text == "ab"
    assert AssistantMessage(content=[ReasoningContent(text="think"), *blocks]).text == "ab"
    assert ToolResultMessage(tool_call_id="c", tool_name="t", content=blocks).text_joined_by("\n") == "a\nb"


def _hand_joined_text(path: Path) -> Iterator[int]:
    """Lines of `path` that gather `.text` of the TextContent blocks themselves."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            continue
        if not (isinstance(node.elt, ast.Attribute) and node.elt.attr == "text"):
            continue
        for condition in (test for generator in node.generators for test in generator.ifs):
            text = ast.unparse(condition)
            if text.startswith("isinstance(") and text.endswith(", TextContent)"):
                yield node.lineno


def test_a_messages_text_is_read_through_the_type_everywhere() -> None:
    """Only yiem.types.content_text joins TextContent blocks; yiem and ui ask a message for `.text`."""
    top = Path(yiem.__file__).parent.parent
    found = [
        f"{path.relative_to(top)}"
        for folder in ("yiem", "ui")
        for path in sorted((top / folder).rglob("*.py"))
        for _ in _hand_joined_text(path)
    ]
    # The one rule itself is found, so the scan does see a join written this way.
    assert found == ["yiem/types.py"], "read the text through message.text or text_joined_by"


class _HangingToolCallLlm:
    """Streams half a tool call and then waits for the abort without ever finishing the stream."""

    def stream(
        self, model: LlmModel, context: AgentContext, signal: AbortSignal | None = None, **_: Any
    ) -> Iterator[StreamEvent]:
        partial = AssistantMessageToolCall(content=[TextContent(text="Let me look")])
        yield StreamStart(partial=partial)
        partial.tool_calls.append(AgentToolCall(id="c1", name="add"))
        yield ToolCallDelta(partial=partial, index=0, id="c1", name="add", arguments_delta='{"a":')
        assert signal is not None
        signal.wait(5)
        yield ToolCallDelta(partial=partial, index=0, arguments_delta="1")


def _aborted_from_the_loop() -> AssistantMessage:
    signal = AbortSignal()
    final: Any = None
    for event in run_agent_loop(AgentContext(), _HangingToolCallLlm(), PRICED, signal=signal):
        if isinstance(event, MessageUpdateEvent) and event.kind == "toolcall":
            signal.abort("stop")
        if isinstance(event, MessageEndEvent):
            final = event.message
    return final  # type: ignore[no-any-return]


def _aborted_from_the_scripted_model() -> AssistantMessage:
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 2}), text="Let me look")], chunk_size=64)
    signal = AbortSignal()
    final: Any = None
    for event in llm.stream(PRICED, AgentContext(), signal):
        if isinstance(event, ToolCallDelta):
            signal.abort("stop")
        if isinstance(event, StreamDone):
            final = event.message
    return final  # type: ignore[no-any-return]


def test_the_aborted_message_is_built_in_one_place() -> None:
    """The loop and the scripted model end an abort alike (the HTTP client: test_http_client)."""
    expected = "Aborted: stop. The unfinished tool call was dropped."
    for message in (_aborted_from_the_loop(), _aborted_from_the_scripted_model()):
        assert type(message) is AssistantMessage
        assert message.stop_reason == "aborted"
        assert message.error_message == expected
        assert message.text == "Let me look"
    assert aborted_reply(None, PRICED, None).error_message == "Aborted"
    assert aborted_reply(AssistantMessage(), PRICED, "why").error_message == "Aborted: why"


def test_agent_prompt_takes_a_user_message_as_it_is(core_model: LlmModel) -> None:
    llm = ScriptedLlm(["seen"])
    agent = Agent(llm, core_model)
    prompt = UserMessage(content=[TextContent(text="look"), ImageContent(data="QUJD")])
    events = list(agent.prompt(prompt))
    assert isinstance(events[-1], AgentEndEvent)
    assert agent.state.messages[0] is prompt
    assert llm.requests[0].messages == [prompt]
    # Text and images still work, and build the same message.
    built = UserMessage.from_text("look", [ImageContent(data="QUJD")])
    assert built.content == prompt.content
    assert UserMessage.from_text("").content == []


def _yiem_modules() -> Iterator[Any]:
    """Every module and package under yiem (the command-line `__main__` modules aside)."""
    yield yiem
    for info in pkgutil.walk_packages(yiem.__path__, "yiem."):
        if not info.name.endswith(".__main__"):
            yield importlib.import_module(info.name)


def _plain_raises() -> Iterator[str]:
    """`raise ValueError(...)` and the other built-ins a caller cannot tell from anyone else's."""
    plain = {"Exception", "ValueError", "TypeError", "RuntimeError", "KeyError"}
    root = Path(yiem.__file__).parent
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            raised = node.exc.func if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) else None
            if isinstance(raised, ast.Name) and raised.id in plain:
                yield f"{path.relative_to(root.parent)}:{node.lineno} raises {raised.id}"


def test_every_error_yiem_raises_is_a_yiem_error() -> None:
    errors = [
        cls
        for module in _yiem_modules()
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == module.__name__
    ]
    assert len(errors) >= 40
    assert [cls.__qualname__ for cls in errors if not issubclass(cls, YiemError)] == []
    # Each raise names a yiem error (which may also be a ValueError or TypeError for older callers).
    assert list(_plain_raises()) == []


def test_one_server_sent_events_reader_for_the_providers_and_mcp() -> None:
    """providers._sse, mcp.sse and mcp.http all read events through yiem._sse, none line by line."""
    from yiem._sse import sse_events
    from yiem.limits import ResponseLimits
    from yiem.mcp.http import iter_sse_data
    from yiem.mcp.sse import iter_sse_events
    from yiem.providers._sse import capped_events

    body = "id: 7\r\nevent: endpoint\r\ndata: /m\r\n\r\n: ping\n\ndata: {\ndata:  }\n\ndata:\n\ndata: tail"
    events = list(sse_events(body.replace("\r\n", "\n").split("\n")))
    assert [(e.event, e.data, e.id) for e in events] == [
        ("endpoint", "/m", "7"),
        ("message", "", "7"),  # a comment's blank line still dispatches: the spec keeps the id
        ("message", "{\n }", "7"),
        ("message", "", "7"),
        ("message", "tail", "7"),  # an unterminated last event with data is not lost
    ]
    chunks = [body.encode()[:13], body.encode()[13:]]
    assert [e.data for e in capped_events(chunks, ResponseLimits(), "s")] == [e.data for e in events]
    lines = body.replace("\r\n", "\n").split("\n")
    named = [("endpoint", "/m"), ("message", "{\n }"), ("message", "tail")]
    assert list(iter_sse_events(iter(lines))) == named
    assert list(iter_sse_data(iter(lines))) == ["/m", "{\n }", "tail"]
    # Reading event-stream fields by hand ("field: value") anywhere else is a second reader.
    root = Path(yiem.__file__).parent
    readers = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "_sse.py" or path.parent != root
        if 'partition(":")' in path.read_text(encoding="utf-8")
    ]
    assert readers == []
