"""The client side of MCP 2025-11-25 against the real server-everything: capabilities, roots,
elicitation (form and URL), sampling (also as client-side tasks), server-side tasks, completion,
resource templates, subscriptions and the protocol log."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.mcp import (
    ElicitationRequest,
    ElicitationResult,
    McpCancelledError,
    McpClient,
    McpNotification,
    McpProgress,
    Root,
    SamplingRequest,
    SamplingResult,
)
from yiem.mcp.apps import EXTENSION_ID, UI_CAPABILITY
from yiem.types import AbortSignal

CONDITIONAL_TOOLS = {
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
    "trigger-sampling-request-async",
    "trigger-elicitation-request-async",
}


class Person:
    """Answers the server's questions as a scripted person would, recording what was asked."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content if content is not None else {"name": "Ada", "interpretation": "snake"}
        self.asked: list[ElicitationRequest] = []
        self.sampled: list[SamplingRequest] = []

    def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        self.asked.append(request)
        if self.action != "accept" or request.mode == "url":
            return ElicitationResult(action=self.action)  # type: ignore[arg-type]
        return ElicitationResult(action="accept", content=self.content)

    def sample(self, request: SamplingRequest) -> SamplingResult:
        self.sampled.append(request)
        return SamplingResult(content={"type": "text", "text": "Paris, surely."}, model="scripted-model")


@pytest.fixture
def person() -> Person:
    return Person()


@pytest.fixture(params=["stdio", "http"])
def full_client(
    request: pytest.FixtureRequest, everything_stdio: StdioServer, person: Person
) -> Iterator[McpClient]:
    """server-everything with roots, sampling and elicitation declared, once per transport."""
    options: dict[str, Any] = {
        "roots": [Root(uri="file:///srv/reports", name="Reports")],
        "sampling": person.sample,
        "elicitation": person.elicit,
    }
    if request.param == "stdio":
        client = McpClient.stdio(everything_stdio.command, everything_stdio.args, **options)
    else:
        client = McpClient.http(request.getfixturevalue("everything_http_url"), **options)
    with client:
        yield client


def _asking(server: StdioServer, person: Person) -> McpClient:
    """server-everything over stdio with only elicitation declared."""
    return McpClient.stdio(server.command, server.args, elicitation=person.elicit)


def _initialize_params(client: McpClient) -> dict[str, Any]:
    sent = [m for _, d, m in client.protocol_log if d == "sent" and m.get("method") == "initialize"]
    return dict(sent[0]["params"])


def test_no_handlers_declares_nothing_and_hides_the_conditional_tools(everything_stdio: StdioServer) -> None:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        names = {tool.name for tool in client.list_tools()}
        # Only the MCP Apps extension, which the app can always draw, is declared without a handler.
        assert _initialize_params(client)["capabilities"] == {"extensions": {EXTENSION_ID: UI_CAPABILITY}}
    # The task tool is listed either way; it answered -32601 before tasks were supported.
    assert len(names) == 13 and not names & CONDITIONAL_TOOLS and "simulate-research-query" in names


def test_declared_capabilities_list_all_19_tools(full_client: McpClient) -> None:
    capabilities = _initialize_params(full_client)["capabilities"]
    assert capabilities["roots"] == {"listChanged": True}
    assert capabilities["elicitation"] == {"form": {}, "url": {}}
    assert "sampling" in capabilities
    assert capabilities["tasks"]["requests"] == {
        "sampling": {"createMessage": {}},
        "elicitation": {"create": {}},
    }
    tools = {tool.name: tool for tool in full_client.list_tools()}
    assert len(tools) == 19 and set(tools) >= CONDITIONAL_TOOLS
    assert tools["simulate-research-query"].task_support == "required"
    assert tools["echo"].task_support == "forbidden"


def test_only_elicitation_declares_only_elicitation(everything_stdio: StdioServer, person: Person) -> None:
    with _asking(everything_stdio, person) as client:
        capabilities = _initialize_params(client)["capabilities"]
        names = {tool.name for tool in client.list_tools()}
    assert set(capabilities) == {"elicitation", "tasks", "extensions"}
    assert "get-roots-list" not in names and "trigger-sampling-request" not in names
    assert "trigger-elicitation-request" in names


