"""How the Costs page writes its figures: the rules of yiem.amounts, a dash for a missing one."""

from __future__ import annotations

from yiem import amounts, costs


def dollars(value: float | None) -> str:
    return amounts.dollars(value, "—")


def tokens(value: int) -> str:
    return amounts.tokens(value)


def seconds(ms: float | None) -> str:
    return amounts.duration(ms)


def percent(share: float | None) -> str:
    return "—" if share is None else f"{share:.1%}"


def delta(change: costs.HeadlineChange, metric: str) -> str | None:
    """The change against the previous period, or None when there is nothing to compare with."""
    ratio = change.change(metric)
    return None if ratio is None else f"{ratio:+.1%}"
