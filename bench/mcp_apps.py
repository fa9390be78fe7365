"""Benchmarks of MCP Apps views: a view's first draw, and the Chat page with many tool calls that have one.

Run: `.venv/bin/python bench/mcp_apps.py [--draws 15] [--reruns 5]` after `make setup-test`. Prints
Markdown for docs/benchmarks.md.

- **First draw**: in headless Chromium, the official basic example's view (server-basic-vanillajs,
  read over MCP) is mounted by the app's real frame script (mcp_apps/bridge.js) before its result,
  as the Tools page does from the moment Call is pressed; once the view has done its handshake, the
  tool's real result is handed to the component's update path, and timed from then until the view
  shows the result's time. Beside it, the old measure: mounted with the result, timed from the mount.
  The floor, in the same run: the same document in a plain sandboxed frame, timed until its own
  "Loading..." is on screen (it parsed and drew, with no bridge and no result).
- **On the real Tools page** (bench/mcp_apps_page.py): the same view in the real app, from the moment
  Python holds the tools/call response (the protocol log's stamp) to the result on screen in the view,
  so the Streamlit run that carries the result to the component is in it: the first Call of a fresh
  session, and a second Call in it; the peer is the same app with Streamlit's default full garbage
  collection after every script run.
- **Chat rerun**: a conversation with 20 tool calls whose tool has a view (closed, as a reopened chat
  shows them), opened in the real app under AppTest, median of reruns; the peer is the same
  conversation stored without the views.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from time import perf_counter
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mcp_apps_page import DEFAULT_GC, describe, tools_page_draws  # noqa: E402
from ui.app_view import srcdoc  # noqa: E402
from yiem.mcp import McpClient  # noqa: E402
from yiem.mcp.apps import allow_attribute, content_security_policy, read_view, tool_view_uri  # noqa: E402
from yiem.types import (  # noqa: E402
    AgentMessage,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmUsage,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

BASIC = ROOT / "mcp_servers" / "node_modules" / ".bin" / "mcp-server-basic-vanillajs"
HARNESS = """<!doctype html><html><body><script type="module">
import mount from "./bridge.js";
window.mountView = (data) => {
  const root = document.createElement("div");
  document.body.append(root);
  const at = performance.timeOrigin + performance.now();
  mount({ parentElement: root, data, setStateValue: () => {} });
  return at;
};
// As the Tools page does since Call mounts the view: the frame first, with no result; the result later,
// through the component's update path on the same element.
window.mountEarly = (data) => {
  const root = document.createElement("div");
  document.body.append(root);
  const setStateValue = (name) => { if (name === "initialized") window.__initialized = true; };
  window.deliver = (result) => {
    const at = performance.timeOrigin + performance.now();
    mount({ parentElement: root, data: { ...data, toolResult: result }, setStateValue });
    return at;
  };
  mount({ parentElement: root, data: { ...data, toolResult: null }, setStateValue });
};
window.mountPlain = (html) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "plain";
  const at = performance.timeOrigin + performance.now();
  frame.srcdoc = html;
  document.body.append(frame);
  return at;
};
</script></body></html>"""
# Each check stamps the clock inside the frame on the animation frame where it first holds, so the
# figure is when the text was on screen, not when Playwright's next round trip got to ask.
_DRAWN = (
    "() => { const t = document.querySelector('#server-time');"
    " if (!(t && t.textContent !== 'Loading...')) return false;"
    " window.__seen = window.__seen || performance.timeOrigin + performance.now(); return true; }"
)
_PARSED = (
    "() => { const t = document.querySelector('#server-time');"
    " if (!(t && t.textContent === 'Loading...')) return false;"
    " window.__seen = window.__seen || performance.timeOrigin + performance.now(); return true; }"
)
_SEEN = "() => window.__seen"


def _basic_view() -> tuple[dict[str, Any], dict[str, Any], str]:
    """The basic example's view and a real `get-time` result, read over MCP."""
    with McpClient.stdio(str(BASIC), ["--stdio"]) as client:
        tool = next(t for t in client.list_tools() if tool_view_uri(t))
        view = read_view(client, str(tool_view_uri(tool)), "basic")
        result = client.call_tool(tool.name, {})
    data = {
        "id": "bench",
        "html": srcdoc(view),
        "csp": content_security_policy(view),
        "allow": allow_attribute(view.permissions),
        "title": "The view of get-time",
        "theme": "light",
        "hostVersion": "1",
        "maxHeight": 800,
        "initialHeight": 360,
        "border": True,
        "toolInput": {},
        "toolResult": result.to_wire(),
        "toolInfo": {"tool": tool.to_wire()},
        "answers": {},
    }
    return data, result.to_wire(), view.html