def test_roots_are_listed_and_a_change_is_announced(full_client: McpClient) -> None:
    first = full_client.call_tool("get-roots-list").text
    assert "Reports" in first and "file:///srv/reports" in first
    full_client.set_roots([Root(uri="file:///srv/archive", name="Archive")])
    sent = [m.get("method") for _, d, m in full_client.protocol_log if d == "sent"]
    assert "notifications/roots/list_changed" in sent
    # The server asks roots/list again on the notification; its tool shows what it got.
    deadline = threading.Event()
    for _ in range(50):
        text = full_client.call_tool("get-roots-list").text
        if "Archive" in text:
            break
        deadline.wait(0.1)
    assert "file:///srv/archive" in text and "Reports" not in text


def test_elicitation_form_accepted_reaches_the_tool(full_client: McpClient, person: Person) -> None:
    result = full_client.call_tool("trigger-elicitation-request")
    (asked,) = person.asked
    assert asked.mode == "form" and "name" in asked.requested_schema["properties"]
    assert "Ada" in result.text and not result.is_error


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elicitation_declined_or_cancelled(everything_stdio: StdioServer, action: str) -> None:
    person = Person(action)
    with _asking(everything_stdio, person) as client:
        client.list_tools()
        text = client.call_tool("trigger-elicitation-request").text
    assert f'"action": "{action}"' in text and "Ada" not in text


def test_elicitation_url_mode(full_client: McpClient, person: Person) -> None:
    result = full_client.call_tool(
        "trigger-url-elicitation", {"url": "https://example.com/consent", "message": "Sign the form"}
    )
    (asked,) = person.asked
    assert asked.mode == "url" and asked.url == "https://example.com/consent" and asked.elicitation_id
    assert "completed the URL elicitation" in result.text


def test_sampling_request_answered_by_the_handler(full_client: McpClient, person: Person) -> None:
    result = full_client.call_tool("trigger-sampling-request", {"prompt": "Capital of France?"})
    (sampled,) = person.sampled
    assert "Capital of France?" in str(sampled.messages) and sampled.max_tokens > 0
    assert "Paris, surely." in result.text and "scripted-model" in result.text


def test_sampling_and_elicitation_as_client_side_tasks(full_client: McpClient, person: Person) -> None:
    sampled = full_client.call_tool("trigger-sampling-request-async", {"prompt": "Capital?"}).text
    assert "[COMPLETED]" in sampled and "Paris, surely." in sampled
    asked = full_client.call_tool("trigger-elicitation-request-async").text
    assert "[COMPLETED]" in asked and "Ada" in asked
    assert len(person.sampled) == 1 and len(person.asked) == 1


def test_required_task_tool_runs_as_a_task_with_status_and_a_question(
    everything_stdio: StdioServer, person: Person
) -> None:
    progress: list[McpProgress] = []
    with _asking(everything_stdio, person) as client:
        client.list_tools()
        result = client.call_tool(
            "simulate-research-query", {"topic": "python", "ambiguous": True}, on_progress=progress.append
        )
        sent = [m for _, d, m in client.protocol_log if d == "sent" and m.get("method") == "tools/call"]
    assert "task" in sent[0]["params"]
    assert "Research Report: python (snake)" in result.text
    messages = [p.message or "" for p in progress]
    assert any("Gathering sources" in m for m in messages) and any("kept 300 s" in m for m in messages)
    assert "interpretation" in person.asked[0].requested_schema["properties"]


def test_task_status_and_cancel(full_client: McpClient) -> None:
    task = full_client.start_tool_task("simulate-research-query", {"topic": "tides"}, ttl_ms=60_000)
    assert task.status == "working" and task.task_id
    assert full_client.get_task(task.task_id).status in ("working", "completed")
    cancelled = full_client.cancel_task(task.task_id)
    assert cancelled.status == "cancelled"
    assert full_client.get_task(task.task_id).status == "cancelled"


