"""Blind votes (four buttons, names revealed after) and the leaderboard with its win-rate heatmap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import plotly.graph_objects as go
import streamlit as st

from ui.state import COMPARE_VOTED
from yiem.compare import Comparison, Verdict, Vote, VoteStore, leaderboard

_BUTTONS: list[tuple[Verdict, str]] = [
    ("left", "A is better"),
    ("right", "B is better"),
    ("tie", "Tie"),
    ("both_bad", "Both are bad"),
]
_PERIODS = {"All time": None, "Last 7 days": 7, "Last 30 days": 30}


def draw_vote(comparison: Comparison, store: VoteStore, prompt: str, tag: str, voter: str) -> None:
    """The four vote buttons under a finished blind pair; after the vote, which model was which.

    `voter`: who votes, as the page names the signed-in person (the store also keeps their id)."""
    left, right = comparison.columns[0], comparison.columns[1]
    voted: str | None = COMPARE_VOTED.get()
    if voted is None:
        if any(column.status != "done" for column in (left, right)):
            st.caption("Both columns must finish before you vote.")
            return
        st.write("Which answer is better?")
        for box, (verdict, label) in zip(st.columns(len(_BUTTONS)), _BUTTONS, strict=True):
            if box.button(label, key=f"cmp_vote_{verdict}", use_container_width=True):
                store.add(
                    Vote(
                        left_model=left.spec.label,
                        right_model=right.spec.label,
                        verdict=verdict,
                        voter=voter,
                        prompt=prompt,
                        tag=tag,
                    )
                )
                COMPARE_VOTED.set(verdict)
                st.rerun()
        return
    st.success(f"Vote recorded. A was {left.spec.label}; B was {right.spec.label}.")


def draw_leaderboard(store: VoteStore) -> None:
    """Ratings with their 95% intervals and vote counts, then the win-rate matrix as a heatmap."""
    st.header("Leaderboard")
    period_box, tag_box = st.columns(2)
    period = period_box.selectbox("Period", list(_PERIODS), key="cmp_period")
    tag = tag_box.text_input("Tag", key="cmp_board_tag", placeholder="all tags")
    days = _PERIODS[period]
    since = datetime.now(UTC) - timedelta(days=days) if days else None
    votes = store.votes(since=since, tag=tag.strip() or None)
    if not votes:
        st.caption("No votes yet: turn on blind mode, send a prompt and vote.")
        return
    board = leaderboard(votes)
    st.dataframe(
        [
            {
                "Model": row.model,
                "Rating": round(row.rating),
                "95% interval": f"{row.low:.0f} – {row.high:.0f}",
                "Votes": row.votes,
            }
            for row in board.ratings
        ],
        hide_index=True,
        key="cmp_board",
    )
    st.caption(
        f"Bradley–Terry ratings from {len(votes)} votes (ties and 'both bad' count as half a win); "
        "intervals from 200 bootstrap resamples of the votes."
    )
    figure = go.Figure(
        go.Heatmap(
            z=board.win_rates,
            x=board.models,
            y=board.models,
            zmin=0,
            zmax=1,
            colorscale="RdBu",
            hovertemplate="%{y} beat %{x}: %{z:.0%}<extra></extra>",
        )
    )
    figure.update_layout(title="Win rate (row against column)", height=360, margin={"t": 40})
    st.plotly_chart(figure, key="cmp_heatmap")
