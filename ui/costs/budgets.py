"""The Costs page's Budgets section: each limit's burn-down over its period; an admin sets them here."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from sqlalchemy import Engine

from yiem import costs
from yiem.amounts import DOLLARS_COLUMN, dollars
from yiem.budgets import (
    Budget,
    BudgetConfigError,
    BudgetError,
    BudgetStore,
    BurnDown,
    burn_down,
    spend_by_person,
)
from yiem.identity import Owner

ALL_PROVIDERS = "All providers"
SCOPES = {"Each person": "person", "The whole team": "team"}
PERIODS = {"Per day (UTC)": "day", "Per month (UTC)": "month"}


def _visible(limits: list[Budget], person: Owner) -> list[Budget]:
    # An admin sees every limit; anyone else the ones their own requests count against.
    return [b for b in limits if person.is_admin or b.applies_to(person.id, b.provider)]


def _chart(burned: BurnDown) -> go.Figure:
    limit = burned.budget.limit_usd
    figure = go.Figure()
    figure.add_scatter(x=burned.times, y=burned.cumulative, name="Spent", mode="lines", line_shape="hv")
    figure.add_scatter(
        x=[burned.start, burned.end], y=[limit, limit], name="Limit", mode="lines", line={"dash": "dash"}
    )
    figure.update_layout(
        height=220,
        margin={"t": 10, "b": 10},
        yaxis_tickprefix="$",
        yaxis_range=[0, max(limit, burned.spent) * 1.1],
        xaxis_range=[burned.start, burned.end],
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
    )
    return figure


def _draw_people(engine: Engine, budget: Budget) -> None:
    # An admin's view of a team or each-person limit: the team's total this period, split by person.
    spent = spend_by_person(engine, budget)
    total = sum(dollars for _who, dollars in spent)
    people = f"{len(spent)} {'person' if len(spent) == 1 else 'people'}"
    st.caption(f"The team this {budget.period}: {dollars(total)} spent by {people}.")
    if not spent:
        return
    each = budget.scope == "person"
    frame = pd.DataFrame(
        [
            {
                "Person": who,
                "Spent": dollars,
                "Share": dollars / budget.limit_usd if each else (dollars / total if total else 0.0),
            }
            for who, dollars in spent
        ]
    )
    share_help = "Of this person's limit" if each else "Of the team's spend"
    st.dataframe(
        frame,
        hide_index=True,
        key=f"people_{budget.id}",
        column_config={
            "Spent": st.column_config.NumberColumn("Spent", format=DOLLARS_COLUMN),
            "Share": st.column_config.NumberColumn("Share", format="percent", help=share_help),
        },
    )


def _draw_one(engine: Engine, budget: Budget, person: Owner, limits: BudgetStore) -> None:
    burned = burn_down(engine, budget, budget.owner or person.id)
    share = burned.spent / budget.limit_usd
    whose = "" if budget.scope == "team" or budget.owner else " (yours)"
    where = " · from the budgets file" if budget.source == "config" else ""
    st.markdown(
        f"**{budget.label}{whose}**: {dollars(burned.spent)} of {dollars(budget.limit_usd)} "
        f"({share:.0%}){where}"
    )
    st.plotly_chart(_chart(burned), key=f"burn_{budget.id}")
    if person.is_admin and person.signed_in and not budget.owner:
        _draw_people(engine, budget)
    if (
        person.is_admin
        and budget.source == "app"
        and st.button("Remove this limit", key=f"remove_{budget.id}", icon=":material/delete:")
    ):
        limits.remove(person, budget.id)
        st.rerun()


def _draw_form(engine: Engine, person: Owner, limits: BudgetStore) -> None:
    providers = sorted({provider for provider, _model in costs.filter_options(engine, None)})
    with st.form("budget_form", clear_on_submit=False):
        st.markdown("**Set a limit**")
        a, b, c = st.columns(3)
        scope = a.selectbox("Whose spend", list(SCOPES), key="budget_scope")
        provider = b.selectbox(
            "Provider", [ALL_PROVIDERS, *providers], key="budget_provider", accept_new_options=True
        )
        period = c.selectbox("Period", list(PERIODS), index=1, key="budget_period")
        limit = st.number_input(
            "Limit ($)", min_value=0.0, value=10.0, step=1.0, format="%.2f", key="budget_limit"
        )
        # With sign-in on, a limit can be one person's (their id is their sign-in email).
        who = ""
        if person.signed_in:
            who = st.text_input("One person only (email; blank: each person)", key="budget_owner")
        if not st.form_submit_button("Set limit", icon=":material/savings:"):
            return
    if limit <= 0:
        st.error("A limit must be more than $0; remove the limit instead to lift it.")
        return
    budget = Budget(
        scope=SCOPES[scope],  # type: ignore[arg-type]
        owner=who.strip().casefold() if SCOPES[scope] == "person" else "",
        provider="" if provider in (None, ALL_PROVIDERS) else str(provider),
        period=PERIODS[period],  # type: ignore[arg-type]
        limit_usd=float(limit),
    )
    try:
        limits.set(person, budget)
    except BudgetError as error:
        st.error(str(error))
        return
    st.rerun()


def draw_budgets(engine: Engine, person: Owner) -> None:
    """Each spending limit with its burn-down; an admin (the local user without sign-in) sets them here."""
    limits = BudgetStore(engine)
    config_error: BudgetConfigError | None = None
    try:
        everyone = limits.all()
    except BudgetConfigError as error:  # every request is refused meanwhile: say why, and show the rest
        config_error, everyone = error, limits.stored()
    shown = _visible(everyone, person)
    with st.expander(
        f"Budgets ({len(shown)})" if shown else "Budgets",
        icon=":material/savings:",
        expanded=bool(config_error),
    ):
        if config_error is not None:
            st.error(f"{config_error} Until it is fixed, every request is refused.")
        if not shown:
            how = (
                "Set one below, or in a budgets.toml file (see the README)"
                if person.is_admin
                else "Only an admin can set one"
            )
            st.caption(
                f"No spending limit is set. {how}: then a send, comparison or experiment run that would "
                "cross it is refused before any request is made."
            )
        for budget in shown:
            _draw_one(engine, budget, person, limits)
        if person.is_admin:
            _draw_form(engine, person, limits)
        elif shown:
            st.caption("Only an admin can set or change limits.")
