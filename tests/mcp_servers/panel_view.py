"""An MCP server over stdio whose view uses what a host offers a well-behaved view, and shows each answer.

`python tests/mcp_servers/panel_view.py`: `panel` (read-only) has the view ui://panel/view.html, which
speaks the extension's messages by hand (no SDK, so a test knows each one it sends) and writes into
the page what it was given: the host's theme, the tool's result, and the answer to each button:
`count` (read-only: the host answers at once), `bump` (not read-only: the host asks the person),
`panel-refresh` (meant only for the view: the model is never offered it) and a link to open. It
reports its height as `PANEL_HEIGHT`, so a test can see the host's frame follow the report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.mcp_servers.hostile_view import HostileViewServer
from tests.mcp_servers.scripted import Send, serve_stdio

URI = "ui://panel/view.html"
PANEL_HEIGHT = 480
LINK = "https://example.com/yiem-panel-docs"
_READ_ONLY = {"readOnlyHint": True}
TOOLS = [
    {
        "name": "panel",
        "title": "Panel",
        "description": "Shows the panel view.",
        "inputSchema": {"type": "object"},
        "annotations": _READ_ONLY,
        "_meta": {"ui": {"resourceUri": URI}},
    },
    {
        "name": "count",
        "description": "Counts the calls; changes nothing.",
        "inputSchema": {"type": "object"},
        "annotations": _READ_ONLY,
    },
    {"name": "bump", "description": "Bumps a number on the server.", "inputSchema": {"type": "object"}},
    {
        "name": "panel-refresh",
        "description": "Refreshes the panel (for its view only).",
        "inputSchema": {"type": "object"},
        "annotations": _READ_ONLY,
        "_meta": {"ui": {"resourceUri": URI, "visibility": ["app"]}},
    },
]
_VIEW = """<!doctype html>
<html><head><title>panel</title>
<style>html, body { margin: 0; } #panel { height: PANEL_HEIGHTpx; display: flow-root; }</style>
</head>
<body><div id="panel">
<p id="theme">theme: none</p>
<p id="result">result: none</p>
<p id="count">count: not asked</p>
<p id="bump">bump: not asked</p>
<p id="refresh">refresh: not asked</p>
<p id="link">link: not asked</p>
<button id="count-button" type="button">Count</button>
<button id="bump-button" type="button">Bump</button>
<button id="refresh-button" type="button">Refresh</button>
<button id="link-button" type="button">Open the docs</button>
</div>
<script>
const put = (id, words) => { document.getElementById(id).textContent = id + ": " + words; };
const waiting = new Map();
let last = 0;
const ask = (method, params) => new Promise((resolve, reject) => {
  const id = ++last;
  waiting.set(id, { resolve, reject });
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
});
const tell = (method, params) => parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
window.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.id !== undefined && waiting.has(message.id) && !message.method) {
    const { resolve, reject } = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) reject(message.error); else resolve(message.result);
  } else if (message.method === "ui/notifications/tool-result") {
    put("result", message.params.content[0].text);
  } else if (message.method === "ui/notifications/host-context-changed" && message.params.theme) {
    put("theme", message.params.theme);
  }
});
const call = (id, name) => ask("tools/call", { name, arguments: {} }).then(
  (result) => put(id, result.content[0].text), (error) => put(id, "error: " + error.message));
document.getElementById("count-button").onclick = () => call("count", "count");
document.getElementById("bump-button").onclick = () => call("bump", "bump");
document.getElementById("refresh-button").onclick = () => call("refresh", "panel-refresh");
document.getElementById("link-button").onclick = () => ask("ui/open-link", { url: "PANEL_LINK" }).then(
  (result) => put("link", result && result.isError ? "not opened" : "opened"),
  (error) => put("link", "error: " + error.message));
ask("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "panel", version: "1" },
  appCapabilities: {} }).then((result) => {
  put("theme", (result.hostContext && result.hostContext.theme) || "none");
  tell("ui/notifications/initialized", {});
  tell("ui/notifications/size-changed", { width: innerWidth, height: PANEL_HEIGHT });
});
</script>
</body></html>
"""
VIEW = _VIEW.replace("PANEL_HEIGHT", str(PANEL_HEIGHT)).replace("PANEL_LINK", LINK)


class PanelViewServer(HostileViewServer):
    """`panel` and its view, and the tools the view calls."""

    def __init__(self) -> None:
        super().__init__("view")
        self.tools = [dict(tool) for tool in TOOLS]
        self.views = {URI: VIEW}
        self.counts = {"count": 0, "bump": 0}

    def _call(
        self, name: str, args: dict[str, Any], params: dict[str, Any], request_id: Any, send: Send
    ) -> dict[str, Any] | None:
        if name in self.counts:
            self.counts[name] += 1
            text = f"{'counted' if name == 'count' else 'bumped'} {self.counts[name]}"
        elif name in ("panel", "panel-refresh"):
            text = "panel ready" if name == "panel" else "refreshed"
        else:
            return super()._call(name, args, params, request_id, send)
        return {"content": [{"type": "text", "text": text}], "isError": False}


def main() -> None:
    serve_stdio(PanelViewServer(), noise=False)


if __name__ == "__main__":
    main()
