"""The PostgreSQL fixture fails the run, never skips it, when a real part is missing."""

from pathlib import Path

import pytest

from tests.fixtures.postgres import postgres_bin_dir, require_postgres_user


def test_missing_server_binaries_fail_instead_of_skipping(tmp_path: Path) -> None:
    # Catch any outcome: a skip would otherwise leave this test skipped, not failed.
    with pytest.raises(BaseException) as raised:
        postgres_bin_dir(tmp_path)
    assert raised.type is pytest.fail.Exception
    assert "make setup-test" in str(raised.value)


def test_missing_postgres_user_fails_instead_of_skipping() -> None:
    with pytest.raises(BaseException) as raised:
        require_postgres_user("yiem-no-such-user")
    assert raised.type is pytest.fail.Exception
    assert "scripts/setup_postgres.sh" in str(raised.value)


def test_installed_binaries_are_found() -> None:
    assert (postgres_bin_dir() / "initdb").is_file()
    assert (postgres_bin_dir() / "pg_ctl").is_file()