def first_draws(draws: int) -> tuple[list[float], list[float], list[float]]:
    """Milliseconds from the result's arrival to it on screen in a view mounted before it (ours), from
    mount to the result on screen (mounted with the result), and to the bare document drawn (floor)."""
    from playwright.sync_api import sync_playwright

    data, wire, html = _basic_view()
    folder = Path(tempfile.mkdtemp(prefix="yiem-bench-views-"))
    (folder / "index.html").write_text(HARNESS)
    (folder / "bridge.js").write_bytes((ROOT / "mcp_apps" / "bridge.js").read_bytes())

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    ours, mounted, floor = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
        )
        try:
            for _ in range(draws + 1):  # the first of each is a warm-up
                page = browser.new_page()
                page.goto(url)
                page.wait_for_function("() => typeof window.mountView === 'function'")
                page.evaluate("(data) => window.mountEarly(data)", data)
                frame = _frame(page)
                page.wait_for_function("() => window.__initialized === true", timeout=60_000)
                started = page.evaluate("(result) => window.deliver(result)", wire)
                frame.wait_for_function(_DRAWN, polling="raf", timeout=60_000)
                ours.append(frame.evaluate(_SEEN) - started)
                page.close()
                page = browser.new_page()
                page.goto(url)
                page.wait_for_function("() => typeof window.mountView === 'function'")
                started = page.evaluate("(data) => window.mountView(data)", data)
                frame = _frame(page)
                frame.wait_for_function(_DRAWN, polling="raf", timeout=60_000)
                mounted.append(frame.evaluate(_SEEN) - started)
                page.close()
                page = browser.new_page()
                page.goto(url)
                page.wait_for_function("() => typeof window.mountPlain === 'function'")
                started = page.evaluate("(html) => window.mountPlain(html)", html)
                frame = _frame(page)
                frame.wait_for_function(_PARSED, polling="raf", timeout=60_000)
                floor.append(frame.evaluate(_SEEN) - started)
                page.close()
        finally:
            browser.close()
            httpd.shutdown()
    return ours[1:], mounted[1:], floor[1:]


def _frame(page: Any) -> Any:
    element = page.wait_for_selector("iframe", state="attached")  # CSS selectors reach into shadow roots
    return element.content_frame()


def conversation(calls: int, views: bool, wire: dict[str, Any]) -> list[AgentMessage]:
    """`calls` turns, each a prompt, a `get-time` call, its result and a reply."""
    messages: list[AgentMessage] = []
    for turn in range(calls):
        call = AgentToolCall(id=f"call-{turn}", name="get-time", arguments={})
        details: dict[str, Any] = {"server": "basic", "tool": "get-time"}
        if views:
            details["view"] = {"uri": "ui://get-time/mcp-app.html", "result": wire}
        messages += [
            UserMessage(content=[TextContent(text=f"What time is it now ({turn})?")]),
            AssistantMessageToolCall(tool_calls=[call], usage=LlmUsage(input_tokens=50, output_tokens=5)),
            ToolResultMessage(
                tool_call_id=call.id,
                tool_name=call.name,
                content=[TextContent(text="12:00")],
                details=details,
            ),
            AssistantMessage(content=[TextContent(text=f"It is 12:00 ({turn}).")], usage=LlmUsage()),
        ]
    return messages


