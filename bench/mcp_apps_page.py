"""A view's first draw on the real Tools page: from Python holding the tools/call response to the result
on screen inside the view, in the real app (`streamlit run app.py`) in headless Chromium.

Run: `.venv/bin/python bench/mcp_apps_page.py [--draws 15]` after `make setup-test`; bench/mcp_apps.py
runs it too and prints its row beside the harness figures.

Each of `--draws` fresh browser sessions (after a warm-up one) opens the Tools page, where the
official basic example's `get-time` is the chosen tool, and presses Call as soon as the page has drawn:
that is the view's first draw, the issue's figure; then it presses Call once more, a second view of
the same tool in the same session.
The clock starts at the protocol
log's stamp of the response (yiem/mcp/_rpc.py stamps every received message with `time.time()` as
it arrives; the Log tab's Export JSON gives it to the millisecond) and stops on the animation frame,
stamped inside the view, where the result's time first shows (the view's own clock:
`performance.timeOrigin + performance.now()`, epoch milliseconds, as bench/mcp_apps.py stamps).
The viewport is tall enough for the view to be on screen: Chromium runs no animation frames in an
off-screen cross-origin frame.

On the way, each draw also keeps when the page received each of its WebSocket messages (the
component's data is one of them), when the view's document started loading, and when it first drew
its own "Loading...", so the figure can be split into where its time went.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.browser import CHROMIUM, CHROMIUM_ARGS, start_streamlit  # noqa: E402

BASIC = ROOT / "mcp_servers" / "node_modules" / ".bin" / "mcp-server-basic-vanillajs"
VIEW_FRAME = 'iframe[title^="The view of"]'
_IDLE = """() => document.querySelector('[data-testid="stApp"]')
    .getAttribute('data-test-script-state') === 'notRunning'"""
# Stamps, in the page, when each WebSocket message arrives (before Streamlit's own handler runs).
_WATCH_SOCKET = """(() => {
  window.__benchMessages = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const size = typeof event.data === "string" ? event.data.length
          : (event.data.byteLength ?? event.data.size);
        window.__benchMessages.push([performance.timeOrigin + performance.now(), size]);
      });
    }
  };
})();"""
# Run on every animation frame inside the view: the first frame that shows "Loading..." (its own
# document drawn) and the first that shows the result.
_DRAWN = """() => {
  const now = performance.timeOrigin + performance.now();
  const shown = document.querySelector('#server-time');
  if (shown && shown.textContent === 'Loading...') window.__parsed = window.__parsed || now;
  if (!(shown && shown.textContent !== 'Loading...')) return false;
  window.__seen = window.__seen || now;
  return true;
}"""
_STAMPS = """() => ({seen: window.__seen, parsed: window.__parsed || null, origin: performance.timeOrigin,
  skew: Date.now() - (performance.timeOrigin + performance.now())})"""
# A WebSocket message this large carries the view's component data (its document is ~217 KB).
_VIEW_DATA_BYTES = 150_000


@dataclass
class Draw:
    """One Call's stamps, in epoch milliseconds (the response's from Python, the rest from Chromium)."""

    response: float  # Python received the tools/call response
    seen: float  # the view's animation frame where the result first showed
    document: float  # the view's document started loading (its performance.timeOrigin)
    parsed: float | None  # the view first drew its own "Loading..."
    view_data: list[float]  # the page received a message carrying the view's data (before `seen`)
    clicked: float  # Call was pressed (the page's clock)
    skew: float  # the view's Date.now() minus its performance clock
    ahead: bool  # the view's frame was on the page before Call was pressed

    @property
    def latency(self) -> float:
        return self.seen - self.response


def tools_page_draws(sessions: int, streamlit_args: tuple[str, ...] = ()) -> tuple[list[Draw], list[Draw]]:
    """In each of `sessions` fresh browser sessions (after a warm-up one): the first Call of get-time
    on the Tools page, the view's first draw there, and a second Call, whose view is mounted anew.

    `streamlit_args`: options for `streamlit run` beyond .streamlit/config.toml's (the peer's)."""
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="yiem-bench-views-page-"))
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"basic": {"command": str(BASIC), "args": ["--stdio"]}}}))
    firsts: list[Draw] = []
    repeats: list[Draw] = []
    env = {"YIEM_MCP_CONFIG": str(config)}
    with start_streamlit(folder, env=env, args=streamlit_args) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 2400})
            context.add_init_script(_WATCH_SOCKET)
            for _ in range(sessions + 1):
                # A new page is a new Streamlit session: its own connection, its own first view of the tool.
                page = context.new_page()
                page.goto(f"{app.url}/tools")
                call = page.get_by_role("button", name="Call", exact=True)
                call.wait_for(timeout=180_000)
                # Call is pressed as soon as the page has drawn, as a quick person would: a view loaded
                # ahead of the call may still be loading its document then.
                page.wait_for_function(_IDLE, timeout=120_000)
                try:
                    found = [_one_draw(page, call, first=True), _one_draw(page, call, first=False)]
                except Exception:
                    page.screenshot(path=str(folder / "failed.png"), full_page=True)
                    print(f"a draw failed; the page is in {folder / 'failed.png'}", file=sys.stderr)
                    raise
                responses = _call_responses(_protocol_log(page))
                page.close()
                if len(responses) != len(found):
                    raise SystemExit(
                        f"{len(found)} Calls pressed but {len(responses)} tools/call responses logged"
                    )
                first, repeat = (
                    Draw(response=at, **stamps) for at, stamps in zip(responses, found, strict=True)
                )
                firsts.append(first)
                repeats.append(repeat)
        finally:
            browser.close()
    return firsts[1:], repeats[1:]


def _one_draw(page: Any, call: Any, *, first: bool) -> dict[str, Any]:
    """Press Call and stamp the view's first frame with the result: on the session's first Call, the
    page's only view (mounted ahead if the page does that); on a later one, a view mounted anew."""
    frames = page.locator(VIEW_FRAME)
    ahead = frames.count() > 0
    if not first:
        frames.evaluate_all("(all) => all.forEach((frame) => frame.setAttribute('data-bench-old', '1'))")
    before = page.evaluate("() => window.__benchMessages.length")
    clicked = page.evaluate("() => performance.timeOrigin + performance.now()")
    call.click()
    wanted = VIEW_FRAME if first else f"{VIEW_FRAME}:not([data-bench-old])"
    element = page.wait_for_selector(wanted, state="attached", timeout=60_000)
    frame = element.content_frame()
    frame.wait_for_function(_DRAWN, polling="raf", timeout=60_000)
    stamps = frame.evaluate(_STAMPS)
    box = element.bounding_box()
    if box is None or box["y"] + box["height"] > 2400:
        raise SystemExit(f"the view is not on screen ({box}): its animation frames would not run")
    page.wait_for_function(_IDLE, timeout=120_000)
    messages = page.evaluate("(from) => window.__benchMessages.slice(from)", before)
    return {
        "seen": stamps["seen"],
        "document": stamps["origin"],
        "parsed": stamps["parsed"],
        "view_data": [at for at, size in messages if size >= _VIEW_DATA_BYTES and at <= stamps["seen"]],
        "clicked": clicked,
        "skew": stamps["skew"],
        "ahead": first and ahead,
    }


