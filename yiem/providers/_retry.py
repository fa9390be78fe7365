"""When and how long to wait before trying a failed request again."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
from pydantic import BaseModel, ConfigDict

# 408 request timeout, 409 lock conflict, 429 rate limit, 5xx server trouble (529 Anthropic overload).
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class RetryPolicy(BaseModel):
    """Exponential backoff (`base_delay` × 2ⁿ, with jitter) that honours `Retry-After`.

    `max_attempts` counts every try, the first included. A server asking to wait longer than
    `max_delay` seconds ends the retries at once rather than blocking the caller.
    """

    model_config = ConfigDict(frozen=True)

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.1

    def should_retry_status(self, status_code: int) -> bool:
        """True for statuses worth another try."""
        return status_code in RETRYABLE_STATUS

    def delay(self, attempt: int, headers: httpx.Headers | None = None) -> float | None:
        """Seconds to wait after failed try number `attempt` (1-based); None means give up."""
        if attempt >= self.max_attempts:
            return None
        asked = retry_after_seconds(headers) if headers is not None else None
        if asked is not None:
            return asked if asked <= self.max_delay else None
        backoff = min(self.base_delay * float(2 ** (attempt - 1)), self.max_delay)
        return backoff * (1 + random.uniform(0, self.jitter))


def retry_after_seconds(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """What `retry-after-ms` or `Retry-After` (seconds or an HTTP date) asks for, in seconds."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
