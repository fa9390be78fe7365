"""Limits from a file, for one person without the app's admin page: `budgets.toml` in the working
folder, or the file named by `YIEM_BUDGETS_FILE`, as `[[budgets]]` tables.

    [[budgets]]
    period = "month"      # "day" or "month" (UTC)
    limit_usd = 20
    provider = "openai"   # optional: that provider's requests only
"""

from __future__ import annotations

import os
import tomllib
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from yiem.budgets._limits import Budget, BudgetError

BUDGETS_FILE_ENV = "YIEM_BUDGETS_FILE"
_FIELDS = {"period", "limit_usd", "provider"}


class BudgetConfigError(BudgetError):
    """The budgets file cannot be read or an entry in it is wrong; the message names the file and entry."""


def budgets_file_path(cwd: Path | None = None) -> Path | None:
    """`YIEM_BUDGETS_FILE`, else `budgets.toml` in the working folder, if present."""
    named = os.environ.get(BUDGETS_FILE_ENV)
    if named:
        return Path(named)
    found = (cwd or Path.cwd()) / "budgets.toml"
    return found if found.is_file() else None


def _entry(path: Path, number: int, raw: object) -> Budget:
    where = f"Budget {number} in {path}"
    if not isinstance(raw, dict):
        raise BudgetConfigError(f"{where} is not a table: write it under a [[budgets]] line.")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise BudgetConfigError(
            f"{where} has {', '.join(unknown)}, which a limit does not take: "
            "use period, limit_usd and provider."
        )
    if raw.get("period") not in ("day", "month"):
        raise BudgetConfigError(f'{where}: period must be "day" or "month" (UTC), not {raw.get("period")!r}.')
    limit = raw.get("limit_usd")
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        raise BudgetConfigError(f"{where}: limit_usd must be a number of dollars above 0, not {limit!r}.")
    provider = raw.get("provider", "")
    if not isinstance(provider, str):
        raise BudgetConfigError(f"{where}: provider must be a provider's name in quotes, not {provider!r}.")
    try:
        return Budget(
            id=f"config:{number}",
            provider=provider.strip(),
            period=raw["period"],
            limit_usd=float(limit),
            source="config",
        )
    except ValidationError as error:  # the checks above cover every field; kept in words regardless
        raise BudgetConfigError(f"{where} is wrong: {error.errors()[0]['msg']}.") from error


def load_budgets_file(path: Path) -> list[Budget]:
    """Each person's limits from `path`; `BudgetConfigError` says what to fix."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BudgetConfigError(f"Cannot read the budgets file {path}: {error.strerror or error}.") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise BudgetConfigError(f"The budgets file {path} is not valid TOML: {error}.") from None
    entries = data.get("budgets", [])
    if not isinstance(entries, list):
        raise BudgetConfigError(f"In {path}, write each limit as a [[budgets]] table (two brackets).")
    return [_entry(path, number, raw) for number, raw in enumerate(entries, start=1)]


@cache
def _cached(path: Path, mtime_ns: int) -> tuple[Budget, ...]:
    return tuple(load_budgets_file(path))


def configured_budgets(cwd: Path | None = None) -> list[Budget]:
    """The budgets file's limits (none without a file), re-read whenever the file changes."""
    path = budgets_file_path(cwd)
    if path is None:
        return []
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as error:
        raise BudgetConfigError(
            f"{BUDGETS_FILE_ENV} names {path}, which cannot be read: {error.strerror or error}."
        ) from None
    return list(_cached(path, mtime))
