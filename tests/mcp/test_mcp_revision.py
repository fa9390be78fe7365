"""Protocol 2026-07-28 against real SDK 2.3 servers, the fallback to 2025-11-25, and bad input in words."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import SDK_STATELESS_STDIO, StdioServer
from tests.scripted_http import ScriptedServer, json_reply, sse, sse_reply
from yiem.mcp import (
    ElicitationRequest,
    ElicitationResult,
    McpClient,
    McpNotification,
    McpProtocolError,
    McpVersionMismatchError,
    SamplingRequest,
    SamplingResult,
)
from yiem.mcp.http import HttpTransport
from yiem.mcp.stdio import StdioTransport

META = "io.modelcontextprotocol/protocolVersion"


def _elicit(request: ElicitationRequest) -> ElicitationResult:
    assert request.message == "What is your name?"
    return ElicitationResult(action="accept", content={"full_name": "Ada"})


def _sample(request: SamplingRequest) -> SamplingResult:
    return SamplingResult(content={"type": "text", "text": "hello from yiem"}, model="test-model")


@pytest.fixture(params=["stdio", "http"])
def sdk_client(request: pytest.FixtureRequest) -> Iterator[McpClient]:
    client = McpClient(
        StdioTransport(SDK_STATELESS_STDIO.command, SDK_STATELESS_STDIO.args)
        if request.param == "stdio"
        else HttpTransport(request.getfixturevalue("sdk_stateless_http_url")),
        elicitation=_elicit,
        sampling=_sample,
        init_timeout=60.0,
    )
    with client.connect():
        yield client


def test_an_sdk_server_is_met_statelessly(sdk_client: McpClient) -> None:
    assert sdk_client.protocol_version == "2026-07-28" and sdk_client.stateless
    assert sdk_client.session_id is None
    assert sdk_client.server_info.name == "yiem-sdk-stateless"
    assert [tool.name for tool in sdk_client.list_tools()] == ["add", "greet", "ask_model", "set_note"]
    assert sdk_client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    sent = [message for _, direction, message in sdk_client.protocol_log if direction == "sent"]
    assert sent[0]["method"] == "server/discover"
    assert all(message["params"]["_meta"][META] == "2026-07-28" for message in sent)
    assert "initialize" not in [message["method"] for message in sent]


def test_questions_come_back_as_input_required_and_are_answered(sdk_client: McpClient) -> None:
    assert sdk_client.call_tool("greet", {}).text == "Hello, Ada!"
    assert sdk_client.call_tool("ask_model", {}).text == "The model said: hello from yiem"
    received = [
        message.get("result") or {} for _, way, message in sdk_client.protocol_log if way == "received"
    ]
    assert sum(result.get("resultType") == "input_required" for result in received) == 2
    calls = [m for _, way, m in sdk_client.protocol_log if way == "sent" and m.get("method") == "tools/call"]
    answers = [call["params"]["inputResponses"] for call in calls if "inputResponses" in call["params"]]
    assert {"full_name": "Ada"} in [value.get("content") for answer in answers for value in answer.values()]
    assert len({call["id"] for call in calls}) == len(calls)  # every retry is a new request


def test_a_resource_update_comes_on_the_listen_stream(sdk_client: McpClient) -> None:
    updated = threading.Event()

    def sink(notification: McpNotification) -> None:
        if notification.method == "notifications/resources/updated":
            updated.set()
        wish = notification.params.get("notifications", {})
        acked = notification.method == "notifications/subscriptions/acknowledged"
        if acked and "note://today" in wish.get("resourceSubscriptions", []):
            acknowledged.set()

    acknowledged = threading.Event()
    sdk_client.event_sink = sink
    sdk_client.subscribe("note://today")
    assert acknowledged.wait(30)
    assert sdk_client.call_tool("set_note", {"text": "tea at five"}).text == "noted"
    assert updated.wait(30)
    assert sdk_client.read_resource("note://today")[0].text == "tea at five"


def test_a_2025_server_falls_back_to_the_handshake(everything_stdio: StdioServer) -> None:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        assert client.protocol_version == "2025-11-25" and not client.stateless
        methods = [message.get("method") for _, way, message in client.protocol_log if way == "sent"]
        assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


def _discover(result_extra: dict[str, object] | None = None) -> dict[str, object]:
    result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}}
    return {"jsonrpc": "2.0", "id": 1, "result": {**result, **(result_extra or {})}}


def test_a_version_mismatch_is_said_in_words(scripted_server: ScriptedServer) -> None:
    error = {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2027-03-01"]}}
    scripted_server.script(json_reply({"jsonrpc": "2.0", "id": 1, "error": error}, status=400))
    with pytest.raises(McpVersionMismatchError) as caught:
        McpClient.http(scripted_server.url + "/mcp")
    assert "does not accept protocol revision 2026-07-28 (it supports 2027-03-01" in str(caught.value)


@pytest.mark.parametrize(
    ("meta", "words"),
    [
        ("not an object", "malformed _meta (str, not an object)"),
        ({META: "2025-11-25"}, "in protocol revision"),
    ],
)
def test_a_bad_meta_in_a_reply_is_refused_in_words(
    scripted_server: ScriptedServer, meta: object, words: str
) -> None:
    scripted_server.script(json_reply(_discover({"_meta": meta})))
    with pytest.raises(McpProtocolError, match="server/discover") as caught:
        McpClient.http(scripted_server.url + "/mcp")
    assert words in str(caught.value)


def test_a_dying_listen_stream_is_reported_and_opened_again(scripted_server: ScriptedServer) -> None:
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {}},
    }
    scripted_server.script(
        json_reply(_discover({"capabilities": {"tools": {"listChanged": True}}})),
        sse_reply([sse(ack)]),  # ends without a result: the stream died
        sse_reply([sse(ack), sse(ack)], delay=0.2),
    )
    events: list[McpNotification] = []
    second_ack = threading.Event()

    def sink(notification: McpNotification) -> None:
        events.append(notification)
        if sum(event.method == "notifications/subscriptions/acknowledged" for event in events) >= 2:
            second_ack.set()

    with McpClient.http(scripted_server.url + "/mcp", event_sink=sink) as client:
        assert second_ack.wait(30)
        assert client.listen.breaks >= 1
    broken = [event for event in events if event.method == "yiem/subscriptions/broken"]
    assert broken and "the subscription stream broke" in broken[0].params["message"]
    assert "listening again in 0.5 s" in broken[0].params["message"]
    listens = [r.body for r in scripted_server.requests if isinstance(r.body, dict)][1:3]
    assert [body["method"] for body in listens] == ["subscriptions/listen"] * 2
    assert listens[0]["params"]["notifications"] == {"toolsListChanged": True}


def test_a_cacheable_list_is_reused_while_fresh(sdk_client: McpClient) -> None:
    first = sdk_client.list_tools()
    assert sdk_client.list_age("tools/list") is None  # sent by the server
    assert sdk_client.list_tools() == first
    age = sdk_client.list_age("tools/list")
    assert age is not None and age >= 0
    sent = [m for _, way, m in sdk_client.protocol_log if way == "sent" and m.get("method") == "tools/list"]
    assert len(sent) == 1
    sdk_client.lists.changed("notifications/tools/list_changed")
    sdk_client.list_tools()
    assert sdk_client.list_age("tools/list") is None
