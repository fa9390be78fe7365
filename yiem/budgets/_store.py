"""The limits kept in the store's `budgets` table, read together with the budgets file's."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, delete, insert, select, update

from yiem.budgets._config import configured_budgets
from yiem.budgets._limits import Budget, BudgetError, now_ms
from yiem.identity import Owner
from yiem.store import budgets


class BudgetStore:
    """The limits in the store, and the budgets file's; only an admin (or the one local user) changes
    the stored ones, anyone reads them.

    `configured` stands for the budgets file (e.g. the driver's, on a Ray worker); None reads the file.
    """

    def __init__(self, engine: Engine, configured: Sequence[Budget] | None = None) -> None:
        self.engine = engine
        self.configured = None if configured is None else list(configured)

    def from_config(self) -> list[Budget]:
        """The budgets file's limits; `BudgetConfigError` when it is wrong."""
        return configured_budgets() if self.configured is None else list(self.configured)

    def all(self) -> list[Budget]:
        """Every limit: the stored ones (team first, then by period and provider), then the file's."""
        return self.stored() + self.from_config()

    def stored(self) -> list[Budget]:
        """The limits set in the app, team ones first, then by period and provider."""
        b = budgets.c
        query = select(budgets).order_by(b.scope.desc(), b.owner, b.period, b.provider)
        with self.engine.connect() as conn:
            return [
                Budget(
                    id=r.id,
                    scope=r.scope,
                    owner=r.owner,
                    provider=r.provider,
                    period=r.period,
                    limit_usd=r.limit_usd,
                )
                for r in conn.execute(query)
            ]

    def applying(self, owner_id: str, provider: str) -> list[Budget]:
        """The limits a request of `owner_id` to `provider` counts against."""
        return [budget for budget in self.all() if budget.applies_to(owner_id, provider)]

    def set(self, who: Owner, budget: Budget) -> Budget:
        """Add `budget`, or change the limit of the one with the same scope, person, provider and period."""
        _require_admin(who)
        b = budgets.c
        same = (
            (b.scope == budget.scope)
            & (b.owner == budget.owner)
            & (b.provider == budget.provider)
            & (b.period == budget.period)
        )
        stamp = now_ms()
        with self.engine.begin() as conn:
            found = conn.execute(select(b.id).where(same)).scalar()
            if found is not None:
                conn.execute(
                    update(budgets).where(b.id == found).values(limit_usd=budget.limit_usd, updated_ms=stamp)
                )
                return budget.model_copy(update={"id": found})
            row = budget.model_dump(exclude={"source"})
            conn.execute(insert(budgets).values(**row, created_ms=stamp, updated_ms=stamp))
        return budget

    def remove(self, who: Owner, budget_id: str) -> None:
        """Delete a limit."""
        _require_admin(who)
        with self.engine.begin() as conn:
            conn.execute(delete(budgets).where(budgets.c.id == budget_id))


def _require_admin(who: Owner) -> None:
    if not who.is_admin:
        raise BudgetError("Only an admin can set spending limits; ask one to change this limit.")
