"""Bradley–Terry ratings: a published worked example, a hand-computed case, and the stored votes."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from yiem.compare import Vote, VoteStore, fit_strengths, leaderboard, to_elo, win_matrix
from yiem.store import create_store_engine


def test_wikipedia_worked_example() -> None:
    # Wikipedia, "Bradley–Terry model", section "Worked example of iterated procedure": four teams,
    # 22 games; row i holds i's wins over each column. The iteration there converges to
    # p = (0.640, 1.043, 0.660, 2.270) (geometric mean 1), i.e. exp of mean-zero log-strengths.
    wins = np.array([[0, 2, 0, 1], [3, 0, 5, 0], [0, 3, 0, 1], [4, 0, 3, 0]], dtype=float)
    strengths = np.exp(fit_strengths(wins, prior=0.0))
    assert strengths.round(3).tolist() == [0.640, 1.043, 0.660, 2.270]


def test_hand_computed_two_models_with_a_tie() -> None:
    # A beats B twice, B beats A once, one tie: A has 2.5 wins of 4, so P(A beats B) = 0.625 at the
    # maximum likelihood; theta_A - theta_B = ln(0.625 / 0.375) = ln(5/3), split around 0, and on
    # the Elo scale the gap is 400 * log10(5/3) = 88.74 points around 1000.
    votes = [
        Vote(left_model="A", right_model="B", verdict="left"),
        Vote(left_model="B", right_model="A", verdict="right"),
        Vote(left_model="B", right_model="A", verdict="left"),
        Vote(left_model="A", right_model="B", verdict="tie"),
    ]
    wins = win_matrix(votes, ["A", "B"])
    assert wins.tolist() == [[0.0, 2.5], [1.5, 0.0]]
    theta = fit_strengths(wins, prior=0.0)
    assert theta[0] - theta[1] == pytest.approx(math.log(5 / 3), abs=1e-6)
    elo = to_elo(theta)
    assert elo[0] == pytest.approx(1000 + 200 * math.log10(5 / 3), abs=1e-3)
    assert elo[1] == pytest.approx(1000 - 200 * math.log10(5 / 3), abs=1e-3)
    board = leaderboard(votes, rounds=50, prior=0.0)
    assert [row.model for row in board.ratings] == ["A", "B"]
    assert [row.votes for row in board.ratings] == [4, 4]
    top = board.ratings[0]
    assert top.low <= top.rating <= top.high
    assert board.win_rates == [[None, 0.625], [0.375, None]]


def test_a_model_that_never_lost_stays_finite_and_on_top() -> None:
    votes = [Vote(left_model="A", right_model="B", verdict="left")] * 5 + [
        Vote(left_model="B", right_model="C", verdict="both_bad")
    ] * 2
    board = leaderboard(votes, rounds=30)
    assert board.ratings[0].model == "A"
    assert all(math.isfinite(row.rating) and math.isfinite(row.high) for row in board.ratings)
    assert board.win_rates[1][2] == 0.5  # both bad counts as a tie


def test_votes_are_stored_and_filtered(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'votes.db'}")
    store = VoteStore(engine)
    old = datetime.now(UTC) - timedelta(days=10)
    store.add(
        Vote(left_model="a/x", right_model="b/y", verdict="left", voter="ann", prompt="hi", created=old)
    )
    store.add(
        Vote(left_model="b/y", right_model="a/x", verdict="both_bad", voter="bob", prompt="yo", tag="t")
    )
    assert [(v.voter, v.verdict, v.prompt) for v in store.votes()] == [
        ("ann", "left", "hi"),
        ("bob", "both_bad", "yo"),
    ]
    recent = store.votes(since=datetime.now(UTC) - timedelta(days=1))
    assert [v.voter for v in recent] == ["bob"]
    assert [v.voter for v in store.votes(tag="t")] == ["bob"]
    assert store.votes()[0].created == pytest.approx(old, abs=timedelta(milliseconds=1))
    engine.dispose()
