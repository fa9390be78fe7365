"""Saved checks in a real Chromium: calls to server-everything and mcp-server-git saved to a collection from
the history, run from the Checks tab, then broken (a changed snapshot, a JSONPath that no longer holds) and
run again from the page and the command line (its exit code and JUnit file, read by junitparser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from junitparser import Failure, JUnitXml
from playwright.sync_api import expect

from tests.checks.test_check_cli import _check, _entry
from tests.fixtures.browser import StreamlitApp, fresh, screenshot, script_run
from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_browser import _add_server, _choose_tool, _fill, _open_tools, tools_app  # noqa: F401
from yiem.checks import SavedChecks, collection_json
from yiem.store import create_store_engine

pytestmark = pytest.mark.browser


def test_a_call_saved_from_the_history_runs_from_the_page_and_the_command_line(
    tools_app: StreamlitApp,  # noqa: F811
    page: Any,
    everything_stdio: StdioServer,
    git_stdio: StdioServer,
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

    # A second server, a command with arguments: git_status on a clean repository.
    with script_run(page):
        page.get_by_role("tab", name="Tools").click()
    _add_server(page, "git", "git_status", stdio=git_stdio)
    _choose_tool(page, "git_status")
    repository = Path(git_stdio.args[1])
    _fill(page, "Repo Path", str(repository))
    page.get_by_role("button", name="Call").click()
    expect(page.get_by_text("working tree clean").first).to_be_visible(timeout=60_000)

    with script_run(page):
        page.get_by_role("tab", name="History").click()
    status = page.get_by_test_id("stExpander").filter(has_text="git · git_status")
    status.locator("summary").first.click()
    status.get_by_role("button", name="Save to a collection").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Collection", exact=True).fill("smoke")
    dialog.get_by_label("JSONPath", exact=True).fill("$.content[0].text")
    dialog.get_by_label("JSONPath check").click()
    page.get_by_role("option", name="contains", exact=True).click()
    expect(dialog.get_by_label("JSONPath check")).to_have_value("contains")
    dialog.get_by_label("JSONPath value (JSON or text)").fill("working tree clean")
    dialog.get_by_role("button", name="Save the call").click()
    expect(page.get_by_text("Saved to “smoke” (2 calls).")).to_be_visible(timeout=30_000)

    page.keyboard.press("Escape")
    with script_run(page):
        page.get_by_role("tab", name="Checks").click()
    fresh(page).get_by_role("button", name="Run the collection").click()
    expect(page.get_by_text("2 passed, 0 failed")).to_be_visible(timeout=60_000)

    # Break the snapshot in the store, as a server that changed its answer would.
    engine = create_store_engine(f"sqlite:///{tools_app_db(tmp_path)}")
    saved = SavedChecks(engine)
    stored = saved.get("smoke")
    call = stored.collection.calls[0]
    old = {"content": [{"type": "text", "text": "Echo: hello world"}], "isError": False}
    snapshot = call.assertions[-1].model_copy(update={"snapshot": old})
    broken_call = call.model_copy(update={"assertions": [*call.assertions[:-1], snapshot]})
    saved.save(stored.collection.model_copy(update={"calls": [broken_call, *stored.collection.calls[1:]]}))
    # A new untracked file: git_status no longer says "working tree clean".
    (repository / "notes.txt").write_text("Not committed.\n")

    # The tab reads the store on every run, so the next Run uses the broken collection.
    page.get_by_role("button", name="Run the collection").click()
    expect(page.get_by_text("0 passed, 2 failed")).to_be_visible(timeout=60_000)
    expect(page.get_by_text('-      "text": "Echo: hello world"')).to_be_visible()
    expect(page.get_by_text("git/git_status failed:")).to_be_visible()
    reason = page.get_by_test_id("stText").filter(has_text="$.content[0].text is")
    expect(reason).to_contain_text('which does not contain "working tree clean"')
    expect(reason).to_contain_text("Untracked files:")
    screenshot(page, "checks-snapshot-diff")

    # The page's export, with the server entries it needs, fails on the command line the same way.
    # The button reruns the script when clicked; wait for that run before reaching for Accept below.
    with script_run(page), page.expect_download() as download:
        page.get_by_role("button", name="Export").click()
    exported = tmp_path / "smoke.json"
    download.value.save_as(exported)
    page_export = json.loads(exported.read_text())
    assert [c["tool"] for c in page_export["calls"]] == ["echo", "git_status"]
    page_export["servers"] = {"everything": _entry(everything_stdio), "git": _entry(git_stdio)}
    failing = _check(tmp_path, json.dumps(page_export), "--junit", "report.xml", "--format", "json")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert (json.loads(failing.stdout)["passed"], json.loads(failing.stdout)["failed"]) == (0, 2)
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "report.xml"))))
    assert (suite.name, suite.tests, suite.failures) == ("smoke", 2, 2)
    cases = {case.name: case for case in suite}
    assert list(cases) == ["everything/echo", "git/git_status"]
    (echo_failure,) = [r for r in cases["everything/echo"].result if isinstance(r, Failure)]
    assert "differs from the accepted snapshot" in echo_failure.message
    assert '-      "text": "Echo: hello world"' in echo_failure.text
    (status_failure,) = [r for r in cases["git/git_status"].result if isinstance(r, Failure)]
    assert status_failure.message.startswith("$.content[0].text contains")
    assert 'which does not contain "working tree clean"' in status_failure.message

    fresh(page).get_by_role("button", name="Accept new result").click()
    expect(page.get_by_text("Accepted the new result of everything/echo")).to_be_visible(timeout=30_000)

    # With the new echo accepted and the untracked file gone, the collection passes on the command line.
    (repository / "notes.txt").unlink()
    accepted = saved.get("smoke").collection
    accepted.servers.update(everything=_entry(everything_stdio), git=_entry(git_stdio))
    done = _check(tmp_path, collection_json(accepted), "--junit", "report.xml", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["passed"] == 2
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "report.xml"))))
    assert suite.failures == 0 and all(case.is_passed for case in suite)


def tools_app_db(tmp_path: Path) -> Path:
    return tmp_path / "yiem-browser.db"
