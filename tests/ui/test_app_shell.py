"""The app shell: what a person sees when the app cannot start its session."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def test_an_unopenable_database_is_explained_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the database folder should be")
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{blocker / 'yiem.db'}")
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert len(at.error) == 1
    assert "The conversation database cannot be opened" in at.error[0].value
    assert "YIEM_DATABASE_URL" in at.caption[0].value
    assert not at.chat_input  # no page is drawn that would take input it cannot save
