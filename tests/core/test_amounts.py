"""Money, tokens and durations as words: the one set of rules every page and export uses."""

import re
from pathlib import Path

from yiem.amounts import (
    DOLLARS_COLUMN,
    PRICE_COLUMN,
    PRICE_UNKNOWN,
    csv_dollars,
    dollars,
    duration,
    elapsed,
    reply_words,
    stream_words,
    tokens,
)

ROOT = Path(__file__).resolve().parents[2]


def test_dollars_are_cents_from_a_dollar_four_decimals_from_a_cent_and_six_below() -> None:
    assert dollars(1234.5) == "$1,234.50"
    assert dollars(1.005) == "$1.01"  # halves round up, as on an invoice
    assert dollars(0.01125) == "$0.0113"  # float noise (0.011249999…) cut before rounding
    assert dollars(0.000123) == "$0.000123"
    assert dollars(0.0) == "$0.0000"
    assert dollars(-2.5) == "$-2.50"


def test_an_unknown_price_is_never_zero_dollars() -> None:
    assert dollars(None) == PRICE_UNKNOWN == "price unknown"
    assert dollars(None, "—") == "—"
    assert csv_dollars(0.01125) == "0.011250"


def test_tokens_are_exact_below_ten_thousand_then_thousands_then_millions() -> None:
    assert [tokens(n) for n in (0, 9_999, 10_000, 12_345, 999_949)] == [
        "0",
        "9,999",
        "10.0k",
        "12.3k",
        "999.9k",
    ]
    assert tokens(999_999) == "1.0M"  # never "1000.0k"
    assert tokens(1_260_000) == "1.3M"
    assert tokens(12_345_678_901) == "12,345.7M"


def test_durations_are_milliseconds_then_seconds_then_minutes() -> None:
    assert duration(None) == "—" and duration(None, "…") == "…"
    assert [duration(ms) for ms in (17.4, 999.4, 1000, 1750, 59_994)] == [
        "17 ms",
        "999 ms",
        "1.00 s",
        "1.75 s",
        "59.99 s",
    ]
    assert duration(59_996) == "1 min 0 s"
    assert duration(125_400) == "2 min 5 s"


def test_a_reply_reads_tokens_then_money_then_time_and_a_stream_adds_its_speed() -> None:
    assert reply_words(12_345, 67, 8, 0.0123, 2500) == "12.3k in · 67 out · 8 cached · $0.0123 · 2.50 s"
    assert reply_words(0, 0, 0, None, None) == "0 in · 0 out · 0 cached · price unknown"
    assert stream_words(400, 52.04) == "TTFT 400 ms · 52.0 tok/s"
    assert stream_words(None, None) == "TTFT – · – tok/s"


def test_a_ticking_clock_reads_whole_seconds_then_minutes() -> None:
    assert [elapsed(s) for s in (0.4, 12.4, 59.4)] == ["0 s", "12 s", "59 s"]
    assert elapsed(59.6) == "1 min 0 s" == duration(59_996)
    assert elapsed(125.4) == "2 min 5 s"


def test_no_page_or_service_writes_dollars_tokens_or_durations_by_hand() -> None:
    """Table columns take DOLLARS_COLUMN or PRICE_COLUMN; counts of tokens go through `tokens`,
    durations through `duration` or `elapsed`."""
    assert (DOLLARS_COLUMN, PRICE_COLUMN) == ("$%.4f", "$%.3f")
    by_hand = re.compile(r"\$%\.\d+f|:,\}\s*tokens\b|:\.\df\}\s*(?:ms|s|min)\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("yiem", "ui")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "amounts.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if by_hand.search(line)
    ]
    assert found == []
