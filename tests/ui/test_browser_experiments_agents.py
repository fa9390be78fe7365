"""The done-when of agent tasks in a real Chromium: a simulated-user experiment set up on the page,
the agent a scripted OpenAI-compatible server on loopback (its tool calls written here) and the user
played by the embedded model (SmolLM2), runs to the end; the transcripts, turns and costs are drawn,
and the trajectory scorers pass and fail exactly where the script's tool calls say."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.fixtures.browser import StreamlitApp, open_app, open_tab, screenshot
from tests.scripted_http import (
    Reply,
    ScriptedServer,
    json_reply,
    openai_chunk,
    openai_text_stream,
    sse,
    sse_reply,
)
from tests.ui.test_browser_experiments import LONG, _choose, _fill, _idle, _import, _upload
from yiem.experiments import ExperimentStore
from yiem.store import create_store_engine, usage

pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.timeout(1500)]

ITEMS = [
    {
        "id": "trip",
        "input": "I need a flight to Oslo.",
        "persona": "A busy traveller.",
        "goal": "Fly to Oslo.",
    },
    {
        "id": "close",
        "input": "Please close my old account.",
        "persona": "A tidy person.",
        "goal": "Close it.",
    },
]
USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
# What the scripted agent calls on each item's first turn: the trajectory scorers are judged on these.
CALLS = {"trip": ("search_flights", {"city": "Oslo"}), "close": ("delete_account", {})}


def _tool_call(name: str, arguments: dict[str, Any]) -> Reply:
    call = {
        "index": 0,
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    events = [openai_chunk({"role": "assistant", "content": ""}), openai_chunk({"tool_calls": [call]})]
    events += [
        openai_chunk({}, "tool_calls"),
        sse({"object": "chat.completion.chunk", "choices": [], "usage": USAGE}),
    ]
    return sse_reply([*events, sse("[DONE]")])


class _Agent(list[Reply]):
    """The scripted agent's replies, chosen from the request just recorded (ScriptedServer records it,
    then pops its reply here): each item's calls and answers come whatever the user model said."""

    def __init__(self, server: ScriptedServer) -> None:
        super().__init__([Reply()])  # never empty, so the server always asks
        self.server = server

    def pop(self, index: Any = -1) -> Reply:
        body = self.server.requests[-1].body
        if not isinstance(body, dict):
            return json_reply({"object": "list", "data": [{"id": "agent", "object": "model"}]})
        messages = body["messages"]
        item = "trip" if "Oslo" in json.dumps(messages[0]) else "close"
        users = [m for m in messages if m["role"] == "user"]
        if messages[-1]["role"] == "tool":
            return sse_reply(openai_text_stream("Which day?" if item == "trip" else "Done.", usage=USAGE))
        if len(users) == 1:
            return _tool_call(*CALLS[item])
        return sse_reply(openai_text_stream("Booked." if item == "trip" else "Closed.", usage=USAGE))


def test_a_simulated_user_experiment_runs_to_the_end_with_trajectory_scores(
    streamlit_app: StreamlitApp, page: Any, tmp_path: Path
) -> None:
    server = ScriptedServer()
    server.replies = _Agent(server)
    try:
        _run_it(streamlit_app, page, tmp_path, server)
    except Exception as error:
        screenshot(page, "experiments-agents-debug")
        raise AssertionError(f"{error!r}\n{streamlit_app.log()}") from error
    finally:
        server.close()


