"""Limits from the budgets file (`budgets.toml` or `YIEM_BUDGETS_FILE`) hold like the admin's; a wrong
file says in one sentence what to fix, and refuses requests meanwhile rather than letting them through."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.budgets.scripted import MODEL, scripted
from yiem.budgets import (
    BUDGETS_FILE_ENV,
    BudgetConfigError,
    BudgetGuard,
    BudgetStore,
    Ledger,
    configured_budgets,
)
from yiem.identity import LOCAL_OWNER
from yiem.llm import StreamDone
from yiem.store import create_store_engine
from yiem.types import AgentContext, UserMessage


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return create_store_engine(f"sqlite:///{tmp_path / 'config.db'}")


def _write(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "limits.toml"
    path.write_text(text)
    monkeypatch.setenv(BUDGETS_FILE_ENV, str(path))
    return path


def test_a_limit_in_the_budgets_file_refuses_like_one_set_in_the_app(
    any_store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_store_engine(any_store_url)  # on PostgreSQL the file's limit is locked by its id
    _write(tmp_path, '[[budgets]]\nperiod = "month"\nlimit_usd = 0.05\nprovider = "scripted"\n', monkeypatch)
    [limit] = BudgetStore(engine).all()
    assert (limit.source, limit.scope, limit.provider, limit.period, limit.limit_usd) == (
        "config",
        "person",
        "scripted",
        "month",
        0.05,
    )
    ledger = Ledger(engine)
    assert ledger.reserve(LOCAL_OWNER.id, "scripted", MODEL.id, 0.03).allowed
    refused = ledger.reserve(LOCAL_OWNER.id, "scripted", MODEL.id, 0.03)
    assert refused.verdict == "refuse"
    assert "your monthly limit for scripted of $0.0500" in refused.message
    assert ledger.reserve(LOCAL_OWNER.id, "openai", "gpt", 0.03).allowed  # another provider: not limited


def test_budgets_toml_in_the_working_folder_is_read(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BUDGETS_FILE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert configured_budgets() == []
    (tmp_path / "budgets.toml").write_text('[[budgets]]\nperiod = "day"\nlimit_usd = 2\n')
    [limit] = configured_budgets()
    assert (limit.period, limit.limit_usd, limit.provider) == ("day", 2.0, "")


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            '[[budgets]]\nperiod = "week"\nlimit_usd = 1\n',
            'Budget 1 in {path}: period must be "day" or "month"',
        ),
        ('[[budgets]]\nperiod = "day"\nlimit_usd = -1\n', "limit_usd must be a number of dollars above 0"),
        ('[[budgets]]\nperiod = "day"\nlimit_usd = "5"\n', "limit_usd must be a number of dollars above 0"),
        (
            '[[budgets]]\nperiod = "day"\nlimit_usd = 1\n[[budgets]]\nperiod = "day"\nlimit = 3\n',
            "Budget 2 in {path} has limit, which a limit does not take: use period, limit_usd and provider.",
        ),
        ('[budgets]\nperiod = "day"\n', "In {path}, write each limit as a [[budgets]] table (two brackets)."),
        ("[[budgets]\n", "The budgets file {path} is not valid TOML"),
    ],
)
def test_a_wrong_budgets_file_says_what_to_fix_and_refuses_requests(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, sentence: str
) -> None:
    path = _write(tmp_path, text, monkeypatch)
    with pytest.raises(BudgetConfigError) as raised:
        configured_budgets()
    assert sentence.format(path=path) in str(raised.value)

    llm = scripted(1)
    context = AgentContext(system_prompt="", messages=[UserMessage.from_text("hello")])
    [done] = list(BudgetGuard(engine, LOCAL_OWNER.id).wrap(llm).stream(MODEL, context))
    assert isinstance(done, StreamDone)
    assert llm.requests == []  # never sent
    assert done.message.error_message == f"Not sent: {raised.value}"


def test_a_named_budgets_file_that_is_missing_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BUDGETS_FILE_ENV, str(tmp_path / "nowhere.toml"))
    with pytest.raises(
        BudgetConfigError, match=f"{BUDGETS_FILE_ENV} names .*nowhere.toml, which cannot be read"
    ):
        configured_budgets()
