"""The client the MCP conformance suite drives: yiem's public MCP API, one routine per scenario.

The suite runs `python tests/conformance/driver.py URL` with the scenario's name in
`MCP_CONFORMANCE_SCENARIO` and any inputs in `MCP_CONFORMANCE_CONTEXT` (JSON). `auth/*` scenarios
go to `tests.conformance.auth_flow.run_auth_scenario`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from yiem.mcp import (  # noqa: E402  (the repository root goes on the path first)
    ElicitationRequest,
    ElicitationResult,
    McpClient,
    Root,
    SamplingRequest,
    SamplingResult,
)

Context = dict[str, Any]


def accept_with_defaults(request: ElicitationRequest) -> ElicitationResult:
    """Accept the form as a person who changes nothing would: every field at its default."""
    properties = request.requested_schema.get("properties") or {}
    content = {name: field["default"] for name, field in properties.items() if "default" in field}
    if not content:
        content = {name: True for name, field in properties.items() if field.get("type") == "boolean"}
    return ElicitationResult(action="accept", content=content)


def sample(request: SamplingRequest) -> SamplingResult:
    """A fixed reply, as a model would give one."""
    return SamplingResult(content={"type": "text", "text": "conformance reply"}, model="conformance-model")


def connect(url: str) -> McpClient:
    """A client offering every feature, so each capability is declared."""
    return McpClient.http(
        url,
        roots=[Root(uri=f"file://{ROOT}", name="yiem")],
        sampling=sample,
        elicitation=accept_with_defaults,
    )


def list_only(client: McpClient, context: Context) -> None:
    client.list_tools()


def call_every_tool(client: McpClient, context: Context) -> None:
    for tool in client.list_tools():
        client.call_tool(tool.name, {})


def tools_call(client: McpClient, context: Context) -> None:
    client.list_tools()
    client.call_tool("add_numbers", {"a": 5, "b": 3})


def call_from_context(client: McpClient, context: Context) -> None:
    client.list_tools()
    for call in context.get("toolCalls", []):
        client.call_tool(call["name"], call.get("arguments") or {})


def request_state(client: McpClient, context: Context) -> None:
    client.list_tools()
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
    ):
        client.call_tool(name, {})


def standard_headers(client: McpClient, context: Context) -> None:
    call_every_tool(client, context)
    for resource in client.list_resources():
        client.read_resource(resource.uri)
    for prompt in client.list_prompts():
        client.get_prompt(prompt.name)


def echo_schema(client: McpClient, context: Context) -> None:
    """Send the rich tool's input schema back as the client holds it (nothing may be stripped)."""
    tools = {tool.name: tool for tool in client.list_tools()}
    client.call_tool("json_schema_echo", {"schema": tools["json_schema_2020_12_tool"].input_schema})


SCENARIOS: dict[str, Callable[[McpClient, Context], None]] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
    "request-metadata": list_only,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": call_from_context,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": echo_schema,
}


def main() -> None:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario.startswith("auth/"):
        from tests.conformance.auth_flow import run_auth_scenario  # the authorization engineer's module

        run_auth_scenario(scenario, url, context)
        return
    with connect(url) as client:
        SCENARIOS.get(scenario, list_only)(client, context)


if __name__ == "__main__":
    main()