def _protocol_log(page: Any) -> dict[str, Any]:
    """The Log tab's export: every message of the session with its time, as the app recorded it."""
    page.get_by_role("tab", name="Log").click()
    with page.expect_download(timeout=120_000) as exported:
        page.get_by_role("button", name="Export JSON").click()
    return dict(json.loads(Path(exported.value.path()).read_text()))


def _call_responses(log: dict[str, Any]) -> list[float]:
    """Epoch milliseconds at which each tools/call response arrived, in the order the calls were sent."""
    sent = [
        entry["message"]["id"]
        for entry in log["messages"]
        if entry["direction"] == "sent" and entry["message"].get("method") == "tools/call"
    ]
    received = {
        entry["message"].get("id"): datetime.fromisoformat(entry["time"]).timestamp() * 1000
        for entry in log["messages"]
        if entry["direction"] == "received" and "method" not in entry["message"]
    }
    return [received[ident] for ident in sent if ident in received]


def describe(found: list[Draw]) -> dict[str, Any]:
    """Medians of the figure and of its parts, in milliseconds."""

    def median(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    # The last message carrying the view's data before the result showed is the one that carried it.
    carried = [(draw, draw.view_data[-1]) for draw in found if draw.view_data]
    return {
        "response_to_drawn_ms": median([draw.latency for draw in found]),
        "click_to_response_ms": median([draw.response - draw.clicked for draw in found]),
        "response_to_result_data_ms": median([at - draw.response for draw, at in carried]),
        "result_data_to_drawn_ms": median([draw.seen - at for draw, at in carried]),
        "response_to_document_start_ms": median([draw.document - draw.response for draw in found]),
        "document_start_to_drawn_ms": median([draw.seen - draw.document for draw in found]),
        # When the result came before the document had drawn, its first frame already shows the result.
        "drew_loading_first": sum(draw.parsed is not None for draw in found),
        "mounted_ahead": sum(draw.ahead for draw in found),
        "largest_clock_skew_ms": max(abs(draw.skew) for draw in found),
        "each_ms": [round(draw.latency) for draw in found],
    }


# The peer: the same app with Streamlit's default full garbage collection after every script run.
DEFAULT_GC = ("--runner.postScriptGC=true",)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=15)
    args = parser.parse_args()
    for name, streamlit_args in (("as configured", ()), ("Streamlit's default GC", DEFAULT_GC)):
        load = os.getloadavg()[0]
        firsts, repeats = tools_page_draws(args.draws, streamlit_args)
        print(name, json.dumps({"first_call": describe(firsts), "second_call": describe(repeats)}, indent=2))
        print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
