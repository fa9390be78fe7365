"""How the Costs page writes its figures: dollars as on an invoice, tokens that fit a card."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from yiem import costs


def dollars(value: float | None) -> str:
    """Cents from $1 up, hundredths of a cent below; halves round up, as on an invoice."""
    if value is None:
        return "—"
    # Sums of float costs carry noise (0.01125 may be 0.011249999…): cut it before rounding.
    exact = Decimal(f"{value:.10f}")
    step = Decimal("0.01") if abs(exact) >= 1 else Decimal("0.0001")
    return f"${exact.quantize(step, rounding=ROUND_HALF_UP):,}"


def tokens(value: int) -> str:
    """Exact up to a million; above, millions with one decimal, so the figure fits its card."""
    return f"{value / 1e6:,.1f}M" if value >= 1_000_000 else f"{value:,}"


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def percent(share: float | None) -> str:
    return "—" if share is None else f"{share:.1%}"


def delta(change: costs.HeadlineChange, metric: str) -> str | None:
    """The change against the previous period, or None when there is nothing to compare with."""
    ratio = change.change(metric)
    return None if ratio is None else f"{ratio:+.1%}"
