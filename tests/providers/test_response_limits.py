"""Response size limits (issue 11): a huge body ends in words with the partial reply kept, and the
client's memory stays bounded by the limit, not by what the server sends."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from tests.scripted_http import Reply, ScriptedServer, json_reply, sse
from yiem.errors import YiemError
from yiem.limits import ResponseLimits
from yiem.providers import ModelListError, OpenAIChatClient
from yiem.types import AgentContext, LlmModel, TextContent, UserMessage

MODEL = LlmModel(id="m", provider="scripted", api="openai-completions")
CONTEXT = AgentContext(messages=[UserMessage(content=[TextContent(text="hi")])])
MIB = 1024 * 1024


def _delta(text: str) -> bytes:
    return sse({"choices": [{"index": 0, "delta": {"content": text}}]})


def _client(server: ScriptedServer, **limits: int) -> OpenAIChatClient:
    return OpenAIChatClient(f"{server.url}/v1", limits=ResponseLimits(**limits))


def test_a_huge_event_stream_stops_at_the_byte_limit_with_the_partial_reply(
    scripted_server: ScriptedServer,
) -> None:
    chunk = _delta("x" * 60_000)
    # About 100 MiB if read to the end; the limit is 4 MiB.
    scripted_server.script(Reply(headers={"Content-Type": "text/event-stream"}, chunks=[chunk] * 1700))
    tracemalloc.start()
    try:
        client = _client(scripted_server, max_response_bytes=4 * MIB, max_reply_chars=100 * MIB)
        message = client.complete(MODEL, CONTEXT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message.stop_reason == "error"
    assert "more than 4 MiB (YIEM_MAX_RESPONSE_BYTES)" in (message.error_message or "")
    assert "The partial reply is kept." in (message.error_message or "")
    text = message.content[0].text  # type: ignore[union-attr]
    assert 3 * MIB < len(text) <= 4 * MIB
    assert peak < 24 * MIB, f"peak {peak / MIB:.1f} MiB while reading a 100 MiB body under a 4 MiB limit"


def test_one_endless_line_is_cut_at_the_byte_limit(scripted_server: ScriptedServer) -> None:
    endless = Reply(headers={"Content-Type": "text/event-stream"}, chunks=[b"data: " + b"y" * 65_536] * 200)
    scripted_server.script(endless)
    message = _client(scripted_server, max_response_bytes=2 * MIB).complete(MODEL, CONTEXT)
    assert message.stop_reason == "error" and "YIEM_MAX_RESPONSE_BYTES" in (message.error_message or "")


def test_a_huge_json_body_and_model_list_stop_at_the_limit(scripted_server: ScriptedServer) -> None:
    big = Reply(headers={"Content-Type": "application/json"}, chunks=[b" " * 65_536] * 100)
    scripted_server.script(
        big, Reply(headers={"Content-Type": "application/json"}, chunks=[b" " * 65_536] * 100)
    )
    client = _client(scripted_server, max_response_bytes=MIB)
    message = client.complete(MODEL, CONTEXT)
    assert message.stop_reason == "error" and "more than 1 MiB" in (message.error_message or "")
    with pytest.raises(ModelListError, match="more than 1 MiB"):
        client.list_models()


def test_a_streamed_reply_stops_at_the_character_limit(scripted_server: ScriptedServer) -> None:
    events = [_delta("abcde" * 10) for _ in range(100)] + [sse("[DONE]")]
    scripted_server.script(Reply(headers={"Content-Type": "text/event-stream"}, chunks=events))
    message = _client(scripted_server, max_reply_chars=1_000).complete(MODEL, CONTEXT)
    assert message.stop_reason == "error"
    assert "passed 1,000 characters (YIEM_MAX_REPLY_CHARS)" in (message.error_message or "")
    assert "The partial reply is kept." in (message.error_message or "")
    assert 1_000 < len(message.content[0].text) <= 1_050  # type: ignore[union-attr]


def test_the_limits_come_from_the_environment() -> None:
    assert ResponseLimits.from_environment({}) == ResponseLimits(
        max_response_bytes=32 * MIB, max_reply_chars=2_000_000
    )
    found = ResponseLimits.from_environment(
        {"YIEM_MAX_RESPONSE_BYTES": "1_048_576", "YIEM_MAX_REPLY_CHARS": "9"}
    )
    assert (found.max_response_bytes, found.max_reply_chars) == (MIB, 9)
    with pytest.raises(YiemError, match="YIEM_MAX_REPLY_CHARS must be a positive whole number"):
        ResponseLimits.from_environment({"YIEM_MAX_REPLY_CHARS": "lots"})


def test_normal_replies_are_untouched(scripted_server: ScriptedServer) -> None:
    events = [_delta("Hello"), _delta(" there."), sse("[DONE]")]
    scripted_server.script(Reply(headers={"Content-Type": "text/event-stream"}, chunks=events))
    scripted_server.script(json_reply({"data": [{"id": "m"}]}))
    client = _client(scripted_server, max_response_bytes=MIB, max_reply_chars=100)
    message = client.complete(MODEL, CONTEXT)
    assert message.stop_reason == "stop" and message.content[0].text == "Hello there."  # type: ignore[union-attr]
    assert client.list_models() == ["m"]
    assert json.dumps(message.model_dump(mode="json"))  # the message is whole and serialisable


def test_an_mcp_server_over_http_is_held_to_the_byte_limit(
    scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yiem.mcp import McpClient, McpError

    monkeypatch.setenv("YIEM_MAX_RESPONSE_BYTES", str(MIB))
    huge_json = Reply(headers={"Content-Type": "application/json"}, chunks=[b" " * 65_536] * 200)
    huge_events = Reply(
        headers={"Content-Type": "text/event-stream"}, chunks=[b"data: " + b"z" * 65_536] * 200
    )
    for reply in (huge_json, huge_events):
        scripted_server.script(reply)
        with pytest.raises(McpError, match=r"more than 1 MiB \(YIEM_MAX_RESPONSE_BYTES\)"):
            McpClient.http(f"{scripted_server.url}/mcp", timeout=30)
