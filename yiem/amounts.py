"""Money, tokens and durations as words: the one way every page, export and message writes them."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

PRICE_UNKNOWN = "price unknown"
"""An unknown price reads as such, never as $0 (the rule of yiem.types.LlmModel.cost_of)."""

DOLLARS_COLUMN = "$%.4f"
"""A table's column of dollars, kept as numbers so it sorts (Streamlit's printf-style column format):
four decimals, as `dollars` writes amounts between a cent and a dollar."""

PRICE_COLUMN = "$%.3f"
"""A table's column of prices per million tokens: three decimals, enough for $0.075 / 1M."""


def dollars(value: float | None, unknown: str = PRICE_UNKNOWN) -> str:
    """Cents from $1 up, four decimals from a cent (and for $0), six below; halves round up."""
    if value is None:
        return unknown
    # Sums of float costs carry noise (0.01125 may be 0.011249999…): cut it before rounding.
    exact = Decimal(f"{value:.10f}")
    size = abs(exact)
    places = "0.01" if size >= 1 else "0.0001" if size >= Decimal("0.01") or size == 0 else "0.000001"
    return f"${exact.quantize(Decimal(places), rounding=ROUND_HALF_UP):,}"


def csv_dollars(value: float) -> str:
    """Dollars as a CSV cell: unrounded to the millionth, no sign or separators, for spreadsheets."""
    return f"{value:.6f}"


def tokens(count: int) -> str:
    """Exact below 10,000; thousands (`12.3k`) and millions (`1.3M`) with one decimal above."""
    if count < 10_000:
        return f"{count:,}"
    if round(count / 1000, 1) < 1000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1e6:,.1f}M"


def duration(ms: float | None, unknown: str = "—") -> str:
    """Milliseconds below a second, seconds with two decimals below a minute, then minutes and seconds."""
    if ms is None:
        return unknown
    if ms < 1000:
        return f"{ms:,.0f} ms"
    if ms < 59_995:  # 59.995 s would round up to "60.00 s"
        return f"{ms / 1000:.2f} s"
    return elapsed(ms / 1000)


def elapsed(seconds: float) -> str:
    """Whole seconds, as a clock that ticks reads (a running tool, a wait, a time left, an age):
    `12 s`, then minutes and seconds as `duration` writes them (`2 min 5 s`)."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes:,} min {rest} s"


def reply_words(
    input_tokens: int, output_tokens: int, cached_tokens: int, cost: float | None, duration_ms: float | None
) -> str:
    """A reply's caption: `12.3k in · 67 out · 8 cached · $0.0123 · 2.50 s`, the same on every page."""
    parts = [f"{tokens(input_tokens)} in", f"{tokens(output_tokens)} out", f"{tokens(cached_tokens)} cached"]
    parts.append(dollars(cost))
    if duration_ms is not None:
        parts.append(duration(duration_ms))
    return " · ".join(parts)


def stream_words(first_token_ms: float | None, tokens_per_s: float | None) -> str:
    """How a streamed reply came: `TTFT 400 ms · 52.0 tok/s`, a dash for what is not known yet."""
    speed = "–" if tokens_per_s is None else f"{tokens_per_s:.1f}"
    return f"TTFT {duration(first_token_ms, '–')} · {speed} tok/s"
