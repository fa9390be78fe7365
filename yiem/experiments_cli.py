"""`python -m yiem experiments run SPEC`: run a spec exported from the Experiments page, with CI's habits.

The run goes through the page's own code (`BackgroundRun`, the person's spending limits) and is
stored as the page's are, so it appears there. Exit codes: 0 ran, 1 the candidate regressed
significantly against the baseline (with `--fail-on-regression`) or the budget stopped it, 2 the
spec could not run (a bad file, a missing baseline, a database or model that cannot be reached).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, NoReturn

import click
from sqlalchemy.exc import SQLAlchemyError

from yiem.amounts import dollars
from yiem.checks._cli import junit_option, show_progress
from yiem.errors import YiemError
from yiem.experiments import (
    BackgroundRun,
    Comparison,
    ExperimentResult,
    ExperimentStore,
    RunSpec,
    SpecFile,
    check_spec,
    experiment_junit_xml,
    load_spec_file,
)
from yiem.identity import LOCAL_OWNER_ID
from yiem.mcp import connect_server, load_mcp_config
from yiem.store import create_store_engine
from yiem.tool_registry import ToolRegistry
from yiem.types import AgentTool

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2
POLL_SECONDS = 0.2


class CliSetupError(YiemError):
    """The command cannot start the run as asked (a baseline without a shared variant, no mcp.json)."""


def _experiment_for(store: ExperimentStore, spec_file: SpecFile) -> str:
    """Where the run goes: the experiment the file came from when this store has it, else this
    person's experiment of the file's name, created from the file when there is none."""
    records = store.list_experiments()
    if spec_file.experiment_id is not None and any(r.id == spec_file.experiment_id for r in records):
        return spec_file.experiment_id
    name = spec_file.experiment or "Untitled experiment"
    mine = [r for r in records if r.name == name and r.owner == store.owner]
    return mine[0].id if mine else store.save_experiment(name, spec_file.draft_data())


def _tools(spec: RunSpec, config_path: Path | None) -> dict[str, AgentTool]:
    """The tools of mcp.json's servers, connected only when a variant calls tools."""
    if not any(variant.tools for variant in spec.variants):
        return {}
    config_file = config_path or Path("mcp.json")
    if not config_file.is_file():
        raise CliSetupError(
            f"A variant calls tools, but there is no {config_file} naming their MCP servers: "
            "pass --config PATH to the mcp.json the app uses."
        )
    registry = ToolRegistry()
    for name, entry in load_mcp_config(config_file).servers.items():
        registry.add_mcp_server(name, connect_server(name, entry))
    return dict(registry.tools)


def _wait(run: BackgroundRun, total: int) -> None:
    """Until the run ends: a progress bar on a terminal, none in CI; Ctrl-C stops it as Stop does."""
    bar = click.progressbar(length=total, label="Running", file=sys.stderr) if show_progress() else None
    shown = 0
    try:
        while run.running:
            run.join(POLL_SECONDS)
            done = run.progress.done if run.progress is not None else 0
            if bar is not None and done > shown:
                bar.update(done - shown)
                shown = done
    except KeyboardInterrupt:
        run.stop()
        run.join()
    finally:
        if bar is not None:
            bar.render_finish()


def _comparisons(result: ExperimentResult, baseline: ExperimentResult | None) -> list[Comparison]:
    """Each variant against the baseline run's variant of the same name, as the page compares them."""
    if baseline is None:
        return []
    return [
        result.compare(name, baseline=name, baseline_run=baseline)
        for name in result.variants
        if name in baseline.variants
    ]


