"""Spending limits per provider and overall, per day and month, per person or for the team; checked
and reserved before every request so replicas sharing a database never overspend."""

from yiem.budgets._burn import BurnDown, burn_down
from yiem.budgets._estimate import (
    CHARS_PER_TOKEN,
    input_tokens,
    message_text,
    request_cost,
    tokens_by_characters,
)
from yiem.budgets._guard import BudgetedLlm, BudgetGuard
from yiem.budgets._ledger import PRICE_UNKNOWN, WARN_SHARE, BudgetCheck, Ledger, Standing, Verdict
from yiem.budgets._limits import Budget, BudgetError, BudgetStore, Period, Scope, period_range

__all__ = [
    "CHARS_PER_TOKEN",
    "PRICE_UNKNOWN",
    "WARN_SHARE",
    "Budget",
    "BudgetCheck",
    "BudgetError",
    "BudgetGuard",
    "BudgetStore",
    "BudgetedLlm",
    "BurnDown",
    "Ledger",
    "Period",
    "Scope",
    "Standing",
    "Verdict",
    "burn_down",
    "input_tokens",
    "message_text",
    "period_range",
    "request_cost",
    "tokens_by_characters",
]
