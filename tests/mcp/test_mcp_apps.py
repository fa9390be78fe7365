"""MCP Apps, the host's protocol side: finding a tool's view, reading it, and its policy, on real servers.

The example servers are the official ones from npm (server-basic-vanillajs, server-budget-allocator,
server-cohort-heatmap); tests/mcp_servers/hostile_view.py serves views that are wrong on purpose.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fixtures.mcp import StdioServer
from tests.fixtures.mcp_apps import hostile_view_stdio, panel_view_stdio
from yiem.mcp import McpClient, McpTool, ResourceContents
from yiem.mcp.apps import (
    EXTENSION_ID,
    VIEW_MIME_TYPE,
    AppView,
    McpAppError,
    ViewCache,
    ViewCsp,
    ViewPermissions,
    allow_attribute,
    content_security_policy,
    csp_words,
    permission_words,
    read_view,
    tool_view_uri,
    visible_to_model,
)


def _client(server: StdioServer) -> McpClient:
    return McpClient.stdio(server.command, list(server.args), env=server.env or None)


@pytest.mark.parametrize("fixture", ["basic_view_stdio", "budget_view_stdio", "cohort_view_stdio"])
def test_each_example_tool_names_its_view_and_the_view_reads_as_html(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    server: StdioServer = request.getfixturevalue(fixture)
    with _client(server) as client:
        tools = [tool for tool in client.list_tools() if tool_view_uri(tool)]
        assert tools, "the example offers a tool with a view"
        uri = tool_view_uri(tools[0])
        assert uri is not None and uri.startswith("ui://")
        view = read_view(client, uri, "example")
    assert view.uri == uri
    assert "<html" in view.html.lower() and len(view.html) > 10_000  # the view's scripts are inlined


def test_the_client_declares_the_extension_so_servers_know_views_are_drawn() -> None:
    with _client(hostile_view_stdio()) as client:
        capabilities = client.features.capabilities()
    assert capabilities["extensions"][EXTENSION_ID] == {"mimeTypes": [VIEW_MIME_TYPE]}


def test_a_view_served_as_plain_text_is_refused_in_words() -> None:
    with _client(hostile_view_stdio("plain")) as client, pytest.raises(McpAppError) as caught:
        read_view(client, "ui://hostile/probe.html", "hostile")
    assert "is text/plain, not a view" in str(caught.value)


def test_a_missing_view_is_refused_in_words_naming_the_server_and_the_uri() -> None:
    with _client(hostile_view_stdio("missing")) as client, pytest.raises(McpAppError) as caught:
        read_view(client, "ui://hostile/probe.html", "hostile")
    assert str(caught.value).startswith("hostile could not give the view ui://hostile/probe.html")


class _Reader:
    """Answers `resources/read` with one item, to check the resource's declared `_meta.ui`."""

    def __init__(self, ui: dict[str, Any], mime: str = VIEW_MIME_TYPE) -> None:
        self.item = ResourceContents.model_validate(
            {"uri": "ui://x/v.html", "mimeType": mime, "text": "<p>hi</p>", "_meta": {"ui": ui}}
        )
        self.reads = 0

    def read_resource(self, uri: str) -> list[ResourceContents]:
        self.reads += 1
        return [self.item]


def test_the_policy_allows_exactly_the_declared_origins_and_nothing_by_default() -> None:
    bare = read_view(_Reader({}), "ui://x/v.html", "s")
    policy = content_security_policy(bare)
    assert "default-src 'none'" in policy
    assert "connect-src 'none'" in policy and "frame-src 'none'" in policy and "base-uri 'none'" in policy
    declared = read_view(
        _Reader(
            {
                "csp": {
                    "connectDomains": ["https://api.example.com"],
                    "resourceDomains": ["https://*.cdn.example"],
                }
            }
        ),
        "ui://x/v.html",
        "s",
    )
    policy = content_security_policy(declared)
    assert "connect-src https://api.example.com" in policy
    assert "script-src 'unsafe-inline' https://*.cdn.example" in policy
    assert csp_words(declared)[0] == "It may connect to https://api.example.com."


@pytest.mark.parametrize(
    "origin",
    [
        "*",
        "https://a.example; script-src *",
        "'unsafe-eval'",
        "data:",
        "https://a.example/path",
        "javascript:x",
    ],
)
def test_an_origin_that_could_widen_the_policy_refuses_the_view(origin: str) -> None:
    with pytest.raises(McpAppError) as caught:
        read_view(_Reader({"csp": {"connectDomains": [origin]}}), "ui://x/v.html", "s")
    assert "only an origin such as https://api.example.com is accepted" in str(caught.value)


def test_plain_http_is_refused_but_this_computers_own_origins_are_allowed() -> None:
    with pytest.raises(McpAppError, match="over plain http"):
        read_view(_Reader({"csp": {"connectDomains": ["http://api.example.com"]}}), "ui://x/v.html", "s")
    view = read_view(_Reader({"csp": {"connectDomains": ["http://localhost:3001"]}}), "ui://x/v.html", "s")
    assert view.csp.connect_domains == ["http://localhost:3001"]


