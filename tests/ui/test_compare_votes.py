"""The Compare page's blind pairs and leaderboard under AppTest, its columns on a scripted loopback server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.compare import compare_page, scripted_columns, streamed_reply
from tests.scripted_http import ScriptedServer
from yiem.compare import Comparison, Vote, VoteStore
from yiem.store import create_store_engine


@pytest.mark.timeout(600)  # 16 sends, each a page run: minutes on a loaded 2-core machine
def test_each_blind_pair_is_shown_in_a_random_order(db_url: str, scripted_server: ScriptedServer) -> None:
    # 16 pairs: were the order kept, every one would read pirate, formal; shuffled, both orders show
    # but for a chance of 1 in 32768.
    rounds = 16
    scripted_server.script(*[streamed_reply("Ahoy") for _ in range(2 * rounds)])
    at = compare_page(timeout=120)  # the leaderboard's 200 bootstrap fits, on a busy machine
    at.session_state["compare_specs"] = scripted_columns(scripted_server, "pirate", "formal")
    at.run()
    at.toggle(key="cmp_blind").set_value(True).run()
    orders = set()
    for _ in range(rounds):
        at.chat_input(key="cmp_prompt").set_value("Say hello.").run()
        assert not at.exception, at.exception
        comparison: Comparison = at.session_state["compare_run"]
        assert comparison.wait(timeout=30)
        orders.add(tuple(column.spec.model_id for column in comparison.columns))
    assert orders == {("pirate", "formal"), ("formal", "pirate")}


def _board(at: AppTest) -> dict[str, int]:
    """The leaderboard's models and their vote counts ({} when it says there are none)."""
    tables = [d.value for d in at.dataframe if "Rating" in d.value.columns]
    if not tables:
        assert any("No votes yet" in str(c.value) for c in at.caption)
        return {}
    (table,) = tables
    return dict(zip(table["Model"], table["Votes"], strict=True))


def test_the_leaderboard_filters_by_period_and_tag(db_url: str) -> None:
    votes = VoteStore(create_store_engine(db_url))
    old = datetime.now(UTC) - timedelta(days=40)
    votes.add(Vote(left_model="a/x", right_model="b/y", verdict="left", tag="spring", created=old))
    votes.add(Vote(left_model="a/x", right_model="c/z", verdict="tie", tag="team"))
    votes.add(Vote(left_model="b/y", right_model="c/z", verdict="right", tag="solo"))
    at = compare_page(timeout=120)  # the leaderboard's 200 bootstrap fits, on a busy machine
    at.run()
    assert not at.exception, at.exception
    assert _board(at) == {"c/z": 2, "a/x": 2, "b/y": 2}
    at.selectbox(key="cmp_period").select("Last 30 days").run()
    assert _board(at) == {"c/z": 2, "a/x": 1, "b/y": 1}
    at.text_input(key="cmp_board_tag").set_value("team").run()
    board: Any = _board(at)
    assert board == {"a/x": 1, "c/z": 1}
    at.text_input(key="cmp_board_tag").set_value("spring").run()
    assert _board(at) == {}  # its one vote is older than 30 days
    at.selectbox(key="cmp_period").select("All time").run()
    assert _board(at) == {"a/x": 1, "b/y": 1}
