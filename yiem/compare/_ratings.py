"""The leaderboard: Bradley–Terry ratings fitted on the votes, on an Elo-like scale, with bootstrap intervals.

As LMArena does: P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)), ratings centred on 1000; a tie
(and "both bad", which prefers neither) counts as half a win each way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel
from scipy.optimize import minimize

from yiem.compare._votes import Vote

SCALE = 400.0
BASE = 10.0
INITIAL = 1000.0
# A faint prior (a Gaussian on the log-strengths) keeps a model that never lost finite: without it
# its maximum-likelihood strength is infinite. Small enough to leave ordinary fits unchanged.
DEFAULT_PRIOR = 1e-3


class ModelRating(BaseModel):
    """One model on the leaderboard: its rating, the rating's 95% interval, its number of votes."""

    model: str
    rating: float
    low: float
    high: float
    votes: int


class Leaderboard(BaseModel):
    """Ratings best first, and the win-rate matrix (`win_rates[i][j]`: i's share against j, None unplayed)."""

    ratings: list[ModelRating]
    models: list[str]
    win_rates: list[list[float | None]]


def win_matrix(votes: Sequence[Vote], models: Sequence[str]) -> NDArray[np.float64]:
    """`w[i, j]`: the wins of `models[i]` over `models[j]`, ties and "both bad" as half a win each."""
    index = {model: i for i, model in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for vote in votes:
        left, right = index[vote.left_model], index[vote.right_model]
        if vote.verdict == "left":
            wins[left, right] += 1
        elif vote.verdict == "right":
            wins[right, left] += 1
        else:
            wins[left, right] += 0.5
            wins[right, left] += 0.5
    return wins


def fit_strengths(wins: NDArray[np.float64], prior: float = DEFAULT_PRIOR) -> NDArray[np.float64]:
    """Bradley–Terry log-strengths (natural log, mean 0) maximising the likelihood of `wins`, by scipy."""
    size = wins.shape[0]

    def loss(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        diff = theta[:, None] - theta[None, :]
        # -log P(i beats j) = log(1 + exp(-(theta_i - theta_j))), stable for large differences.
        value = float(np.sum(wins * np.logaddexp(0.0, -diff))) + prior * float(theta @ theta) / 2
        lose = wins * (1.0 / (1.0 + np.exp(diff)))  # w_ij * P(j beats i)
        grad = -lose.sum(axis=1) + lose.sum(axis=0) + prior * theta
        return value, grad

    found = minimize(loss, np.zeros(size), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    theta: NDArray[np.float64] = found.x - found.x.mean()
    return theta


def to_elo(theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """Natural-log strengths on the Elo-like scale (400 points = 10:1 odds, centred on 1000)."""
    result: NDArray[np.float64] = INITIAL + theta * SCALE / math.log(BASE)
    return result


def leaderboard(
    votes: Sequence[Vote], rounds: int = 200, seed: int = 0, prior: float = DEFAULT_PRIOR
) -> Leaderboard:
    """Ratings with 95% intervals from `rounds` bootstrap resamples of the votes, and the win rates."""
    models = sorted({vote.left_model for vote in votes} | {vote.right_model for vote in votes})
    if not models:
        return Leaderboard(ratings=[], models=[], win_rates=[])
    wins = win_matrix(votes, models)
    ratings = to_elo(fit_strengths(wins, prior))
    rng = np.random.default_rng(seed)
    samples = np.empty((rounds, len(models)))
    for round_ in range(rounds):
        picked = rng.integers(0, len(votes), len(votes))
        samples[round_] = to_elo(fit_strengths(win_matrix([votes[i] for i in picked], models), prior))
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    counts = {model: 0 for model in models}
    for vote in votes:
        counts[vote.left_model] += 1
        counts[vote.right_model] += 1
    board = [
        ModelRating(
            model=model,
            rating=float(ratings[i]),
            low=float(low[i]),
            high=float(high[i]),
            votes=counts[model],
        )
        for i, model in enumerate(models)
    ]
    board.sort(key=lambda row: -row.rating)
    played = wins + wins.T
    rates: list[list[float | None]] = [
        [float(wins[i, j] / played[i, j]) if played[i, j] else None for j in range(len(models))]
        for i in range(len(models))
    ]
    return Leaderboard(ratings=board, models=models, win_rates=rates)
