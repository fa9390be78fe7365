"""SP-010 at 2026-07-28: tool calls as tasks through the tasks extension (SEP-2663), against a real
FastMCP server with `fastmcp-tasks`, over stdio and Streamable HTTP: opting in per call, a tool that
only runs as a task, polling to the result, a task that asks a question, a failing one, Cancel."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.mcp import StdioServer
from tests.scripted_http import ScriptedServer, json_reply
from yiem.mcp import McpCancelledError, McpClient, McpProtocolError, McpTask
from yiem.mcp._ext_tasks import TASKS_EXTENSION_ID, task_from_wire
from yiem.mcp._revision import CLIENT_CAPABILITIES_KEY, standard_headers
from yiem.mcp.models import ElicitationRequest, ElicitationResult
from yiem.types import AbortSignal

QUESTIONS: list[str] = []


def _elicit(request: ElicitationRequest) -> ElicitationResult:
    QUESTIONS.append(request.message)
    return ElicitationResult(action="accept", content={"full_name": "Ada Lovelace"})


@pytest.fixture(params=["stdio", "http"])
def client(
    request: pytest.FixtureRequest, tasks_extension_stdio: StdioServer, tasks_extension_http_url: str
) -> Iterator[McpClient]:
    if request.param == "stdio":
        server = tasks_extension_stdio
        opened = McpClient.stdio(server.command, server.args, elicitation=_elicit)
    else:
        opened = McpClient.http(tasks_extension_http_url, elicitation=_elicit)
    with opened:
        yield opened


def _sent(client: McpClient, method: str) -> list[dict[str, Any]]:
    return [m for _, way, m in client.protocol_log if way == "sent" and m.get("method") == method]


def _opted_in(message: dict[str, Any]) -> bool:
    declared = message["params"]["_meta"][CLIENT_CAPABILITIES_KEY]
    return TASKS_EXTENSION_ID in declared.get("extensions", {})


def test_the_server_offers_the_extension_and_a_call_is_a_task_only_when_asked(client: McpClient) -> None:
    assert client.protocol_version == "2026-07-28"
    assert TASKS_EXTENSION_ID in client.capabilities["extensions"]

    assert client.call_tool("slow_add", {"a": 2, "b": 3}).text == "5"
    assert not _opted_in(_sent(client, "tools/call")[-1])
    assert not _sent(client, "tasks/get")

    seen: list[McpTask] = []
    result = client.call_tool("slow_add", {"a": 4, "b": 5}, as_task=True, on_task=seen.append)
    assert result.text == "9" and not result.is_error
    call = _sent(client, "tools/call")[-1]
    assert _opted_in(call)
    # The session's own extensions stay declared beside the call's.
    assert "io.modelcontextprotocol/ui" in call["params"]["_meta"][CLIENT_CAPABILITIES_KEY]["extensions"]
    assert seen[0].status == "working" and seen[-1].status == "completed"
    assert len({task.task_id for task in seen}) == 1
    assert seen[0].poll_interval == 100 and seen[0].ttl
    assert all(_opted_in(m) for m in _sent(client, "tasks/get"))
    assert client.get_task(seen[0].task_id).status == "completed"


def test_a_tool_that_only_runs_as_a_task_is_retried_opted_in(client: McpClient) -> None:
    seen: list[McpTask] = []
    result = client.call_tool("report", {}, on_task=seen.append)
    assert result.text == "The report is ready."
    # Refused with -32021 (the tasks extension required) first, then sent again opted in.
    first, second = _sent(client, "tools/call")[-2:]
    assert not _opted_in(first) and _opted_in(second)
    assert first["params"]["name"] == second["params"]["name"] == "report"
    assert seen[-1].status == "completed"


def test_a_task_that_needs_input_asks_through_the_elicitation_handler(client: McpClient) -> None:
    QUESTIONS.clear()
    seen: list[McpTask] = []
    result = client.call_tool("greet_later", {}, on_task=seen.append)
    assert result.text == "Hello, Ada Lovelace!"
    assert QUESTIONS == ["What is your name?"]
    assert "input_required" in [task.status for task in seen]
    # The answer goes back by the key the server gave its question (which the server scopes to the task).
    update = _sent(client, "tasks/update")[-1]["params"]
    assert update["taskId"] == seen[0].task_id
    assert list(update["inputResponses"].values()) == [
        {"action": "accept", "content": {"full_name": "Ada Lovelace"}}
    ]


def test_a_failing_task_gives_an_error_result(client: McpClient) -> None:
    result = client.call_tool("fail_later", {})
    assert result.is_error and "the job broke" in result.text


def test_cancel_sends_tasks_cancel_and_the_call_says_cancelled(client: McpClient) -> None:
    signal = AbortSignal()
    seen: list[McpTask] = []

    def on_task(task: McpTask) -> None:
        seen.append(task)
        if task.status == "working":
            threading.Timer(0.2, signal.abort).start()

    with pytest.raises(McpCancelledError, match="was cancelled"):
        client.call_tool("wait_forever", {}, signal=signal, on_task=on_task)
    assert _sent(client, "tasks/cancel")[-1]["params"]["taskId"] == seen[0].task_id
    assert seen[-1].status == "cancelled"
    assert client.get_task(seen[0].task_id).status == "cancelled"


def test_tasks_methods_name_their_task_in_mcp_name() -> None:
    message = {
        "method": "tasks/get",
        "params": {"taskId": "t-1", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    assert standard_headers(message)["Mcp-Name"] == "t-1"


def test_a_task_without_an_id_is_a_protocol_error_in_words() -> None:
    with pytest.raises(McpProtocolError, match="sent a task without a taskId or status"):
        task_from_wire({"status": "working", "resultType": "task"}, "'demo'")


def _reply(request_id: int, result: dict[str, Any]) -> Any:
    return json_reply({"jsonrpc": "2.0", "id": request_id, "result": result})


def test_a_cancel_that_fails_still_ends_the_call_as_cancelled(
    scripted_server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The exact error path: the server makes the call a task, then refuses its tasks/cancel.
    discover = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s"},
    }
    handle = {"resultType": "task", "taskId": "t-1", "status": "working", "pollIntervalMs": 50}
    refused = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "the task store is down"}}
    scripted_server.script(_reply(1, discover), _reply(2, handle), json_reply(refused))
    signal = AbortSignal()
    seen: list[McpTask] = []

    def on_task(task: McpTask) -> None:
        seen.append(task)
        signal.abort()  # Cancel as soon as the task is there

    with (
        McpClient.http(scripted_server.url + "/mcp") as client,
        caplog.at_level(logging.INFO, logger="yiem.mcp._ext_tasks"),
        pytest.raises(McpCancelledError, match=r"the task t-1 on MCP server .* was cancelled"),
    ):
        client.call_tool("slow", {}, signal=signal, on_task=on_task, as_task=True)
    assert [task.status for task in seen] == ["working"]
    methods = [r.body.get("method") for r in scripted_server.requests if isinstance(r.body, dict)]
    assert methods == ["server/discover", "tools/call", "tasks/cancel"]
    assert "cancelling task t-1" in caplog.text and "the task store is down" in caplog.text


def test_at_2026_07_28_tasks_are_declared_as_the_extension_not_the_2025_capability(client: McpClient) -> None:
    # The session's capabilities, stamped on every request, carry no 2025 `tasks` (with its
    # client-side task requests); a call opts in to the extension in its own request.
    client.call_tool("slow_add", {"a": 1, "b": 2}, as_task=True)
    for message in [m for _, way, m in client.protocol_log if way == "sent" and "params" in m]:
        declared = message["params"]["_meta"][CLIENT_CAPABILITIES_KEY]
        assert "tasks" not in declared, message
    assert _opted_in(_sent(client, "tools/call")[-1])