def _run_it(app: StreamlitApp, page: Any, tmp_path: Path, server: ScriptedServer) -> None:
    open_app(page, f"{app.url}/experiments")
    page.get_by_text("No runs yet").wait_for(timeout=LONG)
    data = tmp_path / "tasks.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    _upload(page, data)
    _import(page, 2)
    _idle(page)

    # The agent: the scripted server, as a llama.cpp-style OpenAI-compatible provider.
    open_tab(page, "Variants")
    page.get_by_role("button", name="Add a variant", exact=True).click()
    _idle(page)
    _choose(page, page.get_by_role("combobox", name="Provider"), "llama.cpp server")
    _idle(page)
    # Scoped: the hidden Run tab has the user model's fields of the same names.
    variant = page.get_by_test_id("stExpander").filter(has_text="Variant 1:")
    _fill(variant.get_by_label("Base URL", exact=True), f"{server.url}/v1")
    _idle(page)
    _fill(variant.get_by_label("Model", exact=True), "agent")
    _idle(page)

    # Two trajectory scorers: the flight search was called with Oslo; no forbidden tool was.
    open_tab(page, "Scorers")
    setups = [
        (
            "Called these tools (trajectory)",
            "trajectory",
            "^Calls, one per line",
            'search_flights {"city": "Oslo"}',
        ),
        ("Called no forbidden tool", "forbidden", "^Tools it must not call", "delete_account"),
    ]
    for number, (kind, name, field, value) in enumerate(setups, start=1):
        page.get_by_role("button", name="Add a scorer", exact=True).click()
        page.get_by_text(re.compile(rf"^Scorer {number}: ")).wait_for(timeout=LONG)
        _idle(page)
        _choose(page, page.get_by_role("combobox", name="Kind").nth(number - 1), kind)
        page.get_by_label(re.compile(field)).wait_for(timeout=LONG)
        _idle(page)
        _fill(page.get_by_label(re.compile(field)), value)
        _idle(page)
        scorer = page.get_by_test_id("stExpander").filter(has_text=f"Scorer {number}:")
        _fill(scorer.get_by_label("Name", exact=True), name)
        _idle(page)
        # Its value held after the rerun (the run's scores, asserted below, are named by it).
        expect(scorer.get_by_label("Name", exact=True)).to_have_value(name, timeout=LONG)

    # The user: the embedded model (the form's first provider), one turn, short replies.
    open_tab(page, "Run")
    _fill(page.get_by_label("Items at once per provider"), "1")
    _idle(page)
    _fill(page.get_by_label(re.compile("^Most user turns per conversation")), "1")
    _idle(page)
    player = page.get_by_test_id("stExpander").filter(has_text="Simulated users (")
    _fill(player.get_by_label(re.compile("^Longest reply in tokens")), "24")
    _idle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(re.compile(r"finished · 2 / 2 items")).first.wait_for(timeout=3 * LONG)
    _idle(page)
    screenshot(page, "experiments-agents")

    store = ExperimentStore(create_store_engine(app.database_url))
    [run] = store.list_runs()
    outcomes = {o.item_id: o for o in store.outcomes(run.id)}
    for item_id, outcome in outcomes.items():
        assert outcome.error is None, outcome.error
        # The agent's turns: the tool call, its answer, and one more after the user's turn unless the
        # user model said its goal was met at once.
        assert (outcome.user_turns, outcome.turns) == ((0, 2) if outcome.goal_met else (1, 3)), item_id
        assert outcome.user_usage is not None and outcome.user_usage.output_tokens > 0
        transcript = store.transcript(outcome)
        assert [m.role for m in transcript[:3]] == ["user", "assistant", "toolResult"]
    scores = {(item, s.scorer): s.passed for item, o in outcomes.items() for s in o.scores}
    assert scores == {
        ("trip", "trajectory"): True,
        ("trip", "forbidden"): True,
        ("close", "trajectory"): False,
        ("close", "forbidden"): False,
    }
    # The user model's replies are usage rows of their own, named so, beside the agent's.
    with store.engine.connect() as conn:
        rows = conn.execute(select(usage.c.stop_reason, usage.c.model).where(usage.c.run_id == run.id)).all()
    played = [model for reason, model in rows if reason == "simulated user"]
    assert len(played) == sum(o.user_turns + (1 if o.goal_met else 0) for o in outcomes.values())
    # The agent's rows name the model its server answered as (the script's chunks say "scripted").
    assert {model for reason, model in rows if reason != "simulated user"} == {"scripted"}
    assert played and set(played) != {"scripted"}

    # The page: each cell's badges as scripted, the simulated user's turns and its cost apart.
    expect(page.get_by_text("trajectory 1.00", exact=True)).to_have_count(1, timeout=LONG)
    expect(page.get_by_text("trajectory 0.00", exact=True)).to_have_count(1, timeout=LONG)
    expect(page.get_by_text("forbidden 0.00", exact=True)).to_have_count(1, timeout=LONG)
    for outcome in outcomes.values():
        goal = "goal met" if outcome.goal_met else "goal not met"
        words = f"simulated user: {outcome.user_turns} turns · {goal} · price unknown apart"
        expect(page.get_by_text(words, exact=True).first).to_be_visible(timeout=LONG)
    expect(page.get_by_text(re.compile(r"^Simulated users' model, counted apart: \d+ tokens"))).to_have_count(
        1
    )
    # A transcript: the user model's words as the user's turn, after the scripted tool call's result.
    trip = outcomes["trip"]
    page.locator('[class*="st-key-exp_row_trip"]').get_by_role("button", name="Transcript").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Tool search_flights not found").first.wait_for(timeout=LONG)
    if trip.user_turns:
        said = next(m.text for m in store.transcript(trip)[3:] if m.role == "user")
        assert said.split()[0] in dialog.inner_text()
