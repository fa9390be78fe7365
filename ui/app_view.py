"""An MCP App's view in the page: a sandboxed frame (mcp_apps/bridge.mjs), and the answers to what it asks.

The view's requests arrive as the component's state; each is answered here, on the page's own MCP
session, and the answers go back in the component's data. A tool call that is not read-only, a link
to open and a message for the chat each wait for the person.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from ui.state import TOOL_HISTORY, view_answers, view_notice, view_state
from yiem.explorer import CallRecord, ToolCallRun
from yiem.mcp import CallToolResult, McpClient, McpError, McpTool
from yiem.mcp.apps import AppView, McpAppError, allow_attribute, content_security_policy
from yiem.tool_registry import ToolRegistry

_BUNDLE = Path(__file__).resolve().parents[1] / "mcp_apps" / "bridge.js"
_CSS = """
.yiem-view iframe { width: 100%; border: 0; display: block; background: transparent; }
.yiem-view-border iframe { border: 1px solid rgba(128, 128, 128, 0.4); border-radius: 0.5rem; }
.yiem-view-note { font-size: 0.875rem; margin: 0.25rem 0 0; }
.yiem-view-note:empty { display: none; }
"""
MAX_HEIGHT = 800
INITIAL_HEIGHT = 360  # until the view reports its size
# A call a view makes waits this long for its answer before the view is told it timed out.
_VIEW_CALL_TIMEOUT_S = 60.0
_DOCTYPE = re.compile(r"^\s*<!doctype[^>]*>", re.IGNORECASE)
# Runs first in the view's document: tells the host what its policy stopped, so the page can say so.
_WATCH = (
    "<script>(function(){var tell=function(what){parent.postMessage({yiemHost:'blocked',what:what},'*')};"
    "document.addEventListener('securitypolicyviolation',function(e){"
    "tell((e.blockedURI||'inline code')+' ('+e.effectiveDirective+')')});"
    "if(window.ReportingObserver){new ReportingObserver(function(reports){reports.forEach(function(r){"
    "tell('the '+r.body.featureId+' permission')})},{types:['permissions-policy-violation'],buffered:true})"
    ".observe()}})();</script>"
)


def bridge_ready() -> bool:
    """Whether `make run`'s one-time setup bundled the frame's script (scripts/setup_mcp_apps.sh)."""
    return _BUNDLE.exists()


_component: Any = None


def _mount() -> Any:
    global _component
    if _component is None:
        _component = st.components.v2.component(
            "yiem_app_view", html="", css=_CSS, js=_BUNDLE.read_text(), isolate_styles=True
        )
    return _component


def srcdoc(view: AppView) -> str:
    """The view's document with its policy as the first thing in it (before any script of its own)."""
    meta = (
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(content_security_policy(view))}">'
    )
    head = meta + _WATCH
    document = view.html
    found = _DOCTYPE.match(document)
    if found:
        return document[: found.end()] + head + document[found.end() :]
    return head + document


@dataclass
class ViewHost:
    """What a view may reach through the page: its server's tools and resources, and the chat input."""

    server: str
    tool: Callable[[str], McpTool | None]
    call_tool: Callable[[str, dict[str, Any]], CallToolResult]
    read_resource: Callable[[str], list[Any]]
    put_message: Callable[[str], str] | None = None  # returns the words that say where the text went


def session_host(
    server: str, client: McpClient, registry: ToolRegistry, put_message: Callable[[str], str] | None = None
) -> ViewHost:
    """A view's host on the page's own session, for the Tools page and Chat alike.

    Its tools are looked up in the server's whole list (a tool meant only for its view is the view's
    to call), and each call is run and recorded as the Tools page's own: it lands in the History, and
    in the protocol log, which is the session's."""
    history: list[CallRecord] = TOOL_HISTORY.setdefault(list)

    def call_tool(name: str, arguments: dict[str, Any]) -> CallToolResult:
        run = ToolCallRun(client, server, name, arguments, timeout=_VIEW_CALL_TIMEOUT_S).start()
        run.wait(_VIEW_CALL_TIMEOUT_S + 5)
        record = run.record
        history.append(record)
        if record.result is None:
            raise McpAppError(record.error or f"{name} did not answer.")
        return record.result

    return ViewHost(
        server=server,
        tool=lambda name: registry.mcp_tool(server, name),
        call_tool=call_tool,
        read_resource=client.read_resource,
        put_message=put_message,
    )


