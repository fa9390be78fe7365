"""Compare: one prompt to several models side by side, their figures, blind votes and a leaderboard."""

from yiem.compare._columns import (
    MAX_COLUMNS,
    MIN_COLUMNS,
    ColumnFigures,
    CompareError,
    blind_order,
    cheapest_and_fastest,
    check_columns,
)
from yiem.compare._ratings import Leaderboard, ModelRating, fit_strengths, leaderboard, to_elo, win_matrix
from yiem.compare._runner import ColumnState, ColumnStatus, Comparison, Connector, connect_column
from yiem.compare._storage import (
    ComparisonNotFoundError,
    ComparisonRecord,
    ComparisonStore,
    SavedColumn,
)
from yiem.compare._suggestions import FIRST_RUN, SUGGESTED_PROMPTS, example_columns
from yiem.compare._votes import VERDICTS, Verdict, Vote, VoteOwnerError, VoteStore
from yiem.store import COMPARE_SOURCE

__all__ = [
    "COMPARE_SOURCE",
    "FIRST_RUN",
    "MAX_COLUMNS",
    "MIN_COLUMNS",
    "SUGGESTED_PROMPTS",
    "VERDICTS",
    "ColumnFigures",
    "ColumnState",
    "ColumnStatus",
    "CompareError",
    "Comparison",
    "ComparisonNotFoundError",
    "ComparisonRecord",
    "ComparisonStore",
    "Connector",
    "Leaderboard",
    "ModelRating",
    "SavedColumn",
    "Verdict",
    "Vote",
    "VoteOwnerError",
    "VoteStore",
    "blind_order",
    "cheapest_and_fastest",
    "check_columns",
    "connect_column",
    "example_columns",
    "fit_strengths",
    "leaderboard",
    "to_elo",
    "win_matrix",
]
