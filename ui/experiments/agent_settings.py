"""The agent-task parts of an experiment's setup: the model that plays the simulated users and their
most turns (Run tab), and the trajectory scorers' fields (Scorers tab)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from ui.model_form import max_tokens_input, model_fields
from ui.state import EXPERIMENT_WIDGET_PREFIX, init_widget
from yiem.amounts import dollars
from yiem.experiments import ExperimentDraft, ItemOutcome, ScorerError, Variant, scorers

TRAJECTORY_KINDS = {
    "tool_sequence": "Called these tools (trajectory)",
    "max_turns": "At most N model turns",
    "forbidden_tools": "Called no forbidden tool",
}
ORDERS = {
    "in_order": "In this order, other calls allowed between",
    "exact": "Exactly these calls, in this order",
    "any_order": "Each of them, in any order",
}
MATCHES = {
    "subset": "Arguments include these",
    "exact": "Arguments exactly these",
    "schema": "Arguments match a JSON Schema",
}


def draw_user_model(draft: ExperimentDraft) -> None:
    """Who plays the users of the items with a persona and a goal (any provider), and for how many turns."""
    simulated = sum(1 for item in draft.dataset.items if item.user is not None)
    k = f"{EXPERIMENT_WIDGET_PREFIX}user_model_"
    with st.expander(
        f"Simulated users ({simulated} of the items have one)",
        icon=":material/person:",
        expanded=simulated > 0,
    ):
        st.caption(
            "A second model plays the user of each item with a persona and a goal, until it says the goal "
            "is met or the turns run out. Its cost is counted apart from the variants'."
        )
        before = draft.user_model or Variant(name="simulated user", max_tokens=200)
        setup = model_fields(before, lambda name: k + name, ask_key=False)
        max_tokens = max_tokens_input(before.max_tokens, k + "max_tokens")
        turns = st.number_input(
            "Most user turns per conversation (every simulated-user item)",
            1,
            50,
            key=init_widget(k + "turns", draft.user_max_turns),
        )
        fields = {**setup.model_dump(), "name": "simulated user", "max_tokens": max_tokens}
        draft.user_model = Variant.model_validate(fields)
        draft.user_max_turns = int(turns)


def trajectory_fields(kind: str, k: str, old: dict[str, Any]) -> dict[str, Any]:
    """The widgets of one trajectory scorer kind; returns the arguments of its factory."""
    if kind == "max_turns":
        return {
            "limit": int(
                st.number_input(
                    "Most model turns", 1, 100, key=init_widget(k + "turns", old.get("max_turns", 3))
                )
            )
        }
    if kind == "forbidden_tools":
        text = st.text_input(
            "Tools it must not call (comma-separated; each item's forbidden tools count too)",
            key=init_widget(k + "forbidden", ", ".join(old.get("tools", []))),
        )
        return {"tools": [tool.strip() for tool in text.split(",") if tool.strip()]}
    lines = "\n".join(
        call["tool"] + (f" {json.dumps(call['arguments'])}" if call.get("arguments") is not None else "")
        for call in old.get("calls", [])
    )
    text = st.text_area(
        "Calls, one per line: a tool name, then its arguments as JSON if they matter, "
        'e.g. weather {"city": "Oslo"}',
        key=init_widget(k + "calls", lines),
    )
    a, b = st.columns(2)
    order = a.selectbox(
        "Order",
        list(ORDERS),
        format_func=ORDERS.__getitem__,
        key=init_widget(k + "order", old.get("order", "in_order")),
    )
    first = (old.get("calls") or [{}])[0]
    match = b.selectbox(
        "Arguments",
        list(MATCHES),
        format_func=MATCHES.__getitem__,
        key=init_widget(k + "match", first.get("match", "subset")),
    )
    calls: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        tool, _, raw = line.strip().partition(" ")
        if not tool:
            continue
        try:
            calls.append((tool, json.loads(raw), match) if raw.strip() else tool)
        except json.JSONDecodeError as error:
            raise ScorerError(
                f"Line {number}: the arguments of {tool} are not valid JSON: {error.msg}"
            ) from None
    if not calls:
        raise ScorerError("Name at least one tool call the agent should make.")
    return {"calls": calls, "order": order}


TRAJECTORY_FACTORIES: dict[str, Callable[..., Any]] = {
    "tool_sequence": lambda calls, **kw: scorers.tool_sequence(*calls, **kw),
    "max_turns": scorers.max_turns,
    "forbidden_tools": lambda tools, **kw: scorers.forbidden_tools(*tools, **kw),
}


def played_caption(outcome: ItemOutcome) -> str:
    """A simulated user's part of a cell: its turns, whether the goal was met, its model's own cost."""
    goal = "goal met" if outcome.goal_met else "goal not met"
    return f"simulated user: {outcome.user_turns} turns · {goal} · {dollars(outcome.user_cost)} apart"
