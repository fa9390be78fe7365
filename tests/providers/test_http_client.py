"""Failure paths every HTTP provider shares, against a scripted loopback server.

HTTP errors, retries with backoff that honours Retry-After, dropped and malformed streams,
and abort: `stream()` never raises and always ends with exactly one StreamDone (SP-022 abort).
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from tests.fixtures.ports import free_port
from tests.scripted_http import (
    Reply,
    ScriptedServer,
    json_reply,
    openai_chunk,
    openai_text_stream,
    sse,
    sse_reply,
)
from yiem.llm import StreamDone, StreamEvent, TextDelta
from yiem.providers import OpenAIChatClient, RetryPolicy
from yiem.providers._abortable import AbortableClient
from yiem.types import AbortSignal, AgentContext, AssistantMessage, LlmModel, TextContent, UserMessage

MODEL = LlmModel(id="scripted-model", provider="scripted")


def _context() -> AgentContext:
    return AgentContext(messages=[UserMessage(content=[TextContent(text="hi")])])


class RecordingSignal(AbortSignal):
    """An AbortSignal whose waits return at once and are recorded, so backoff is checked exactly."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return self.aborted


def _run(client: OpenAIChatClient, signal: AbortSignal | None = None) -> tuple[list[StreamEvent], Any]:
    events = list(client.stream(MODEL, _context(), signal))
    done = [event for event in events if isinstance(event, StreamDone)]
    assert len(done) == 1 and events[-1] is done[0]
    return events, done[0].message


def test_401_ends_with_the_status_and_the_providers_text(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        json_reply({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}, 401)
    )
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1", api_key="bad"))
    assert message.stop_reason == "error"
    assert "HTTP 401" in message.error_message and "Incorrect API key provided" in message.error_message
    assert len(scripted_server.requests) == 1  # a 401 is not retried
    assert scripted_server.requests[0].headers["Authorization"] == "Bearer bad"


def test_429_waits_as_retry_after_says_then_succeeds(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        json_reply({"error": {"message": "Rate limit reached"}}, 429, headers={"Retry-After": "7"}),
        sse_reply(openai_text_stream("fine")),
    )
    signal = RecordingSignal()
    client = OpenAIChatClient(scripted_server.url + "/v1", retry=RetryPolicy(base_delay=0.25, max_delay=30))
    _, message = _run(client, signal)
    assert message.error_message is None and message.text == "fine"
    assert signal.waits == [7.0]
    assert len(scripted_server.requests) == 2
    # The back-off is a wait on the reply's timeline (the loop adds the request's own span after it).
    assert message.timeline is not None
    (wait,) = message.timeline.spans
    assert wait.kind == "wait" and wait.name.startswith("retry after: HTTP 429")


def test_500_then_success_uses_exponential_backoff(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        Reply(status=500, chunks=[b"upstream exploded"]),
        Reply(status=503, chunks=[b"still down"]),
        sse_reply(openai_text_stream("back")),
    )
    signal = RecordingSignal()
    client = OpenAIChatClient(
        scripted_server.url + "/v1", retry=RetryPolicy(max_attempts=3, base_delay=1.0, jitter=0.0)
    )
    _, message = _run(client, signal)
    assert message.text == "back" and message.error_message is None
    assert signal.waits == [1.0, 2.0]


def test_retries_give_up_after_the_configured_tries(scripted_server: ScriptedServer) -> None:
    scripted_server.script(*[Reply(status=502, chunks=[b"bad gateway"]) for _ in range(2)])
    client = OpenAIChatClient(scripted_server.url + "/v1", retry=RetryPolicy(max_attempts=2))
    _, message = _run(client, RecordingSignal())
    assert message.stop_reason == "error"
    assert "HTTP 502" in message.error_message and "bad gateway" in message.error_message
    assert "gave up after 2 tries" in message.error_message
    assert len(scripted_server.requests) == 2


