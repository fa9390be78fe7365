"""An MCP server over stdio whose tools have a view and answer only when the test says so.

`python tests/mcp_servers/waiting_view.py --release-file PATH`: `wait` returns "waited" and
`wait-then-fail` fails with a JSON-RPC error, each once PATH exists, so a test can see the view
mounted while its call still runs. The view (ui://waiting/view.html) speaks the extension's
handshake by hand and writes what it was given into the page, where the test reads it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.mcp_servers.hostile_view import HostileViewServer
from tests.mcp_servers.scripted import Send, serve_stdio

URI = "ui://waiting/view.html"
TOOLS = [
    {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"resourceUri": URI}},
    }
    for name, description in (
        ("wait", "Answers once the test releases it."),
        ("wait-then-fail", "Fails once the test releases it."),
    )
]
VIEW = """<!doctype html>
<html><head><title>waiting</title></head>
<body>
<p id="state">loading</p>
<p id="input">no input</p>
<p id="asked">not asked</p>
<script>
const put = (id, words) => { document.getElementById(id).textContent = words; };
window.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.id === 1 && message.result) {
    parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    put("state", "waiting for the result");
    // A request of its own as it starts: a view loaded before its call gets no answer until the call.
    put("asked", "asking");
    const read = { uri: "ui://waiting/view.html" };
    parent.postMessage({ jsonrpc: "2.0", id: 2, method: "resources/read", params: read }, "*");
  } else if (message.id === 2) {
    put("asked", message.result ? "answered" : "refused");
  } else if (message.method === "ui/notifications/tool-input") {
    put("input", "input received");
  } else if (message.method === "ui/notifications/tool-result") {
    put("state", "result: " + message.params.content[0].text);
  }
});
parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
  protocolVersion: "2026-01-26", appInfo: { name: "waiting", version: "1" }, appCapabilities: {} } }, "*");
</script>
</body></html>
"""


class WaitingViewServer(HostileViewServer):
    """`wait` and `wait-then-fail`, each held until the release file exists."""

    def __init__(self, release: Path) -> None:
        super().__init__("view")
        self.tools = [dict(tool) for tool in TOOLS]
        self.views = {URI: VIEW}
        self.release = release

    def _call(
        self, name: str, args: dict[str, Any], params: dict[str, Any], request_id: Any, send: Send
    ) -> dict[str, Any] | None:
        if name not in ("wait", "wait-then-fail"):
            return super()._call(name, args, params, request_id, send)
        deadline = time.monotonic() + 120
        while not self.release.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        if name == "wait-then-fail":
            raise RuntimeError("the server gave up on purpose")
        return {"content": [{"type": "text", "text": "waited"}], "isError": False}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release-file", type=Path, required=True)
    serve_stdio(WaitingViewServer(parser.parse_args().release_file), noise=False)


if __name__ == "__main__":
    main()
