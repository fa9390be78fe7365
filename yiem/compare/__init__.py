"""Compare: one prompt to several models side by side, their figures, blind votes and a leaderboard."""

from yiem.compare._columns import (
    MAX_COLUMNS,
    MIN_COLUMNS,
    ColumnFigures,
    ColumnSpec,
    CompareError,
    cheapest_and_fastest,
    check_columns,
)
from yiem.compare._runner import ColumnState, ColumnStatus, Comparison, Connector, connect_column

__all__ = [
    "MAX_COLUMNS",
    "MIN_COLUMNS",
    "ColumnFigures",
    "ColumnSpec",
    "ColumnState",
    "ColumnStatus",
    "CompareError",
    "Comparison",
    "Connector",
    "cheapest_and_fastest",
    "check_columns",
    "connect_column",
]
