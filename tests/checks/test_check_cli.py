"""`python -m yiem check` against real MCP servers: exit codes, JSON, and a JUnit file read by junitparser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from junitparser import Failure, JUnitXml

from tests.fixtures.mcp import StdioServer
from yiem.checks import (
    Assertion,
    AssertionKind,
    Collection,
    SavedCall,
    collection_json,
    collection_schema,
    run_collection,
)
from yiem.checks._assertions import snapshot_of
from yiem.mcp import McpClient

ROOT = Path(__file__).resolve().parents[2]


def _entry(server: StdioServer) -> dict[str, Any]:
    return {"command": server.command, "args": list(server.args), "env": dict(server.env)}


def _check(tmp_path: Path, collection: Collection | str, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "collection.json"
    path.write_text(collection if isinstance(collection, str) else collection_json(collection))
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "yiem", "check", str(path), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _collection(everything: StdioServer, git: StdioServer, snapshot: Any, status_text: str) -> Collection:
    return Collection(
        name="smoke",
        servers={"everything": _entry(everything), "git": _entry(git)},
        calls=[
            SavedCall(
                name="echo",
                server="everything",
                tool="echo",
                arguments={"message": "hello"},
                assertions=[
                    Assertion(kind=AssertionKind.NOT_ERROR),
                    Assertion(kind=AssertionKind.TEXT_CONTAINS, value="hello"),
                    Assertion(kind=AssertionKind.SNAPSHOT, snapshot=snapshot),
                ],
            ),
            SavedCall(
                name="weather",
                server="everything",
                tool="get-structured-content",
                arguments={"location": "New York"},
                assertions=[
                    Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA),
                    Assertion(kind=AssertionKind.JSONPATH_EXISTS, path="$.structuredContent.temperature"),
                ],
            ),
            SavedCall(
                name="status",
                server="git",
                tool="git_status",
                arguments={"repo_path": git.args[1]},
                assertions=[
                    Assertion(
                        kind=AssertionKind.JSONPATH_CONTAINS, path="$.content[0].text", value=status_text
                    )
                ],
            ),
        ],
    )


def _accepted_echo(everything: StdioServer) -> Any:
    with McpClient.stdio(everything.command, everything.args) as client:
        return snapshot_of(client.call_tool_raw("echo", {"message": "hello"}))


def test_a_collection_that_holds_exits_0_and_writes_a_passing_junit_file(
    tmp_path: Path, everything_stdio: StdioServer, git_stdio: StdioServer
) -> None:
    collection = _collection(
        everything_stdio, git_stdio, _accepted_echo(everything_stdio), "working tree clean"
    )
    done = _check(tmp_path, collection, "--junit", "report.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 0 failed of 3" in done.stdout
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "report.xml"))))
    assert suite.tests == 3 and suite.failures == 0
    assert [case.name for case in suite] == ["echo", "weather", "status"]
    assert all(case.is_passed for case in suite)


def test_a_changed_snapshot_and_a_jsonpath_that_no_longer_holds_exit_1(
    tmp_path: Path, everything_stdio: StdioServer, git_stdio: StdioServer
) -> None:
    old = {"content": [{"type": "text", "text": "Echo: hello there"}], "isError": False}
    collection = _collection(everything_stdio, git_stdio, old, "nothing added to commit")
    done = _check(tmp_path, collection, "--junit", "report.xml", "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["passed"], report["failed"]) == (1, 2)
    echo = report["outcomes"][0]
    assert '-      "text": "Echo: hello there"' in echo["snapshot_diff"]
    assert '+      "text": "Echo: hello"' in echo["snapshot_diff"]
    cases = {case.name: case for case in next(iter(JUnitXml.fromfile(str(tmp_path / "report.xml"))))}
    assert cases["weather"].is_passed
    (echo_failure,) = [r for r in cases["echo"].result if isinstance(r, Failure)]
    assert "differs from the accepted snapshot" in echo_failure.message
    (status_failure,) = [r for r in cases["status"].result if isinstance(r, Failure)]
    assert (
        "does not contain" in status_failure.message and "nothing added to commit" in status_failure.message
    )


def test_server_override_runs_the_collection_against_another_entry(
    tmp_path: Path, everything_stdio: StdioServer, git_stdio: StdioServer
) -> None:
    collection = _collection(
        everything_stdio, git_stdio, _accepted_echo(everything_stdio), "working tree clean"
    )
    collection.servers["everything-next"] = collection.servers.pop("everything")
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"everything-next": _entry(everything_stdio)}})
    )
    missing = _check(tmp_path, collection.model_copy(update={"servers": {"git": _entry(git_stdio)}}))
    assert missing.returncode == 2
    assert "no server entry 'everything'" in missing.stderr and "--server everything=ENTRY" in missing.stderr
    done = _check(tmp_path, collection, "--server", "everything=everything-next")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"format": 99, "name": "x", "calls": []}', "collection format 99, written by a newer yiem"),
        ("{not json", "is not JSON (line 1"),
        (
            '{"name": "x", "calls": [{"server": "s", "tool": "t", '
            '"assertions": [{"kind": "jsonpath_exists", "path": "$[["}]}]}',
            "does not parse",
        ),
    ],
)
def test_a_bad_file_gets_words_and_exit_2(tmp_path: Path, text: str, words: str) -> None:
    done = _check(tmp_path, text)
    assert done.returncode == 2
    assert words in done.stderr and "Traceback" not in done.stderr


def test_the_published_schema_is_the_collection_files_and_holds_the_example() -> None:
    published = json.loads((ROOT / "docs" / "collection.schema.json").read_text())
    # When the collection's models change, write the file again from them:
    #   python -c 'import json; from yiem.checks import collection_schema as s;
    #   print(json.dumps(s(), indent=2))' > docs/collection.schema.json
    assert published == collection_schema()
    validator = Draft202012Validator(published)
    example = json.loads((ROOT / "examples" / "everything-smoke.json").read_text())
    assert list(validator.iter_errors(example)) == []
    # As strict as the reader: a field yiem does not know is refused by both.
    example["calls"][0]["assertions"][0]["expected"] = True
    assert [e.message for e in validator.iter_errors(example)] == [
        "Additional properties are not allowed ('expected' was unexpected)"
    ]


def test_an_assertion_on_a_field_the_tool_does_not_return_exits_2(
    tmp_path: Path, everything_stdio: StdioServer
) -> None:
    collection = Collection(
        name="fields",
        servers={"everything": _entry(everything_stdio)},
        calls=[
            SavedCall(
                server="everything",
                tool="get-structured-content",
                arguments={"location": "New York"},
                assertions=[
                    Assertion(kind=AssertionKind.JSONPATH_EQUALS, path="$.structuredContent.wind", value=3)
                ],
            )
        ],
    )
    done = _check(tmp_path, collection)
    assert done.returncode == 2
    assert "has no field 'wind'" in done.stderr and "temperature" in done.stderr


def test_a_server_that_cannot_start_exits_2(tmp_path: Path) -> None:
    collection = Collection(
        name="gone",
        servers={"gone": {"command": str(tmp_path / "no-such-server")}},
        calls=[SavedCall(server="gone", tool="echo")],
    )
    done = _check(tmp_path, collection)
    assert done.returncode == 2
    assert "Could not connect to server 'gone'" in done.stderr


def test_run_collection_reports_progress_per_call(everything_stdio: StdioServer) -> None:
    collection = Collection(
        name="progress",
        servers={"everything": _entry(everything_stdio)},
        calls=[
            SavedCall(
                server="everything",
                tool="get-sum",
                arguments={"a": 1, "b": n},
                assertions=[Assertion(kind=AssertionKind.TEXT_CONTAINS, value=str(1 + n))],
            )
            for n in range(3)
        ],
    )
    seen: list[tuple[int, int]] = []
    run = run_collection(collection, on_progress=lambda done, total, call: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert run.passed == 3 and run.pass_rate == 1.0


def test_the_readmes_example_collection_passes_against_the_projects_test_server(
    tmp_path: Path, everything_stdio: StdioServer
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "yiem",
            "check",
            "examples/everything-smoke.json",
            "--junit",
            str(tmp_path / "j.xml"),
        ],
        cwd=ROOT,
        env={**os.environ, "CI": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "j.xml"))))
    assert (suite.tests, suite.failures) == (2, 0)
