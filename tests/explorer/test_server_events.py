"""Notifications a server sends on its own, kept and put in words (server-everything's simulated logs)."""

from __future__ import annotations

import re
import time

from tests.fixtures.mcp import StdioServer
from yiem.explorer import ServerEvents, notification_words
from yiem.mcp import McpClient, McpNotification


def test_log_messages_are_kept_and_the_earlier_sink_still_hears_them(everything_stdio: StdioServer) -> None:
    heard: list[str] = []
    with McpClient.stdio(
        everything_stdio.command,
        everything_stdio.args,
        event_sink=lambda notification: heard.append(notification.method),
    ) as client:
        events = ServerEvents(max_events=3)
        events.attach(client)
        events.attach(client)  # attaching twice must not log everything twice
        client.call_tool("toggle-simulated-logging", {})
        try:
            deadline = time.monotonic() + 30
            while not any(event.method == "notifications/message" for _, event in events.recent()):
                assert time.monotonic() < deadline, "no log message arrived"
                time.sleep(0.05)
        finally:
            client.call_tool("toggle-simulated-logging", {})
        logs = [event for _, event in events.recent() if event.method == "notifications/message"]
        # server-everything picks a level at random; its alert text reads "Alert level-message".
        assert re.search(r"^[A-Z]+: \w+[- ]level[- ]message", notification_words(logs[0]))
        assert notification_words(logs[0]).split(":")[0].isupper()
        assert heard.count("notifications/message") == sum(
            1 for _, event in events.recent() if event.method == "notifications/message"
        )
        assert len(events) <= 3


def test_a_tools_change_calls_back(everything_stdio: StdioServer) -> None:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        events = ServerEvents()
        changed: list[bool] = []
        events.attach(client, lambda: changed.append(True))
        assert client.event_sink is not None
        # What the client's reader hands the sink when the server announces changes.
        client.event_sink(McpNotification(method="notifications/tools/list_changed"))
        client.event_sink(McpNotification(method="notifications/resources/list_changed"))
        assert changed == [True]
        assert [notification_words(event) for _, event in events.recent()] == [
            "The server's resources changed.",
            "The server's tools changed.",
        ]


def test_notifications_in_words() -> None:
    def words(method: str, **params: object) -> str:
        return notification_words(McpNotification(method=method, params=params))

    assert words("notifications/message", level="warning", logger="db", data="slow query") == (
        "WARNING (db): slow query"
    )
    assert words("notifications/message", level="info", data={"rows": 3}) == 'INFO: {"rows": 3}'
    assert (
        words("notifications/progress", progress=2, total=5, message="copying") == "Progress 2 of 5 — copying"
    )
    assert words("notifications/progress", progress=7) == "Progress 7"
    assert words("notifications/resources/updated", uri="file:///a") == "Resource file:///a was updated."
    assert words("notifications/custom", a=1) == 'notifications/custom {"a": 1}'
    assert words("notifications/custom") == "notifications/custom"
