"""Saved checks in a real Chromium: a call to server-everything saved to a collection from the history,
run from the Checks tab, then broken (a changed snapshot) and run again from the page and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, screenshot
from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_browser import _add_server, _choose_tool, _fill, _open_tools, tools_app  # noqa: F401
from yiem.checks import SavedChecks, collection_json
from yiem.store import create_store_engine

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def test_a_call_saved_from_the_history_runs_from_the_page_and_the_command_line(
    tools_app: StreamlitApp,  # noqa: F811
    page: Any,
    everything_stdio: StdioServer,
    tmp_path: Path,
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", "Echo Tool", stdio=everything_stdio)
    _choose_tool(page, "Echo Tool")
    _fill(page, "message", "hello")
    page.get_by_role("button", name="Call").click()
    expect(page.get_by_text("Echo: hello").first).to_be_visible(timeout=60_000)

    page.get_by_role("tab", name="History").click()
    page.get_by_test_id("stExpander").filter(has_text="everything · echo").locator("summary").first.click()
    page.get_by_role("button", name="Save to a collection").click()
    page.get_by_label("Collection", exact=True).fill("smoke")
    page.get_by_label("Text contains").fill("hello")
    page.get_by_text("Snapshot: equal to this result").click()
    # The whole form fits the window, so its button is reachable without scrolling.
    expect(page.get_by_role("button", name="Save the call")).to_be_in_viewport(ratio=1)
    screenshot(page, "checks-save-form")
    page.get_by_role("button", name="Save the call").click()
    expect(page.get_by_text("Saved to “smoke” (1 call).")).to_be_visible(timeout=30_000)

    page.keyboard.press("Escape")
    page.get_by_role("tab", name="Checks").click()
    page.get_by_role("button", name="Run the collection").click()
    expect(page.get_by_text("1 passed, 0 failed")).to_be_visible(timeout=60_000)

    # Break the snapshot in the store, as a server that changed its answer would.
    engine = create_store_engine(f"sqlite:///{tools_app_db(tmp_path)}")
    saved = SavedChecks(engine)
    stored = saved.get("smoke")
    call = stored.collection.calls[0]
    old = {"content": [{"type": "text", "text": "Echo: hello world"}], "isError": False}
    snapshot = call.assertions[-1].model_copy(update={"snapshot": old})
    broken_call = call.model_copy(update={"assertions": [*call.assertions[:-1], snapshot]})
    saved.save(stored.collection.model_copy(update={"calls": [broken_call]}))

    # The tab reads the store on every run, so the next Run uses the broken collection.
    page.get_by_role("button", name="Run the collection").click()
    expect(page.get_by_text("0 passed, 1 failed")).to_be_visible(timeout=60_000)
    expect(page.get_by_text('-      "text": "Echo: hello world"')).to_be_visible()
    screenshot(page, "checks-snapshot-diff")
    page.get_by_role("button", name="Accept new result").click()
    expect(page.get_by_text("Accepted the new result of everything/echo")).to_be_visible(timeout=30_000)

    # The exported collection, with the server entry it needs, passes on the command line now.
    accepted = saved.get("smoke").collection
    accepted.servers["everything"] = {
        "command": everything_stdio.command,
        "args": list(everything_stdio.args),
    }
    exported = tmp_path / "smoke.json"
    exported.write_text(collection_json(accepted))
    done = subprocess.run(
        [sys.executable, "-m", "yiem", "check", str(exported), "--format", "json"],
        env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["passed"] == 1


def tools_app_db(tmp_path: Path) -> Path:
    return tmp_path / "yiem-browser.db"
