"""Background tool calls, their history and checks, against the real server-everything (stdio and HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.explorer import (
    CallRecord,
    CallStatus,
    ToolCallRun,
    ToolForm,
    annotation_badges,
    chat_tool_name,
    check_structured_content,
    describe_error,
    duration_words,
    history_json,
    ping_ms,
    progress_fraction,
    progress_words,
    prompt_input_schema,
)
from yiem.mcp import CallToolResult, McpClient, McpConnectionError, McpPrompt, PromptArgument
from yiem.tool_registry import ToolRegistry


@pytest.fixture(scope="module")
def everything(everything_stdio: StdioServer) -> Iterator[McpClient]:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        yield client


def test_a_call_records_the_raw_exchange_and_its_duration(everything: McpClient) -> None:
    run = ToolCallRun(everything, "everything", "get-sum", {"a": 2, "b": 5}).start()
    assert run.wait(30)
    record = run.record
    assert record.status == CallStatus.DONE and record.error is None
    assert record.request == {
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": "get-sum", "arguments": {"a": 2, "b": 5}},
    }
    assert record.response is not None and record.response["content"][0]["text"] == "The sum of 2 and 5 is 7."
    assert record.result is not None and record.result.text == "The sum of 2 and 5 is 7."
    assert record.duration_ms is not None and record.duration_ms > 0


def test_a_tool_that_requires_a_task_runs_as_one_with_its_status(everything: McpClient) -> None:
    """Issue 16: simulate-research-query (taskSupport "required") failed with -32601 on the Tools page."""
    everything.list_tools()
    run = ToolCallRun(everything, "everything", "simulate-research-query", {"topic": "tides"}).start()
    seen: set[str] = set()
    while not run.wait(0.05):
        if run.progress is not None and run.progress.message:
            seen.add(run.progress.message)
    record = run.record
    assert record.status is CallStatus.DONE, record.error
    assert record.result is not None and "Research Report: tides" in record.result.text
    assert any("Gathering sources" in message for message in seen)


def test_progress_arrives_while_the_call_runs_over_http(everything_http_url: str) -> None:
    """SP-010 over Streamable HTTP: progress notifications reach the running call before its result."""
    with McpClient.http(everything_http_url) as client:
        seen: list[float] = []
        run = ToolCallRun(
            client, "everything", "trigger-long-running-operation", {"duration": 1.5, "steps": 3}
        ).start()
        while not run.wait(0.05):
            if run.progress is not None and run.progress.progress not in seen:
                seen.append(run.progress.progress)
        assert run.record.status == CallStatus.DONE, run.record.error
        assert run.progress is not None and run.progress.total == 3
        assert progress_fraction(run.progress) == 1.0
        assert progress_words(run.progress).startswith("3 of 3")
        assert seen and seen == sorted(seen)
        assert (
            client.session_id and "Long running operation completed" in (run.record.result or _empty()).text
        )


def _empty() -> CallToolResult:
    return CallToolResult()


def test_cancel_stops_the_call_and_the_server_stays_usable(everything: McpClient) -> None:
    run = ToolCallRun(
        everything, "everything", "trigger-long-running-operation", {"duration": 30, "steps": 30}
    )
    run.start()
    while run.progress is None:
        assert not run.wait(0.05), "the call ended before any progress"
    run.cancel()
    assert run.wait(10)
    assert run.record.status == CallStatus.CANCELLED
    assert run.record.error == "The call was cancelled." and run.record.response is None
    assert everything.call_tool("echo", {"message": "still here"}).text == "Echo: still here"


def test_a_timeout_fails_the_call_in_words(everything: McpClient) -> None:
    run = ToolCallRun(
        everything, "everything", "trigger-long-running-operation", {"duration": 5, "steps": 1}, 0.5
    )
    assert run.start().wait(10)
    assert run.record.status == CallStatus.FAILED
    assert "did not answer 'tools/call' within 0.5 s" in (run.record.error or "")


def test_an_unknown_tool_is_an_error_result_or_error_in_words(everything: McpClient) -> None:
    run = ToolCallRun(everything, "everything", "no-such-tool", {}).start()
    assert run.wait(30)
    record = run.record
    if record.status == CallStatus.DONE:
        assert record.result is not None and record.result.is_error
        assert "no-such-tool" in record.result.text
    else:
        assert record.status == CallStatus.FAILED and "no-such-tool" in (record.error or "")


def test_structured_content_is_checked_against_the_output_schema(everything: McpClient) -> None:
    tool = next(tool for tool in everything.list_tools() if tool.name == "get-structured-content")
    result = everything.call_tool(tool.name, {"location": "Chicago"})
    assert tool.output_schema is not None
    assert check_structured_content(tool.output_schema, result) is None
    wrong = result.model_copy(update={"structured_content": {"temperature": "warm"}})
    problem = check_structured_content(tool.output_schema, wrong)
    assert problem is not None
    assert "'conditions' is a required property" in problem
    assert "temperature: 'warm' is not of type 'number'" in problem
    missing = result.model_copy(update={"structured_content": None})
    assert check_structured_content(tool.output_schema, missing) == (
        "The tool declares an output schema but returned no structured content."
    )
    assert check_structured_content(None, wrong) is None


def test_history_exports_as_json_that_reads_back(everything: McpClient) -> None:
    run = ToolCallRun(everything, "everything", "echo", {"message": "keep me"}).start()
    assert run.wait(30)
    exported = json.loads(history_json([run.record]))
    assert exported[0]["arguments"] == {"message": "keep me"}
    assert exported[0]["status"] == "done" and exported[0]["duration_ms"] > 0
    again = CallRecord.model_validate(exported[0])
    assert again == run.record


def test_ping_measures_a_round_trip(everything: McpClient) -> None:
    assert ping_ms(everything) > 0


def test_a_dead_server_is_described_with_its_stderr() -> None:
    script = "echo 'config file /etc/x.toml: no such file' >&2; exit 2"
    with pytest.raises(McpConnectionError) as caught:
        McpClient.stdio("sh", ["-c", script])
    words = describe_error(caught.value)
    assert "config file /etc/x.toml: no such file" in words
    assert words.count("config file /etc/x.toml: no such file") == 1, "the tail is quoted once"


def test_describe_error_adds_a_stderr_tail_the_message_lacks() -> None:
    error = McpConnectionError("MCP server 'x' closed its output", data={"stderr": "panic: out of memory"})
    assert describe_error(error).endswith("The server's last words (stderr):\npanic: out of memory")
    assert describe_error(ValueError("plain")) == "plain"


def test_badges_show_every_hint_the_tool_states() -> None:
    """Issue 16: destructive and idempotent were hidden on read-only tools; now each stated hint shows."""
    assert annotation_badges(None) == []
    assert annotation_badges({"readOnlyHint": True, "destructiveHint": True, "openWorldHint": False}) == [
        "read-only",
        "destructive",
        "closed-world",
    ]
    assert annotation_badges(
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
    ) == ["changes things", "not destructive", "idempotent", "open-world"]
    assert annotation_badges({"idempotentHint": False, "title": "x"}) == ["not idempotent"]


def test_chat_tool_name_follows_the_registry_prefix_on_a_clash(everything: McpClient) -> None:
    registry = ToolRegistry()
    registry.add_mcp_server("first", everything)
    registry.add_mcp_server("second", everything)
    try:
        assert chat_tool_name(registry, "first", "get-sum") == "get-sum"
        assert chat_tool_name(registry, "second", "get-sum") == "second__get-sum"
        assert chat_tool_name(registry, "third", "get-sum") is None
    finally:
        registry.remove_mcp_server("first")
        registry.remove_mcp_server("second")


def test_prompt_arguments_become_a_form() -> None:
    prompt = McpPrompt(
        name="p",
        arguments=[
            PromptArgument(name="city", description="City", required=True),
            PromptArgument(name="state"),
        ],
    )
    form = ToolForm(prompt_input_schema(prompt))
    assert [(field.name, field.required, field.description) for field in form.fields] == [
        ("city", True, "City"),
        ("state", False, ""),
    ]
    state = form.initial_state()
    state.values["city"] = "Bern"
    assert form.arguments(state) == {"city": "Bern"}


def test_durations_read_in_ms_then_seconds() -> None:
    assert duration_words(None) == "…"
    assert duration_words(17.4) == "17 ms"
    assert duration_words(6665) == "6.67 s"
    assert duration_words(61_000) == "1 min 1 s"


def test_history_with_a_lone_surrogate_exports_it_replaced() -> None:
    """Issue 12: JSON's "\\ud800" in a call's arguments or answer made the export raise."""
    record = CallRecord(server="s", tool="t", arguments={"a": "odd \ud800"}, response={"text": "\ud800"})
    exported = json.loads(history_json([record]).encode())
    assert (exported[0]["arguments"], exported[0]["response"]) == ({"a": "odd \ufffd"}, {"text": "\ufffd"})