def test_retry_after_longer_than_the_limit_is_not_waited_for(scripted_server: ScriptedServer) -> None:
    scripted_server.script(json_reply({"error": "slow down"}, 429, headers={"Retry-After": "3600"}))
    signal = RecordingSignal()
    client = OpenAIChatClient(scripted_server.url + "/v1", retry=RetryPolicy(max_delay=30))
    _, message = _run(client, signal)
    assert message.stop_reason == "error" and "HTTP 429" in message.error_message
    assert signal.waits == []


def test_connection_refused_is_retried_then_reported() -> None:
    signal = RecordingSignal()
    port = free_port()
    client = OpenAIChatClient(f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_attempts=3, jitter=0))
    _, message = _run(client, signal)
    assert message.stop_reason == "error"
    assert "Could not reach" in message.error_message and str(port) in message.error_message
    assert signal.waits == [0.5, 1.0]


def test_malformed_json_in_the_stream_keeps_what_came_before(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply([openai_chunk({"content": "Hel"}), sse("{not json")]))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"))
    assert message.stop_reason == "error"
    assert "malformed JSON" in message.error_message and "partial reply is kept" in message.error_message
    assert message.text == "Hel"


def test_a_body_that_is_not_sse_is_an_error_naming_its_type(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        Reply(headers={"Content-Type": "text/html"}, chunks=[b"<html><body>Welcome to nginx</body></html>"])
    )
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"))
    assert message.stop_reason == "error"
    assert "text/html" in message.error_message and "Welcome to nginx" in message.error_message


def test_invalid_json_body_is_an_error(scripted_server: ScriptedServer) -> None:
    scripted_server.script(Reply(headers={"Content-Type": "application/json"}, chunks=[b"{'oops'"]))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1", streaming=False))
    assert message.stop_reason == "error" and "not valid JSON" in message.error_message


def test_stream_dropped_mid_way_keeps_the_partial_text(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply([openai_chunk({"content": "The answer "}), openai_chunk({"content": "is"})], drop=True)
    )
    events, message = _run(OpenAIChatClient(scripted_server.url + "/v1"))
    assert [event.delta for event in events if isinstance(event, TextDelta)] == ["The answer ", "is"]
    assert isinstance(message, AssistantMessage)
    assert message.stop_reason == "error"
    assert message.text == "The answer is"
    assert "broke before the reply was complete" in message.error_message
    assert "partial reply is kept" in message.error_message


def test_stream_that_ends_cleanly_but_early_is_incomplete(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply([openai_chunk({"content": "half"})]))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"))
    assert message.stop_reason == "error" and message.text == "half"
    assert "ended before the reply was complete" in message.error_message


def test_read_timeout_mid_stream_says_so(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply([openai_chunk({"content": "slow"}), openai_chunk({}, "stop")], delay=30))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1", timeout=httpx.Timeout(10, read=3)))
    assert message.stop_reason == "error" and message.text == "slow"
    assert "no data arrived for 3 s" in message.error_message


def test_abort_mid_stream_closes_the_connection(scripted_server: ScriptedServer) -> None:
    """SP-022: an abort from another thread ends the stream as `aborted` and hangs up on the server."""
    scripted_server.script(sse_reply([openai_chunk({"content": "tick "})], delay=0.02, repeat_forever=True))
    signal = AbortSignal()
    events: list[StreamEvent] = []
    for event in OpenAIChatClient(scripted_server.url + "/v1").stream(MODEL, _context(), signal):
        events.append(event)
        if len(events) == 3:
            threading.Thread(target=signal.abort, args=("user pressed stop",)).start()
    message = events[-1].message  # type: ignore[union-attr]
    assert message.stop_reason == "aborted"
    assert message.error_message == "Aborted: user pressed stop"
    assert message.text.startswith("tick tick")
    assert scripted_server.client_gone.wait(5)