def _table(result: ExperimentResult) -> str:
    header = ("variant", "passed", "pass rate (95% interval)", "cost", "per item", "errors")
    rows = [header]
    for s in result.summary():
        unpriced = f" (+{s.unpriced} unpriced)" if s.unpriced and s.cost is not None else ""
        rows.append(
            (
                s.variant,
                f"{s.passed} / {s.items}",
                f"{s.pass_rate:.1%} ({s.pass_low:.1%}–{s.pass_high:.1%})",
                dollars(s.cost) + unpriced,
                dollars(s.cost_per_item),
                str(s.errors),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _status_words(result: ExperimentResult, total: int) -> str:
    done = len(result.outcomes)
    if result.status == "finished":
        return f"Run {result.run_id} finished: {done} of {total} items."
    if result.status == "budget":
        return f"The budget stopped run {result.run_id} after {done} of {total} items: {result.stop_reason}."
    return (
        f"Run {result.run_id} stopped after {done} of {total} items ({result.stop_reason or result.status})."
    )


def _comparison_words(comparison: Comparison) -> str:
    verdict = (
        "a significant regression"
        if comparison.significant_regression
        else "a significant difference"
        if comparison.significant
        else "could well be noise"
        if comparison.improved + comparison.regressed
        else "no item changed"
    )
    return (
        f"{comparison.candidate} against {comparison.baseline}: {comparison.improved} improved, "
        f"{comparison.regressed} regressed, {comparison.unchanged} unchanged; exact McNemar "
        f"p = {comparison.p_value:.3f} ({verdict})."
    )


def _as_json(
    result: ExperimentResult, experiment_id: str, total: int, comparisons: list[Comparison], code: int
) -> str:
    data: dict[str, Any] = {
        "run_id": result.run_id,
        "experiment_id": experiment_id,
        "experiment": result.experiment,
        "status": result.status,
        "stop_reason": result.stop_reason,
        "done": len(result.outcomes),
        "total": total,
        "summary": [s.model_dump(mode="json") for s in result.summary()],
        "comparisons": [
            {
                **c.model_dump(mode="json", exclude={"items"}),
                "significant": c.significant,
                "regression": c.significant_regression,
            }
            for c in comparisons
        ],
        "exit_code": code,
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def _fail(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(EXIT_UNUSABLE)


@click.group("experiments")
def experiments_group() -> None:
    """Run experiments exported from the Experiments page."""


@experiments_group.command("run")
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--baseline", "baseline_id", metavar="RUN_ID", help="A stored run to compare each variant with."
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a variant regresses significantly against the baseline (exact McNemar, p < 0.05).",
)
@click.option(
    "--max-cost", type=click.FloatRange(min=0, min_open=True), metavar="USD", help="Stop once this is spent."
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="How the result is printed: the summary table, or JSON for scripts.",
)
@junit_option("a case per item, one for the run's end, one per variant compared with the baseline")
@click.option(
    "--database", metavar="URL", help="The store to keep the run in (default: the app's, YIEM_DATABASE_URL)."
)
@click.option(
    "--user",
    default=LOCAL_OWNER_ID,
    show_default=True,
    metavar="ID",
    help="Whose run it is: the owner id the app uses for that person (without sign-in, local).",
)
@click.option(
    "--ray", "use_ray", is_flag=True, help="Run the items on Ray (YIEM_RAY_ADDRESS) instead of threads."
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The mcp.json of the tools variants call (default ./mcp.json).",
)
def run_command(
    spec_path: Path,
    baseline_id: str | None,
    fail_on_regression: bool,
    max_cost: float | None,
    output_format: str,
    junit_path: Path | None,
    database: str | None,
    user: str,
    use_ray: bool,
    config_path: Path | None,
) -> None:
    """Run the experiment spec SPEC (the file the Experiments page exports), store the run where the
    page shows it, and print each variant's pass rate and cost.

    Exit codes: 0 the run finished, 1 a significant regression (with --fail-on-regression) or the
    budget stopped it, 2 a bad file, a missing baseline, or a store or model that cannot be reached."""
    executor: Literal["threads", "ray"] = "ray" if use_ray else "threads"
    try:
        spec_file = load_spec_file(spec_path)
        spec = spec_file.run_spec(budget_usd=max_cost)
        check_spec(spec)
        engine = create_store_engine(database)
        # Without sign-in the one local person administers the app, as the page has it.
        store = ExperimentStore(engine, user, admin=user == LOCAL_OWNER_ID)
        baseline = store.load_result(baseline_id) if baseline_id else None
        if baseline is not None and not set(baseline.variants) & {v.name for v in spec.variants}:
            raise CliSetupError(
                f"The baseline run {baseline_id} has none of this spec's variants "
                f"({', '.join(v.name for v in spec.variants)}); it has {', '.join(baseline.variants)}."
            )
        tools = _tools(spec, config_path)
        experiment_id = _experiment_for(store, spec_file)
        run = BackgroundRun.start(store, spec, experiment_id, tools, executor)
    except (YiemError, OSError) as exc:
        _fail(str(exc))
    except SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        _fail(f"Cannot use the database {database or 'of the app'}: {cause}.")
    total = len(spec.tasks())
    _wait(run, total)
    if run.error is not None or run.result is None:
        _fail(f"The run failed: {run.error or 'it ended without a result'}.")
    result = run.result
    comparisons = _comparisons(result, baseline)
    code = EXIT_OK
    if result.status != "finished" or (
        fail_on_regression and any(c.significant_regression for c in comparisons)
    ):
        code = EXIT_FAILED
    if junit_path is not None:
        report = experiment_junit_xml(result, comparisons, baseline_id, _status_words(result, total))
        junit_path.write_text(report, encoding="utf-8")
    if output_format == "json":
        click.echo(_as_json(result, experiment_id, total, comparisons, code))
    else:
        click.echo(_status_words(result, total))
        click.echo(_table(result))
        for comparison in comparisons:
            click.echo(_comparison_words(comparison))
        click.echo(f"It is on the Experiments page under {result.experiment or 'Untitled experiment'!r}.")
    if result.status != "finished":
        click.echo(f"Failing: {_status_words(result, total)}", err=True)
    elif code == EXIT_FAILED:
        worse = ", ".join(c.candidate for c in comparisons if c.significant_regression)
        click.echo(
            f"Failing: {worse} regressed significantly against the baseline run {baseline_id}.", err=True
        )
    sys.exit(code)
