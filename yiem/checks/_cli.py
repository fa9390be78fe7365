"""`python -m yiem check`: run a saved collection without the app, with CI's habits.

Exit codes: 0 every call passed, 1 an assertion failed, 2 the collection could not run
(a bad file, a missing server, a server that could not be reached)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from yiem.checks._collection import CheckFileError, CheckSetupError, SavedCall, load_collection
from yiem.checks._reports import junit_xml, run_json, run_text
from yiem.checks._runner import run_collection
from yiem.errors import YiemError
from yiem.mcp.config import load_mcp_config

EXIT_PASSED, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


def show_progress() -> bool:
    """A progress bar on a terminal; none in CI (`CI=true`) or when output is not a TTY."""
    return os.environ.get("CI", "").lower() not in ("true", "1") and sys.stderr.isatty()


def junit_option(cases: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--junit FILE` as both commands take it; `cases` says what the report's test cases are."""
    return click.option(
        "--junit",
        "junit_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"Also write a JUnit XML report here, for CI: {cases}.",
    )


def _overrides(pairs: tuple[str, ...]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        name, sep, entry = pair.partition("=")
        if not sep or not name.strip() or not entry.strip():
            raise CheckSetupError(
                f"--server {pair!r}: write it as NAME=ENTRY (a collection's server = an entry)."
            )
        found[name.strip()] = entry.strip()
    return found


@click.command("check")
@click.argument("collection", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--server",
    "servers",
    multiple=True,
    metavar="NAME=ENTRY",
    help="Run the collection's server NAME against the entry ENTRY (another version of it).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The mcp.json whose entries the collection may use (default ./mcp.json when present).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How the result is printed.",
)
@junit_option("a case per saved call")
def check_command(
    collection: Path,
    servers: tuple[str, ...],
    config_path: Path | None,
    output_format: str,
    junit_path: Path | None,
) -> None:
    """Run the saved calls of COLLECTION (a file exported from the Tools page) and check their assertions.

    Exit codes: 0 all passed, 1 assertions failed, 2 could not connect or bad file."""
    try:
        loaded = load_collection(collection)
        entries = {}
        config_file = config_path or (Path("mcp.json") if Path("mcp.json").is_file() else None)
        if config_file is not None:
            entries = dict(load_mcp_config(config_file).servers)
        bar = (
            click.progressbar(length=len(loaded.calls), label="Running", file=sys.stderr)
            if show_progress()
            else None
        )

        def progress(done: int, total: int, call: SavedCall) -> None:
            if bar is not None:
                bar.update(1)

        try:
            run = run_collection(loaded, entries, _overrides(servers), on_progress=progress)
        finally:
            if bar is not None:
                bar.render_finish()
    except (CheckFileError, CheckSetupError, YiemError) as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_UNUSABLE)
    click.echo(run_json(run) if output_format == "json" else run_text(run))
    if junit_path is not None:
        junit_path.write_text(junit_xml(run), encoding="utf-8")
    sys.exit(EXIT_PASSED if run.failed == 0 else EXIT_FAILED)
