"""McpClient against the real third-party servers (SP-009, SP-010) over stdio and Streamable HTTP."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.mcp import (
    EmbeddedResourceBlock,
    ImageBlock,
    McpClient,
    McpConnectionError,
    McpError,
    McpNotification,
    McpProgress,
    ResourceLinkBlock,
    TextBlock,
)
from yiem.mcp.stdio import StderrBuffer


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> Iterator[McpClient]:
    """A session with server-everything, once per transport."""
    if request.param == "stdio":
        server: StdioServer = request.getfixturevalue("everything_stdio")
        client = McpClient.stdio(server.command, server.args)
    else:
        client = McpClient.http(request.getfixturevalue("everything_http_url"))
    with client:
        yield client


def test_initialize_reports_server(everything: McpClient) -> None:
    assert everything.server_info.name == "mcp-servers/everything"
    assert everything.protocol_version == "2025-11-25"
    assert "tools" in everything.capabilities
    assert everything.instructions and "Everything" in everything.instructions


def test_stdio_stderr_is_kept(everything_stdio: StdioServer) -> None:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        client.ping()
        deadline = time.monotonic() + 5  # the stderr reader is its own thread
        while "Starting default (STDIO) server" not in client.stderr and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "Starting default (STDIO) server" in client.stderr


def test_a_stdio_server_runs_in_its_own_session(everything_stdio: StdioServer) -> None:
    # As the SDK starts servers: a Ctrl-C in the app's terminal is not the server's, and a busy
    # machine's scheduler gives it its own CPU share (node then starts in half the time).
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        client.ping()
        pid = client.transport.pid
        assert pid is not None
        assert os.getsid(pid) == pid != os.getsid(0)


def test_stderr_buffer_is_bounded() -> None:
    buffer = StderrBuffer(max_lines=3)
    for n in range(10):
        buffer.append(f"line {n} " + "x" * 5000)
    lines = buffer.text().splitlines()
    assert [line[:6] for line in lines] == ["line 7", "line 8", "line 9"]
    assert all(len(line) == 2000 for line in lines)
    assert len(buffer.tail(100)) == 101 and buffer.tail(100).startswith("…")


def test_http_session_id_is_kept(everything_http_url: str) -> None:
    with McpClient.http(everything_http_url) as client:
        assert client.session_id
        first = client.session_id
        client.ping()
        assert client.session_id == first


def test_http_notification_stream_delivers_server_notifications(everything_http_url: str) -> None:
    """server-everything announces list_changed on the GET stream right after the handshake."""
    arrived = threading.Event()

    def sink(notification: McpNotification) -> None:
        if notification.method == "notifications/tools/list_changed":
            arrived.set()

    with McpClient.http(everything_http_url, event_sink=sink):
        assert arrived.wait(10)


def test_sp009_list_tools(everything: McpClient) -> None:
    """SP-009: tools/list gives names, descriptions and input schemas."""
    tools = {tool.name: tool for tool in everything.list_tools()}
    assert {"get-sum", "echo", "get-tiny-image", "trigger-long-running-operation"} <= set(tools)
    get_sum = tools["get-sum"]
    assert get_sum.description
    assert get_sum.input_schema["properties"].keys() >= {"a", "b"}
    assert set(get_sum.input_schema["required"]) == {"a", "b"}


def test_sp010_call_tool_get_sum(everything: McpClient) -> None:
    """SP-010: tools/call returns text content and is_error false."""
    result = everything.call_tool("get-sum", {"a": 2, "b": 40})
    assert not result.is_error
    assert result.text == "The sum of 2 and 40 is 42."


def test_sp010_echo(everything: McpClient) -> None:
    result = everything.call_tool("echo", {"message": "grüße ✓"})
    assert result.text == "Echo: grüße ✓"


def test_sp010_unknown_tool_is_an_error_result(everything: McpClient) -> None:
    """SP-010 error shape: an unknown tool comes back as is_error with a text, not as an exception."""
    result = everything.call_tool("no-such-tool", {})
    assert result.is_error
    assert "no-such-tool" in result.text


def test_image_content(everything: McpClient) -> None:
    result = everything.call_tool("get-tiny-image", {})
    images = [block for block in result.content if isinstance(block, ImageBlock)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    assert images[0].data.startswith("iVBOR")  # base64 of the PNG signature


def test_resource_links(everything: McpClient) -> None:
    result = everything.call_tool("get-resource-links", {"count": 2})
    links = [block for block in result.content if isinstance(block, ResourceLinkBlock)]
    assert len(links) == 2
    assert all(link.uri for link in links)


def test_embedded_resource(everything: McpClient) -> None:
    result = everything.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 1})
    embedded = [block for block in result.content if isinstance(block, EmbeddedResourceBlock)]
    assert len(embedded) == 1
    assert embedded[0].resource.uri
    assert embedded[0].resource.text


def test_structured_content(everything: McpClient) -> None:
    result = everything.call_tool("get-structured-content", {"location": "Chicago"})
    assert isinstance(result.structured_content, dict)
    assert "temperature" in result.structured_content
    assert json.loads(result.text) == result.structured_content


def test_progress_reaches_callback_and_sink(everything: McpClient) -> None:
    seen: list[McpProgress] = []
    events: list[McpNotification] = []
    everything.event_sink = events.append
    result = everything.call_tool(
        "trigger-long-running-operation", {"duration": 1, "steps": 3}, on_progress=seen.append
    )
    assert not result.is_error
    assert [(p.progress, p.total) for p in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [e.method for e in events].count("notifications/progress") == 3


def test_ping_resources_prompts(everything: McpClient) -> None:
    everything.ping()
    resources = everything.list_resources()
    assert resources
    contents = everything.read_resource(resources[0].uri)
    assert contents and contents[0].uri == resources[0].uri
    prompts = {prompt.name: prompt for prompt in everything.list_prompts()}
    assert "simple-prompt" in prompts
    filled = everything.get_prompt("simple-prompt")
    assert filled.messages
    assert isinstance(filled.messages[0].content, TextBlock)


def test_unknown_method_raises_method_not_found(everything: McpClient) -> None:
    with pytest.raises(McpError) as caught:
        everything.request("no/such-method")
    assert caught.value.code == -32601
    assert "method not found" in str(caught.value).lower()


def test_concurrent_calls_from_threads(everything: McpClient) -> None:
    results: dict[int, str] = {}

    def call(n: int) -> None:
        results[n] = everything.call_tool("get-sum", {"a": n, "b": 1}).text

    threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: f"The sum of {n} and 1 is {n + 1}." for n in range(8)}


def test_memory_server_round_trip(memory_stdio: StdioServer) -> None:
    entity = {"name": "yiem", "entityType": "project", "observations": ["synchronous agents"]}
    with McpClient.stdio(memory_stdio.command, memory_stdio.args, env=memory_stdio.env) as client:
        created = client.call_tool("create_entities", {"entities": [entity]})
        assert not created.is_error
        graph = client.call_tool("read_graph", {})
    assert not graph.is_error
    names = [e["name"] for e in graph.structured_content["entities"]]
    assert names == ["yiem"]


def test_time_server(time_stdio: StdioServer) -> None:
    with McpClient.stdio(time_stdio.command, time_stdio.args) as client:
        now = client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not now.is_error
        assert json.loads(now.text)["timezone"] == "UTC"
        bad = client.call_tool("get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert bad.is_error
    assert "Mars/Olympus_Mons" in bad.text


def test_stdio_server_gets_only_its_env_and_a_minimal_inherited_one(
    everything_stdio: StdioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """API keys in the app's environment never reach a third-party server unless configured."""
    monkeypatch.setenv("YIEM_TEST_SECRET_KEY", "sk-do-not-leak")
    with McpClient.stdio(everything_stdio.command, everything_stdio.args, env={"GIVEN": "yes"}) as client:
        env = json.loads(client.call_tool("get-env", {}).text)
    assert env["GIVEN"] == "yes"
    assert "PATH" in env
    assert "YIEM_TEST_SECRET_KEY" not in env


def test_missing_command_fails_at_once() -> None:
    with pytest.raises(McpConnectionError, match="not found"):
        McpClient.stdio("/no/such/mcp-server")


def test_refused_connection_fails_at_once() -> None:
    from tests.fixtures.ports import free_port

    with pytest.raises(McpConnectionError, match="could not connect"):
        McpClient.http(f"http://127.0.0.1:{free_port()}/mcp")
