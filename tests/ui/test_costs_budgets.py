"""The Costs page's Budgets section in AppTest: the local user sets a limit and sees its burn-down."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from yiem.budgets import BudgetStore


def _texts(page: Any) -> str:
    return "\n".join(str(block.value) for block in page.markdown)


def test_setting_a_limit_stores_it_and_draws_its_burn_down(known_usage: Engine, costs_page: Any) -> None:
    page = costs_page.run()
    assert not page.exception, page.exception
    assert "No spending limit is set" in "\n".join(str(c.value) for c in page.caption)

    page.selectbox(key="budget_scope").select("The whole team")
    page.selectbox(key="budget_provider").select("openai")
    page.selectbox(key="budget_period").select("Per day (UTC)")
    page.number_input(key="budget_limit").set_value(0.5)
    page.button(key="FormSubmitter:budget_form-Set limit").click().run()

    assert not page.exception, page.exception
    [stored] = BudgetStore(known_usage).all()
    assert (stored.scope, stored.provider, stored.period, stored.limit_usd) == ("team", "openai", "day", 0.5)
    # The seeded rows are from October 2026, before today: nothing is spent in today's period.
    assert "**The team's daily limit for openai**: $0.0000 of $0.50 (0%)" in _texts(page)
    charts = [chart for chart in page.get("plotly_chart") if "burn_" in str(chart.proto.id)]
    assert len(charts) == 1

    page.button(key=f"remove_{stored.id}").click().run()
    assert not page.exception, page.exception
    assert BudgetStore(known_usage).all() == []
