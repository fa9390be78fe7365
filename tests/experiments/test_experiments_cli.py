"""`python -m yiem experiments run SPEC` on the embedded model and a scripted one: the figures it
prints are the ones the Experiments page computes from the stored run, and its exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from time import perf_counter
from typing import Any

import pytest
from click.testing import CliRunner, Result
from junitparser import Error, Failure, JUnitXml, TestSuite

from tests.experiments.models import smol_variant
from tests.scripted_http import ScriptedServer, openai_text_reply
from yiem.__main__ import cli
from yiem.experiments import (
    Dataset,
    DatasetItem,
    ExperimentStore,
    RunSpec,
    SpecFile,
    Variant,
    check_spec,
    load_spec_file,
    scorers,
    spec_file_json,
    spec_schema,
)
from yiem.identity import LOCAL_OWNER_ID
from yiem.providers.local_llm import LocalLlmServer
from yiem.store import create_store_engine

ROOT = Path(__file__).resolve().parents[2]
ITEMS = 200


def _scripted_variant(server: ScriptedServer) -> Variant:
    return Variant(name="scripted", provider="vllm", base_url=f"{server.url}/v1", model_id="scripted")


def _spec_file(tmp_path: Path, variants: list[Variant], name: str = "yes-check", items: int = ITEMS) -> Path:
    """The file the Experiments page's "Export the spec as a file" writes (its own function)."""
    dataset = Dataset(
        name="yes",
        items=[
            DatasetItem(id=f"q{i:03d}", input="Answer with one word: yes.", expected="yes")
            for i in range(items)
        ],
    )
    # One item at a time per provider: the scripted server's replies go to the items in order.
    spec = RunSpec.build(dataset, variants, [scorers.contains()], name=name, concurrency=1)
    path = tmp_path / f"{name}-{len(variants)}.spec.json"
    path.write_text(spec_file_json(spec))
    return path


def _answering_yes(tmp_path: Path, server: ScriptedServer, items: int) -> str:
    """A spec of `items` items on the scripted model, which is scripted to answer each one right."""
    server.script(*(openai_text_reply("yes") for _ in range(items)))
    return str(_spec_file(tmp_path, [_scripted_variant(server)], items=items))


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["experiments", "run", *args], env={"CI": "true"})


def _as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# 400 items, 200 of them SmolLM2's: about 2 minutes at load 6 on 2 cores, 5 at load 17.
@pytest.mark.llama
@pytest.mark.timeout(1200)
def test_the_cli_run_shows_the_pages_pass_rates_and_mcnemar_p_for_the_stored_run(
    tmp_path: Path, llama_server: LocalLlmServer, scripted_server: ScriptedServer
) -> None:
    database = f"sqlite:///{tmp_path / 'store.db'}"
    # The baseline: the scripted model fails every 10th item; the candidate run fails every 4th.
    scripted_server.script(*(openai_text_reply("no" if i % 10 == 0 else "yes") for i in range(ITEMS)))
    baseline_file = _spec_file(tmp_path, [_scripted_variant(scripted_server)])
    baseline = _as_json(_run(str(baseline_file), "--database", database, "--format", "json"))
    assert baseline["exit_code"] == 0 and baseline["summary"][0]["passed"] == ITEMS - 20

    scripted_server.script(*(openai_text_reply("no" if i % 4 == 0 else "yes") for i in range(ITEMS)))
    smol = smol_variant(llama_server, max_tokens=1)
    candidate_file = _spec_file(tmp_path, [smol, _scripted_variant(scripted_server)])
    started = perf_counter()
    printed = _run(
        str(candidate_file), "--database", database, "--baseline", baseline["run_id"], "--format", "json"
    )
    print(f"{ITEMS} items x 2 variants (SmolLM2 max_tokens 1) in {perf_counter() - started:.1f} s")
    out = _as_json(printed)
    assert out["exit_code"] == 0 and out["status"] == "finished" and out["done"] == 2 * ITEMS

    # What the Experiments page draws for this experiment: its runs, each run's summary, the comparison.
    page_store = ExperimentStore(create_store_engine(database), LOCAL_OWNER_ID, admin=True)
    assert out["experiment_id"] in {record.id for record in page_store.list_experiments()}
    runs = page_store.list_runs(out["experiment_id"])
    assert {record.id for record in runs} == {baseline["run_id"], out["run_id"]}
    stored = page_store.load_result(out["run_id"])
    page_summary = {s.variant: s for s in stored.summary()}
    for row in out["summary"]:
        page = page_summary[row["variant"]]
        assert (row["items"], row["passed"], row["pass_rate"]) == (ITEMS, page.passed, page.pass_rate)
        assert (row["pass_low"], row["pass_high"]) == (page.pass_low, page.pass_high)
    assert page_summary["scripted"].passed == ITEMS - 50
    page_comparison = stored.compare(
        "scripted", baseline="scripted", baseline_run=page_store.load_result(baseline["run_id"])
    )
    [comparison] = out["comparisons"]  # smollm2 is not in the baseline run
    assert (comparison["improved"], comparison["regressed"]) == (
        page_comparison.improved,
        page_comparison.regressed,
    )
    assert (comparison["improved"], comparison["regressed"]) == (10, 40)  # items 10, 30, …; 4, 8, 12, …
    assert comparison["p_value"] == page_comparison.p_value and comparison["regression"] is True

    # The summary table says the same in words, and --fail-on-regression makes it exit 1.
    scripted_server.script(*(openai_text_reply("no" if i % 4 == 0 else "yes") for i in range(ITEMS)))
    failing = _run(
        str(_spec_file(tmp_path, [_scripted_variant(scripted_server)])),
        "--database", database, "--baseline", baseline["run_id"], "--fail-on-regression",
    )  # fmt: skip
    assert failing.exit_code == 1, failing.output
    assert f"150 / {ITEMS}" in failing.stdout and "75.0% (" in failing.stdout
    assert f"p = {page_comparison.p_value:.3f} (a significant regression)" in failing.stdout
    assert "scripted regressed significantly against the baseline run" in failing.stderr


