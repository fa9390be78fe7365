"""Backoff arithmetic and Retry-After parsing."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from yiem.providers._retry import RetryPolicy, retry_after_seconds


def test_exponential_backoff_without_jitter() -> None:
    policy = RetryPolicy(max_attempts=4, base_delay=0.5, jitter=0)
    assert [policy.delay(attempt) for attempt in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, None]


def test_backoff_is_capped_and_jitter_only_adds() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1, max_delay=4, jitter=0.1)
    delays = [policy.delay(attempt) for attempt in range(1, 10)]
    assert all(delay is not None and 1 <= delay <= 4.4 for delay in delays)


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds(httpx.Headers({"Retry-After": "3"})) == 3.0
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "250", "Retry-After": "9"})) == 0.25
    assert retry_after_seconds(httpx.Headers({"Retry-After": "Thu, 01 Jan 2026 12:00:05 GMT"}), now) == 5.0
    assert retry_after_seconds(httpx.Headers({"Retry-After": "Thu, 01 Jan 2026 11:00:00 GMT"}), now) == 0.0
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(httpx.Headers()) is None


def test_retry_after_wins_over_backoff_and_too_long_gives_up() -> None:
    policy = RetryPolicy(max_delay=10)
    assert policy.delay(1, httpx.Headers({"Retry-After": "4"})) == 4.0
    assert policy.delay(1, httpx.Headers({"Retry-After": "11"})) is None


def test_which_statuses_are_retried() -> None:
    policy = RetryPolicy()
    assert all(policy.should_retry_status(code) for code in (408, 429, 500, 502, 503, 529))
    assert not any(policy.should_retry_status(code) for code in (400, 401, 403, 404, 422))
