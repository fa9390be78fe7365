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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files that drive a browser run first, then the rest by size: with `--dist loadfile` the last
    file a worker takes decides when the run ends, and a one-test browser file takes up to a minute."""
    tests_in_file: dict[Path, int] = {}
    in_browser: set[Path] = set()
    for item in items:
        tests_in_file[item.path] = tests_in_file.get(item.path, 0) + 1
        if item.get_closest_marker("browser"):
            in_browser.add(item.path)
    # Stable: a file's tests keep their order, so its module fixtures start once.
    items.sort(key=lambda item: (item.path not in in_browser, -tests_in_file[item.path], str(item.path)))
