"""The README's tree, its code samples and docs/spec-map.md name only what exists in the code."""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SPEC_MAP = ROOT / "docs" / "spec-map.md"


def readme_tree_paths(readme: str) -> list[str]:
    """Every path the README's "Where things are" tree names, folders ending in "/".

    A line is names separated by single spaces, then (after two or more spaces) what they are.
    A line holding one folder is the parent of the more indented lines below it.
    """
    section = readme.split("## Where things are", 1)[1]
    block = section.split("```\n", 2)[1]
    paths: list[str] = []
    parents: list[tuple[int, str]] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split(" ")
        while parents and parents[-1][0] >= indent:
            parents.pop()
        parent = parents[-1][1] if parents else ""
        paths.extend(parent + name for name in names)
        folders = [name for name in names if name.endswith("/")]
        if len(names) == 1 and folders:
            parents.append((indent, parent + folders[0]))
    return paths


def test_the_tree_reader_follows_indentation() -> None:
    tree = "## Where things are\n```\na/  the a\n  b.py c/  two\n  d/\n    e.py\nf.py  last\n```\n"
    assert readme_tree_paths(tree) == ["a/", "a/b.py", "a/c/", "a/d/", "a/d/e.py", "f.py"]


def test_every_path_in_the_readme_tree_exists() -> None:
    paths = readme_tree_paths(README.read_text())
    assert len(paths) > 40
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert not missing, f"README's 'Where things are' names paths that do not exist: {missing}"
    folders = [path for path in paths if path.endswith("/")]
    assert all((ROOT / path).is_dir() for path in folders)


def test_readme_code_imports_resolve() -> None:
    """Every `from yiem… import …` in the README's Python samples names something that exists."""
    samples = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert samples
    checked = 0
    for sample in samples:
        for node in ast.walk(ast.parse(sample)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("yiem"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"README: {node.module} has no {alias.name}"
                    checked += 1
    assert checked >= 5


def _resolve(dotted: str) -> object:
    """The object a dotted name such as `yiem.mcp.client.McpClient.list_tools` names."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name.startswith(("test", "Test"))
    }


def spec_map_names(text: str) -> tuple[list[str], list[tuple[str, str | None]]]:
    """The Python names (`yiem.…`) and the tests (file, test name or pattern) the spec map names.

    In a cell, a bare `test_…` after `tests/x.py::…` belongs to that same file.
    """
    python_names: list[str] = []
    tests: list[tuple[str, str | None]] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        for cell in line.split("|"):
            current: str | None = None
            for token in re.findall(r"`([^`]+)`", cell):
                if token.startswith("yiem."):
                    python_names.append(token)
                elif token.startswith("tests/"):
                    current, _, name = token.partition("::")
                    tests.append((current, name or None))
                elif token.startswith("test_") and current is not None:
                    tests.append((current, token))
    return python_names, tests


def test_every_name_and_test_in_the_spec_map_exists() -> None:
    python_names, tests = spec_map_names(SPEC_MAP.read_text())
    assert len(python_names) > 30 and len(tests) > 40
    for dotted in python_names:
        if not dotted.endswith(".*"):
            _resolve(dotted)  # raises, naming the missing part
    missing: list[str] = []
    for file, name in tests:
        if not (ROOT / file).is_file():
            missing.append(file)
        elif name is not None and not fnmatch.filter(_test_names(ROOT / file), name):
            missing.append(f"{file}::{name}")
    assert not missing, f"docs/spec-map.md names tests that do not exist: {missing}"
