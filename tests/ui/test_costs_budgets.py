"""The Costs page's Budgets section in AppTest: the local user sets a limit and sees its burn-down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from yiem.budgets import BUDGETS_FILE_ENV, BudgetStore


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
    assert "**The team's daily limit for openai**: $0.0000 of $0.5000 (0%)" in _texts(page)
    charts = [chart for chart in page.get("plotly_chart") if "burn_" in str(chart.proto.id)]
    assert len(charts) == 1

    page.button(key=f"remove_{stored.id}").click().run()
    assert not page.exception, page.exception
    assert BudgetStore(known_usage).all() == []


def test_with_no_usage_the_section_says_how_to_set_a_limit_and_takes_one(
    any_store_url: str, costs_page: Any
) -> None:
    page = costs_page.run()
    assert not page.exception, page.exception
    assert "No usage recorded yet" in "\n".join(str(i.value) for i in page.info)
    captions = "\n".join(str(c.value) for c in page.caption)
    assert "No spending limit is set. Set one below, or in a budgets.toml file" in captions
    assert not [chart for chart in page.get("plotly_chart") if "burn_" in str(chart.proto.id)]

    page.number_input(key="budget_limit").set_value(2.0)
    page.button(key="FormSubmitter:budget_form-Set limit").click().run()
    assert not page.exception, page.exception
    assert "**Each person's monthly limit (yours)**: $0.0000 of $2.00 (0%)" in _texts(page)


@pytest.fixture
def budgets_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The budgets file the app reads in this test (written by the test)."""
    path = tmp_path / "budgets.toml"
    monkeypatch.setenv(BUDGETS_FILE_ENV, str(path))
    return path


def test_a_wrong_budgets_file_is_said_on_the_costs_page(
    known_usage: Engine, costs_page: Any, budgets_file: Path
) -> None:
    budgets_file.write_text('[[budgets]]\nperiod = "week"\nlimit_usd = 1\n')
    page = costs_page.run()
    assert not page.exception, page.exception
    [error] = page.error
    assert str(error.value) == (
        f'Budget 1 in {budgets_file}: period must be "day" or "month" (UTC), not \'week\'. '
        "Until it is fixed, every request is refused."
    )


def test_a_limit_from_the_budgets_file_is_drawn_without_a_remove_button(
    known_usage: Engine, costs_page: Any, budgets_file: Path
) -> None:
    budgets_file.write_text('[[budgets]]\nperiod = "day"\nlimit_usd = 3\n')
    page = costs_page.run()
    assert not page.exception, page.exception
    assert "**Each person's daily limit (yours)**: $0.0000 of $3.00 (0%) · from the budgets file" in _texts(
        page
    )
    assert not [b for b in page.button if str(b.key).startswith("remove_")]