def test_permissions_become_the_frames_allow_attribute_and_words() -> None:
    view = read_view(_Reader({"permissions": {"camera": {}, "clipboardWrite": {}}}), "ui://x/v.html", "s")
    assert allow_attribute(view.permissions) == "camera; clipboard-write"
    assert permission_words(view) == ["It may use the camera.", "It may use writing to the clipboard."]
    assert allow_attribute(ViewPermissions()) == ""


def test_tool_meta_in_both_spellings_and_app_only_tools() -> None:
    nested = McpTool.model_validate({"name": "a", "_meta": {"ui": {"resourceUri": "ui://a/v"}}})
    flat = McpTool.model_validate({"name": "b", "_meta": {"ui/resourceUri": "ui://b/v"}})
    app_only = McpTool.model_validate(
        {"name": "c", "_meta": {"ui": {"resourceUri": "ui://c/v", "visibility": ["app"]}}}
    )
    not_ui = McpTool.model_validate({"name": "d", "_meta": {"ui": {"resourceUri": "https://evil.example/"}}})
    assert [tool_view_uri(t) for t in (nested, flat, app_only, not_ui)] == [
        "ui://a/v",
        "ui://b/v",
        "ui://c/v",
        None,
    ]
    assert visible_to_model(nested) and not visible_to_model(app_only)


def test_the_cache_reads_a_view_once_per_server_and_forgets_a_server() -> None:
    reader, cache = _Reader({}), ViewCache()
    first = cache.load(reader, "s", "ui://x/v.html")
    assert cache.load(reader, "s", "ui://x/v.html") is first and reader.reads == 1
    cache.forget("s")
    cache.load(reader, "s", "ui://x/v.html")
    assert reader.reads == 2


def test_a_view_model_keeps_what_it_declared() -> None:
    view = AppView(uri="ui://x", html="<p/>", csp=ViewCsp(frame_domains=["https://www.youtube.com"]))
    assert "frame-src https://www.youtube.com" in content_security_policy(view)


def test_a_chat_tool_with_a_view_keeps_the_view_and_the_raw_result_in_its_details(
    basic_view_stdio: StdioServer,
) -> None:
    from yiem.tool_registry import ToolRegistry

    registry = ToolRegistry()
    client = _client(basic_view_stdio).connect()
    try:
        registry.add_mcp_server("basic", client)
        tool = registry.tools[registry.chat_names("basic")["get-time"]]
        output = tool.execute("call-1", {})
    finally:
        client.close()
    details = output.details
    assert details["view"]["uri"] == "ui://get-time/mcp-app.html"
    assert details["view"]["result"]["content"][0]["text"] == output.content[0].text


def test_a_tool_meant_only_for_its_view_is_not_offered_to_the_model() -> None:
    from yiem.tool_registry import ToolRegistry

    registry = ToolRegistry()
    client = _client(hostile_view_stdio()).connect()
    try:
        assert {tool.name for tool in client.list_tools()} == {"probe", "view-only-refresh"}
        registry.add_mcp_server("hostile", client)
        assert list(registry.chat_names("hostile")) == ["probe"]
    finally:
        client.close()


def test_a_tool_meant_only_for_its_view_is_still_found_for_the_view() -> None:
    from yiem.tool_registry import ToolRegistry

    registry = ToolRegistry()
    with _client(panel_view_stdio()) as client:
        registry.add_mcp_server("panel", client)
        assert "panel-refresh" not in registry.chat_names("panel")
        found = registry.mcp_tool("panel", "panel-refresh")
        assert found is not None and tool_view_uri(found) == "ui://panel/view.html"
        assert registry.mcp_tool("panel", "no-such-tool") is None
        assert registry.mcp_tool("elsewhere", "panel-refresh") is None


def test_a_servers_views_are_read_again_once_its_tools_change_or_it_reconnects() -> None:
    from yiem.tool_registry import ToolRegistry

    registry = ToolRegistry()
    uri = "ui://panel/view.html"
    with _client(panel_view_stdio()) as client:
        registry.add_mcp_server("panel", client)
        first = registry.views.load(client, "panel", uri)
        assert registry.views.load(client, "panel", uri) is first  # kept while the tools stand
        client.call_tool("change_tools")  # the server adds a tool and says its list changed
        deadline = time.monotonic() + 10
        while registry.views.get("panel", uri) is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert registry.views.get("panel", uri) is None
        second = registry.views.load(client, "panel", uri)
        assert second is not first
        registry.remove_mcp_server("panel")
        assert registry.views.get("panel", uri) is None
    with _client(panel_view_stdio()) as again:
        registry.views.load(again, "panel", uri)  # read before the server's tools are listed
        registry.add_mcp_server("panel", again)  # connected anew: its views may have changed
        assert registry.views.get("panel", uri) is None