def chat_reruns(calls: int, reruns: int, wire: dict[str, Any]) -> tuple[float, float, int]:
    """Median seconds of a Chat page rerun with the views, and without them; toggles drawn."""
    folder = tempfile.mkdtemp(prefix="yiem-bench-views-chat-")
    os.environ["YIEM_DATABASE_URL"] = f"sqlite:///{folder}/bench.db"
    os.environ["YIEM_MCP_CONFIG"] = f"{folder}/no-mcp.json"
    os.chdir(ROOT)
    from streamlit.testing.v1 import AppTest

    from yiem.store import ConversationStore, create_store_engine

    store = ConversationStore(create_store_engine(os.environ["YIEM_DATABASE_URL"]))
    pages, toggles = {}, 0
    for views in (True, False):
        opened = store.create(title="views" if views else "no views")
        store.replace_messages(opened.id, conversation(calls, views, wire))
        page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        page.query_params["c"] = opened.id
        page.session_state["yiem_history_shown"] = (opened.id, calls * 4)
        page.run()
        if page.exception:
            raise SystemExit(f"the page failed: {page.exception}")
        if views:
            toggles = sum(1 for t in page.toggle if t.label == "Show the tool's view")
        pages[views] = page
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(reruns):  # interleaved, so a change in the machine's load falls on both alike
        for views, page in pages.items():
            started = perf_counter()
            page.run()
            times[views].append(perf_counter() - started)
    return statistics.median(times[True]), statistics.median(times[False]), toggles


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=15)
    parser.add_argument("--reruns", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    ours, mounted, floor = first_draws(args.draws)
    loads = [round(os.getloadavg()[0], 1)]
    firsts, repeats = tools_page_draws(args.draws)
    on_page, second = describe(firsts), describe(repeats)
    print(json.dumps({"tools_page": on_page, "second_call": second}), flush=True)  # kept if the peer fails
    loads.append(round(os.getloadavg()[0], 1))
    try:
        with_gc = describe(tools_page_draws(args.draws, DEFAULT_GC)[0])
    except Exception as error:  # the peer only; ours is printed above
        print(f"the peer (Streamlit's default GC) failed: {error!r}", file=sys.stderr)
        with_gc = {"response_to_drawn_ms": float("nan")}
    loads.append(round(os.getloadavg()[0], 1))
    _, wire, _ = _basic_view()
    with_views, without, toggles = chat_reruns(args.calls, args.reruns, wire)
    if toggles != args.calls:
        raise SystemExit(f"expected {args.calls} 'Show the tool's view' toggles, saw {toggles}")
    ours_ms, mounted_ms, floor_ms = (statistics.median(x) for x in (ours, mounted, floor))
    print("| measure | yiem | floor / peer | ratio |")
    print("|---|---|---|---|")
    print(
        f"| basic example view, the result's arrival to it on screen, view mounted at Call "
        f"(median of {args.draws}) | {ours_ms:.0f} ms | {floor_ms:.0f} ms (plain frame, document drawn) "
        f"| {ours_ms / floor_ms:.2f} × |"
    )
    print(
        f"| basic example view, mount to the result on screen, mounted with the result (median of "
        f"{args.draws}) | {mounted_ms:.0f} ms | {floor_ms:.0f} ms (plain frame, document drawn) "
        f"| {mounted_ms / floor_ms:.2f} × |"
    )
    page_ms, gc_ms = on_page["response_to_drawn_ms"], with_gc["response_to_drawn_ms"]
    print(
        f"| basic example view on the real Tools page, first Call of the session, Python's tools/call "
        f"response to the result on screen (median of {args.draws}) | {page_ms:.0f} ms | {gc_ms:.0f} ms "
        f"(Streamlit's default GC after every run) | {page_ms / gc_ms:.2f} × |"
    )
    print(
        f"| the same, second Call of the session (a new view) (median of {args.draws}) | "
        f"{second['response_to_drawn_ms']:.0f} ms | | |"
    )
    print(
        f"| Chat page rerun, {args.calls} tool calls with views (median of {args.reruns}) | "
        f"{with_views:.3f} s | {without:.3f} s (same chat, no views) | {with_views / without:.2f} × |"
    )
    figures = {"arrival_ms": ours, "mount_ms": mounted, "floor_ms": floor}
    print(json.dumps({name: [round(x) for x in values] for name, values in figures.items()}))
    print(
        json.dumps({"tools_page": on_page, "second_call": second, "tools_page_default_gc": with_gc}, indent=2)
    )
    print(f"load average {os.getloadavg()[0]:.1f}; before and after the Tools page draws: {loads}")


if __name__ == "__main__":
    main()