def test_a_budget_that_stops_the_run_exits_1_in_words(
    tmp_path: Path, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A priced model (gpt-4o-mini's catalog price) whose server is the scripted one, with the server's key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{scripted_server.url}/v1")
    scripted_server.script(*(openai_text_reply("yes", prompt_tokens=10_000) for _ in range(20)))
    priced = Variant(
        name="mini", provider="openai", base_url=f"{scripted_server.url}/v1", model_id="gpt-4o-mini"
    )
    database = f"sqlite:///{tmp_path / 'store.db'}"
    report = tmp_path / "budget.xml"
    result = _run(
        str(_spec_file(tmp_path, [priced], items=20)),
        "--database", database, "--max-cost", "0.003", "--junit", str(report),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "The budget stopped run" in result.stderr and "Traceback" not in result.output
    (stopped,) = [r for r in list(JUnitXml.fromfile(str(report)))[-1] if not r.is_passed]
    assert stopped.name == "the run finished"
    assert stopped.result[0].message.startswith("The budget stopped run")
    assert "sk-test-cli" not in result.output
    store = ExperimentStore(create_store_engine(database))
    [run] = store.list_runs()
    assert run.status == "budget" and 0 < run.done < 20  # $0.0015 per item: it stops after two


GRADER = """
def score(output, expected, item):
    if item["id"] == "broken":
        raise ValueError("no grade for this one")
    return output.strip() == expected
"""


def test_a_code_scorer_named_in_a_spec_runs_from_the_specs_folder_and_a_break_is_a_cell_error(
    tmp_path: Path, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs, elsewhere = tmp_path / "specs", tmp_path / "elsewhere"
    specs.mkdir()
    elsewhere.mkdir()
    (specs / "graders.py").write_text(GRADER)
    # A graders.py in the folder the command runs in, which fails everything: it must not be the one used.
    (elsewhere / "graders.py").write_text("def score(output, expected, item):\n    return False\n")
    monkeypatch.chdir(elsewhere)
    dataset = Dataset.from_records(
        [{"id": name, "input": "Say yes.", "expected": "yes"} for name in ("right", "wrong", "broken")]
    )
    spec = RunSpec.build(
        dataset,
        [_scripted_variant(scripted_server)],
        [scorers.code("graders.py")],
        name="coded",
        concurrency=1,
    )
    spec_path = specs / "coded.spec.json"
    spec_path.write_text(spec_file_json(spec))
    scripted_server.script(*(openai_text_reply(text) for text in ("yes", "no", "yes")))
    database = f"sqlite:///{tmp_path / 'store.db'}"

    out = _as_json(_run(str(spec_path), "--database", database, "--format", "json"))
    assert out["exit_code"] == 0 and out["status"] == "finished"
    [summary] = out["summary"]
    # The broken cell is an error, not a failed score: the scorer's mean is over the two it graded.
    assert (summary["items"], summary["passed"], summary["errors"]) == (3, 1, 1)
    assert summary["mean_scores"] == {"code": 0.5}
    stored = ExperimentStore(create_store_engine(database)).load_result(out["run_id"])
    errors = {o.item_id: o.error for o in stored.outcomes}
    assert errors["right"] is None and errors["wrong"] is None
    assert "The code scorer graders.py:score failed: ValueError: no grade for this one (line 4)" in str(
        errors["broken"]
    )
    assert [o.score_of("code") is None for o in stored.outcomes] == [False, False, True]
    # Stored absolute, so the page (and a resumed run) find it from any folder.
    [scorer] = ExperimentStore(create_store_engine(database)).load_spec(out["run_id"]).scorers
    assert scorer.model_dump()["path"] == str(specs / "graders.py")

    # The table says it too; a spec whose code scorer's file is not beside it gets words and exit 2.
    scripted_server.script(*(openai_text_reply(text) for text in ("yes", "no", "yes")))
    table = _run(str(spec_path), "--database", database)
    assert table.exit_code == 0 and "1 / 3" in table.stdout, table.output
    moved = tmp_path / "moved.spec.json"
    moved.write_text(spec_path.read_text())
    missing = _run(str(moved), "--database", database)
    assert missing.exit_code == 2, missing.output
    assert f"names the file 'graders.py', and there is no {tmp_path / 'graders.py'}" in missing.stderr


def test_runs_are_the_users_own_and_a_baseline_not_shared_with_them_is_refused(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    database = f"sqlite:///{tmp_path / 'store.db'}"
    spec = _answering_yes(tmp_path, scripted_server, 3)
    ann = _as_json(_run(spec, "--database", database, "--user", "ann", "--format", "json"))
    engine = create_store_engine(database)
    assert [r.owner for r in ExperimentStore(engine, "ann").list_experiments()] == ["ann"]
    assert ExperimentStore(engine, "bob").list_experiments() == []
    refused = _run(spec, "--database", database, "--user", "bob", "--baseline", ann["run_id"])
    assert refused.exit_code == 2 and "not shared with you" in refused.stderr
    assert ExperimentStore(engine, "bob").list_experiments() == []  # nothing was made for a refused run


def test_junit_lists_each_item_and_fails_the_regression_against_the_baseline(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    database = f"sqlite:///{tmp_path / 'store.db'}"
    spec = _answering_yes(tmp_path, scripted_server, 8)
    baseline = _as_json(_run(spec, "--database", database, "--format", "json"))
    # Six items now answer "no": six regressions, none improved, exact McNemar p = 2 / 2**6 < 0.05.
    scripted_server.script(*(openai_text_reply("no" if i < 6 else "yes") for i in range(8)))
    report = tmp_path / "experiment.xml"
    failing = _run(
        spec, "--database", database, "--baseline", baseline["run_id"], "--fail-on-regression",
        "--junit", str(report), "--format", "json",
    )  # fmt: skip
    assert failing.exit_code == 1, failing.output
    run_id = _as_json(failing)["run_id"]

    suites: dict[str, TestSuite] = {suite.name: suite for suite in JUnitXml.fromfile(str(report))}
    assert list(suites) == ["scripted", f"run {run_id}", f"against baseline run {baseline['run_id']}"]
    items = suites["scripted"]
    assert (items.tests, items.failures, items.errors) == (8, 6, 0)
    assert {p.name: p.value for p in items.properties()}["pass_rate"] == "0.2500"
    cases = {case.name: case for case in items}
    assert list(cases) == [f"q{i:03d}" for i in range(8)]
    (failure,) = [r for r in cases["q000"].result if isinstance(r, Failure)]
    assert failure.message.startswith("contains: ") and "output: no" in failure.text
    assert cases["q007"].is_passed
    assert next(iter(suites[f"run {run_id}"])).is_passed
    (verdict,) = suites[f"against baseline run {baseline['run_id']}"]
    (regression,) = [r for r in verdict.result if isinstance(r, Failure)]
    assert verdict.name == "scripted"
    assert regression.message == (
        "a significant regression: 0 improved, 6 regressed, 2 unchanged; exact McNemar p = 0.031"
    )
    assert not [r for r in verdict.result if isinstance(r, Error)]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "Cannot read the spec file"),
        ("{not json", "is not JSON (line 1"),
        (json.dumps({"format": 99, "dataset": {}, "variants": []}), "format 99, written by a newer yiem"),
        (
            json.dumps({"dataset": {"items": []}, "variants": [{"name": "a"}], "repeat": 2}),
            "repeat: Extra inputs",
        ),
        (json.dumps({"dataset": {"items": []}, "variants": [{"name": "a"}]}), "The dataset has no items"),
    ],
)
def test_a_bad_spec_file_gets_words_and_exit_2(tmp_path: Path, content: str | None, words: str) -> None:
    path = tmp_path / "spec.json"
    if content is not None:
        path.write_text(content)
    result = _run(str(path), "--database", f"sqlite:///{tmp_path / 'store.db'}")
    assert result.exit_code == 2 and words in result.stderr, result.output
    assert "Traceback" not in result.output


def test_an_unknown_baseline_or_an_unreachable_database_exits_2(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    spec = str(_spec_file(tmp_path, [_scripted_variant(scripted_server)], items=2))
    unknown = _run(spec, "--database", f"sqlite:///{tmp_path / 'store.db'}", "--baseline", "nosuchrun")
    assert unknown.exit_code == 2 and "No experiment run with id 'nosuchrun'" in unknown.stderr
    unreachable = _run(spec, "--database", "postgresql://nobody@127.0.0.1:9/yiem")
    assert unreachable.exit_code == 2, unreachable.output
    assert "Could not open the database" in unreachable.stderr
    assert scripted_server.requests == []  # nothing ran


def test_help_on_every_command_and_the_published_schema_is_the_files() -> None:
    for command in ([], ["experiments"], ["experiments", "run"], ["check"]):
        shown = CliRunner().invoke(cli, [*command, "--help"])
        assert shown.exit_code == 0 and "Usage:" in shown.output
    published = json.loads((ROOT / "docs" / "experiment-spec.schema.json").read_text())
    assert published == spec_schema()


def test_the_spec_file_takes_a_run_specs_fields_from_it_but_the_run_id() -> None:
    own = {"format", "experiment_id"}
    assert list(SpecFile.model_fields)[: -len(own)] == [f for f in RunSpec.model_fields if f != "run_id"]
    assert set(SpecFile.model_fields) - set(RunSpec.model_fields) == own
    spec = RunSpec.build(Dataset(items=[DatasetItem(input="hi")]), [Variant(name="a")])
    assert next(iter(json.loads(spec_file_json(spec)))) == "format"  # a reader finds the format first


def test_the_readmes_example_spec_is_a_spec_this_yiem_runs() -> None:
    # The In CI example runs it on the embedded model; here only that it reads and is runnable as written.
    example = ROOT / "examples" / "capitals-local.spec.json"
    assert f"experiments run {example.relative_to(ROOT)}" in (ROOT / "README.md").read_text()
    spec = load_spec_file(example).run_spec()
    check_spec(spec)
    assert [v.provider for v in spec.variants] == ["local"] and len(spec.dataset.items) == 5


def _terminal_run(spec: str, database: str, ci: bool) -> tuple[int, str]:
    """`python -m yiem experiments run` with stderr on a terminal (a pty): its exit code and stderr."""
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env.update({"PYTHONPATH": str(ROOT), **({"CI": "true"} if ci else {})})
    leader, follower = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "yiem", "experiments", "run", spec, "--database", database],
            stdout=subprocess.DEVNULL,
            stderr=follower,
            env=env,
            timeout=120,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return done.returncode, b"".join(chunks).decode(errors="replace")


def test_a_progress_bar_on_a_terminal_and_none_in_ci(tmp_path: Path, scripted_server: ScriptedServer) -> None:
    spec = str(_spec_file(tmp_path, [_scripted_variant(scripted_server)], items=3))
    database = f"sqlite:///{tmp_path / 'store.db'}"
    scripted_server.script(*(openai_text_reply("yes") for _ in range(6)))
    code, shown = _terminal_run(spec, database, ci=False)
    assert code == 0 and "Running" in shown and "100%" in shown, shown
    code, shown = _terminal_run(spec, database, ci=True)
    assert code == 0 and "Running" not in shown, shown
