"""Spending limits per provider and overall, per day and month, per person or for the team; checked
and reserved before every request so replicas sharing a database never overspend."""

from yiem.budgets._burn import BurnDown, burn_down, spend_by_person
from yiem.budgets._config import (
    BUDGETS_FILE_ENV,
    BudgetConfigError,
    budgets_file_path,
    configured_budgets,
    load_budgets_file,
)
from yiem.budgets._estimate import (
    CHARS_PER_TOKEN,
    input_tokens,
    message_text,
    request_cost,
    tokens_by_characters,
)
from yiem.budgets._guard import BudgetedLlm, BudgetGuard
from yiem.budgets._ledger import PRICE_UNKNOWN, WARN_SHARE, BudgetCheck, Ledger, Standing, Verdict
from yiem.budgets._limits import Budget, BudgetError, Period, Scope, period_range
from yiem.budgets._store import BudgetStore

__all__ = [
    "BUDGETS_FILE_ENV",
    "CHARS_PER_TOKEN",
    "PRICE_UNKNOWN",
    "WARN_SHARE",
    "Budget",
    "BudgetCheck",
    "BudgetConfigError",
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
    "budgets_file_path",
    "burn_down",
    "configured_budgets",
    "input_tokens",
    "load_budgets_file",
    "message_text",
    "period_range",
    "request_cost",
    "spend_by_person",
    "tokens_by_characters",
]