def test_cancelling_a_task_call_sends_tasks_cancel(everything_stdio: StdioServer) -> None:
    signal = AbortSignal()
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        client.list_tools()

        def abort_on_first(progress: McpProgress) -> None:
            signal.abort("the person pressed Cancel")

        with pytest.raises(McpCancelledError):
            client.call_tool(
                "simulate-research-query", {"topic": "tides"}, on_progress=abort_on_first, signal=signal
            )
        sent = [m.get("method") for _, d, m in client.protocol_log if d == "sent"]
    assert "tasks/cancel" in sent


def test_completion_for_prompt_and_template_arguments(full_client: McpClient) -> None:
    prompt = {"type": "ref/prompt", "name": "completable-prompt"}
    assert full_client.complete(prompt, "department", "S").values == ["Sales", "Support"]
    names = full_client.complete(prompt, "name", "", context={"department": "Sales"}).values
    assert names == ["David", "Eve", "Frank"]
    template = {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}
    assert full_client.complete(template, "resourceId", "7").values == ["7"]


def test_resource_templates_are_listed_and_read(full_client: McpClient) -> None:
    templates = {t.uri_template: t for t in full_client.list_resource_templates()}
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    (contents,) = full_client.read_resource("demo://resource/dynamic/text/3")
    assert contents.text and contents.text.startswith("Resource 3:")


def test_subscription_brings_updates(everything_stdio: StdioServer) -> None:
    updated = threading.Event()
    heard: list[McpNotification] = []

    def sink(notification: McpNotification) -> None:
        heard.append(notification)
        if notification.method == "notifications/resources/updated":
            updated.set()

    with McpClient.stdio(everything_stdio.command, everything_stdio.args, event_sink=sink) as client:
        uri = client.list_resources()[0].uri
        client.subscribe(uri)
        client.call_tool("toggle-subscriber-updates")
        assert updated.wait(15), [n.method for n in heard]
        client.unsubscribe(uri)
    assert any(n.params.get("uri") == uri for n in heard if n.method == "notifications/resources/updated")


def test_protocol_log_holds_both_directions_in_time_order(full_client: McpClient) -> None:
    full_client.call_tool("echo", {"message": "logged"})
    log = full_client.protocol_log
    times = [at for at, _, _ in log]
    assert times == sorted(times)
    replies = [m for _, d, m in log if d == "received" and "logged" in str(m.get("result"))]
    requests = [m for _, d, m in log if d == "sent" and m.get("method") == "tools/call"]
    assert replies and requests and replies[0]["id"] == requests[-1]["id"]


# Arguments for each of server-everything's 19 tools; nothing reaches past this machine (the
# gzip tool is given its data inline rather than its default https URL).
EVERY_TOOL_ARGUMENTS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hi"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-env": {},
    "get-resource-links": {"count": 2},
    "get-resource-reference": {"resourceType": "Text", "resourceId": 1},
    "get-structured-content": {"location": "Chicago"},
    "get-sum": {"a": 2, "b": 3},
    "get-tiny-image": {},
    "gzip-file-as-resource": {"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ="},
    "toggle-simulated-logging": {},
    "toggle-subscriber-updates": {},
    "trigger-long-running-operation": {"duration": 1, "steps": 1},
    "get-roots-list": {},
    "trigger-elicitation-request": {},
    "trigger-url-elicitation": {"url": "https://example.invalid/consent"},
    "trigger-sampling-request": {"prompt": "Capital of France?", "maxTokens": 20},
    "simulate-research-query": {"topic": "tides"},
    "trigger-sampling-request-async": {"prompt": "Capital of France?", "maxTokens": 20},
    "trigger-elicitation-request-async": {},
}


def test_every_one_of_the_19_tools_answers(full_client: McpClient, person: Person) -> None:
    listed = {tool.name for tool in full_client.list_tools()}
    assert listed == set(EVERY_TOOL_ARGUMENTS)
    for name, arguments in EVERY_TOOL_ARGUMENTS.items():
        result = full_client.call_tool(name, arguments, timeout=60)
        assert not result.is_error, (name, result)
        assert result.content or result.structured_content is not None, name
    assert person.asked and person.sampled  # the questions reached the person and the model