def test_abort_mid_tool_call_drops_it_and_says_so(scripted_server: ScriptedServer) -> None:
    """The HTTP client ends an abort as the loop and the scripted model do (yiem.llm.aborted_reply)."""
    fragment = {"index": 0, "id": "c1", "function": {"name": "add", "arguments": '{"a":'}}
    scripted_server.script(
        sse_reply(
            [openai_chunk({"content": "Let me look"}), openai_chunk({"tool_calls": [fragment]})],
            delay=0.02,
            repeat_forever=True,
        )
    )
    signal = AbortSignal()
    events: list[StreamEvent] = []
    for event in OpenAIChatClient(scripted_server.url + "/v1").stream(MODEL, _context(), signal):
        events.append(event)
        if event.type == "toolcall_delta" and not signal.aborted:
            signal.abort("stop")
    message = events[-1].message  # type: ignore[union-attr]
    assert type(message) is AssistantMessage and message.stop_reason == "aborted"
    assert message.error_message == "Aborted: stop. The unfinished tool call was dropped."
    assert message.text == "Let me look"


def test_abort_while_waiting_for_headers(scripted_server: ScriptedServer) -> None:
    """SP-022: abort reaches a request still waiting for the first byte of the response."""
    scripted_server.script(
        Reply(delay_headers=30, headers={"Content-Type": "text/event-stream"}, chunks=[b""]),
    )
    signal = AbortSignal()

    def abort_once_the_server_has_the_request() -> None:
        while not scripted_server.requests:
            signal.wait(0.01)
        signal.abort()

    threading.Thread(target=abort_once_the_server_has_the_request, daemon=True).start()
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"), signal)
    assert message.stop_reason == "aborted" and message.content == []
    assert len(scripted_server.requests) == 1


def test_abort_before_start_sends_nothing(scripted_server: ScriptedServer) -> None:
    signal = AbortSignal()
    signal.abort()
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"), signal)
    assert message.stop_reason == "aborted"
    assert scripted_server.requests == []


def test_abort_during_backoff_stops_waiting(scripted_server: ScriptedServer) -> None:
    """SP-022: the backoff wait ends as soon as another thread aborts."""

    class AbortWhileWaiting(AbortSignal):
        def wait(self, timeout: float | None = None) -> bool:
            threading.Timer(0.05, self.abort).start()
            return super().wait(timeout)

    scripted_server.script(json_reply({"error": "busy"}, 503, headers={"Retry-After": "20"}))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"), AbortWhileWaiting())
    assert message.stop_reason == "aborted"
    assert len(scripted_server.requests) == 1


def test_abort_racing_the_connection_still_cuts_the_request(scripted_server: ScriptedServer) -> None:
    """SP-022: an abort that lands before the request has a socket cuts that socket on first use."""
    scripted_server.script(Reply(headers={"Content-Type": "text/plain"}, chunks=[b"second"]))
    client = AbortableClient(httpx.Client())
    client.interrupt(threading.get_ident())  # the abort arrives before any connection exists
    with pytest.raises(httpx.TransportError):
        client.http.get(scripted_server.url)
    assert scripted_server.requests == []  # cut before a byte was sent
    client.reset(threading.get_ident())
    assert client.http.get(scripted_server.url).text == "second"
    client.close()


def test_cost_is_left_unset_when_the_price_is_unknown(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply(openai_text_stream("x", usage={"prompt_tokens": 3, "completion_tokens": 1}))
    )
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"))
    assert MODEL.price_known is False and message.cost is None and message.usage.input_tokens == 3


def test_no_base_url_is_a_message_not_an_exception() -> None:
    _, message = _run(OpenAIChatClient())
    assert message.stop_reason == "error" and "No base URL" in message.error_message


@pytest.mark.parametrize("status", [400, 404, 422])
def test_client_errors_are_not_retried(scripted_server: ScriptedServer, status: int) -> None:
    scripted_server.script(json_reply({"message": f"status {status} text"}, status))
    _, message = _run(OpenAIChatClient(scripted_server.url + "/v1"), RecordingSignal())
    assert f"HTTP {status}" in message.error_message and f"status {status} text" in message.error_message
    assert len(scripted_server.requests) == 1


def test_a_bug_inside_the_client_still_ends_with_one_message(scripted_server: ScriptedServer) -> None:
    class Broken(OpenAIChatClient):
        def build_request(self, *args: Any) -> Any:
            raise KeyError("surprise")

    _, message = _run(Broken(scripted_server.url + "/v1"))
    assert message.stop_reason == "error"
    assert "Unexpected error" in message.error_message and "surprise" in message.error_message