def draw_app_view(
    view: AppView,
    *,
    key: str,
    host: ViewHost,
    tool: McpTool,
    arguments: dict[str, Any] | None,
    result: CallToolResult | None,
) -> None:
    """The view of one tool call, with the tool's input and result delivered as the extension says.

    With no `arguments` the call is not made yet (the view is loaded ahead): what the view asks waits."""
    if not bridge_ready():
        st.warning("Views need the one-time set-up that `make run` does (scripts/setup_mcp_apps.sh).")
        return
    answers: dict[str, dict[str, Any]] = view_answers(key).setdefault(dict)
    state = view_state(key).get() or {}
    requests = [r for r in (state.get("requests") or []) if isinstance(r, dict) and "id" in r]
    # A view loaded before its call is answered nothing until the person calls the tool.
    asks = [request for request in requests if request["id"] not in answers] if arguments is not None else []
    for request in asks:
        _answer(request, answers, host, key)
    theme = getattr(getattr(st.context, "theme", None), "type", None) or "light"
    _mount()(
        key=key,
        data={
            "id": key,
            "html": srcdoc(view),
            "csp": content_security_policy(view),
            "allow": allow_attribute(view.permissions),
            "title": f"The view of {tool.display_name}, from {host.server}",
            "theme": theme,
            "hostVersion": "1",
            "maxHeight": MAX_HEIGHT,
            "initialHeight": INITIAL_HEIGHT,
            "border": view.prefers_border is not False,
            "toolInput": arguments,
            "toolResult": result.to_wire() if result is not None else None,
            "toolInfo": {"tool": tool.to_wire()},
            "answers": answers,
        },
        on_requests_change=lambda: None,
        on_initialized_change=lambda: None,
        on_flooded_change=lambda: None,
        on_blocked_change=lambda: None,
    )
    _draw_notes(state, host)
    for request in asks:
        if request["id"] not in answers:
            _ask_person(request, answers, host, key)


def _answer(request: dict[str, Any], answers: dict[str, dict[str, Any]], host: ViewHost, key: str) -> None:
    method, params = request.get("method"), request.get("params") or {}
    try:
        if method == "resources/read":
            contents = host.read_resource(str(params.get("uri", "")))
            answers[request["id"]] = {"result": {"contents": [item.to_wire() for item in contents]}}
        elif method == "tools/call":
            name = str(params.get("name", ""))
            tool = host.tool(name)
            if tool is None:
                answers[request["id"]] = {"error": f"{host.server} offers no tool named {name}."}
            elif (tool.annotations or {}).get("readOnlyHint") is True:
                answers[request["id"]] = {
                    "result": host.call_tool(name, params.get("arguments") or {}).to_wire()
                }
        elif method == "notifications/message":
            answers[request["id"]] = {"result": {}}
        elif method not in ("ui/message", "ui/open-link"):
            answers[request["id"]] = {"error": f"yiem does not answer {method} from a view."}
    except McpError as error:
        answers[request["id"]] = {"error": str(error)}


def _ask_person(
    request: dict[str, Any], answers: dict[str, dict[str, Any]], host: ViewHost, key: str
) -> None:
    """The requests that wait for a yes or a no: a tool that may change things, a link, a message."""
    method, params, rid = request.get("method"), request.get("params") or {}, request["id"]

    def decide(answer: dict[str, Any]) -> None:
        answers[rid] = answer

    with st.container(border=True):
        if method == "tools/call":
            name = str(params.get("name", ""))
            st.markdown(f"The view wants to call **{name}**, which may change things, with:")
            st.code(json.dumps(params.get("arguments") or {}, indent=2), language="json")

            def allow() -> None:
                try:
                    decide({"result": host.call_tool(name, params.get("arguments") or {}).to_wire()})
                except McpError as error:
                    decide({"error": str(error)})

            cols = st.columns(2)
            cols[0].button("Allow the call", key=f"{rid}:allow", on_click=allow, type="primary")
            cols[1].button(
                "Refuse",
                key=f"{rid}:refuse",
                on_click=decide,
                args=({"error": "The person refused the call."},),
            )
        elif method == "ui/open-link":
            url = str(params.get("url", ""))
            safe = url.startswith(("https://", "http://"))
            st.markdown(f"The view wants to open a link: `{url}`")
            cols = st.columns(2)
            if safe:
                cols[0].link_button("Open the link", url, on_click=decide, args=({"result": {}},))
            else:
                cols[0].caption("Only web links (http or https) can be opened.")
            cols[1].button(
                "Don't open", key=f"{rid}:keep", on_click=decide, args=({"result": {"isError": True}},)
            )
        elif method == "ui/message":
            text = _message_text(params)
            st.markdown("The view suggests a message for the chat:")
            st.markdown(f"> {text}")
            if host.put_message is not None:

                def put() -> None:
                    words = host.put_message(text) if host.put_message else ""
                    view_notice(key).set(words)
                    decide({"result": {}})

                st.button("Put it in the chat input", key=f"{rid}:put", on_click=put)
            st.button("Dismiss", key=f"{rid}:dismiss", on_click=decide, args=({"result": {"isError": True}},))


def _message_text(params: dict[str, Any]) -> str:
    content = params.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [
        block.get("text", "") for block in blocks if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n".join(text for text in texts if text)


def _draw_notes(state: dict[str, Any], host: ViewHost) -> None:
    for what in dict.fromkeys(state.get("blocked") or []):
        if what.startswith("eval "):
            # Libraries inside views probe for eval and carry on without it: worth a line, not an alarm.
            st.caption("The view tried to run code built from text (eval); its frame does not allow that.")
            continue
        if what.endswith(" permission"):
            words = f"The view asked for {what}, which its resource does not declare, and was refused."
        else:
            words = f"The view tried to reach {what}, which its resource does not declare, and was stopped."
        st.warning(words, icon=":material/block:")
    if state.get("flooded"):
        st.error(f"The view from {host.server} sent too many messages; yiem stopped listening to it.")
