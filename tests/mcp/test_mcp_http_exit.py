"""A program with an MCP HTTP client left open still exits: no transport thread holds it (a stopped
app with a resource subscription on the Tools page hung until it was killed)."""

from __future__ import annotations

import subprocess
import sys

from tests.fixtures.mcp import ROOT, stop_process

# Subscribes over the SDK server's `subscriptions/listen` stream, then ends without closing the client.
_PROGRAM = """
import sys, threading
from yiem.mcp import McpClient, McpNotification
from yiem.mcp.http import HttpTransport

acknowledged = threading.Event()

def sink(notification: McpNotification) -> None:
    if notification.method == "notifications/subscriptions/acknowledged":
        acknowledged.set()

client = McpClient(HttpTransport(sys.argv[1]), init_timeout=60.0)
client.event_sink = sink
client.connect()
client.subscribe("note://today")
assert acknowledged.wait(60), "the subscription was never acknowledged"
assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
print("subscribed", flush=True)
"""


def test_a_program_that_never_closes_its_client_still_exits(sdk_stateless_http_url: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", _PROGRAM, sdk_stateless_http_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Generous: a hang is what fails, never slowness (the listen stream would never end by itself).
        output, _ = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        stop_process(process)
        raise AssertionError("the program did not exit: a transport thread held it open") from None
    assert "subscribed" in output, output
    assert process.returncode == 0, output
