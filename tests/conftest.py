"""Loads every fixture module in tests/fixtures/, so each area keeps its fixtures in its own file."""

from pathlib import Path

import pytest

# Fixture modules import each other; marking them first keeps their asserts rewritten either way.
pytest.register_assert_rewrite("tests.fixtures")

pytest_plugins = sorted(
    f"tests.fixtures.{path.stem}"
    for path in (Path(__file__).parent / "fixtures").glob("*.py")
    if path.stem != "__init__"
)
