"""An experiment run as JUnit XML, for CI: which items failed and why, and the verdict on a baseline.

An experiment has a pass rate, so some failed items are expected and do not fail the command; the
report still marks them failed, so CI's test view lists them with their scorers' reasons. A run
that did not finish and a significant regression against the baseline are failed cases of their
own; whether they fail the command is the exit code's to say (`--fail-on-regression`)."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree

from yiem.amounts import dollars
from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._results import Comparison, ExperimentResult

_Element = ElementTree.Element


def _item_case(suite: _Element, classname: str, outcome: ItemOutcome, repeats: int) -> None:
    name = outcome.item_id if repeats == 1 else f"{outcome.item_id} (repeat {outcome.repeat + 1})"
    case = ElementTree.SubElement(
        suite, "testcase", classname=classname, name=name, time=f"{outcome.latency_ms / 1000:.3f}"
    )
    if outcome.error is not None:
        ElementTree.SubElement(case, "error", message=outcome.error).text = outcome.error
        return
    reasons = [f"{score.scorer}: {score.reason}" for score in outcome.scores if not score.passed]
    if reasons:
        ElementTree.SubElement(case, "failure", message=reasons[0]).text = "\n".join(
            [*reasons, f"output: {outcome.output}"]
        )


def _variant_suite(root: _Element, result: ExperimentResult, name: str) -> None:
    outcomes = result.outcomes_of(name)
    summary = next(s for s in result.summary() if s.variant == name)
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(outcomes)),
        failures=str(sum(o.error is None and not o.passed for o in outcomes)),
        errors=str(sum(o.error is not None for o in outcomes)),
        time=f"{sum(o.latency_ms for o in outcomes) / 1000:.3f}",
    )
    properties = ElementTree.SubElement(suite, "properties")
    for key, value in (
        ("run_id", result.run_id),
        ("pass_rate", f"{summary.pass_rate:.4f}"),
        ("pass_rate_95_interval", f"{summary.pass_low:.4f}-{summary.pass_high:.4f}"),
        ("cost", dollars(summary.cost)),
    ):
        ElementTree.SubElement(properties, "property", name=key, value=value)
    for outcome in outcomes:
        _item_case(suite, f"{result.experiment or 'experiment'}.{name}", outcome, result.repeats)


def _verdict_suite(root: _Element, name: str, cases: Sequence[tuple[str, str | None, str]]) -> None:
    """One suite of (case name, failure or None, what it checked) cases."""
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(sum(failure is not None for _, failure, _ in cases)),
        errors="0",
    )
    for case_name, failure, words in cases:
        case = ElementTree.SubElement(suite, "testcase", classname=name, name=case_name)
        if failure is not None:
            ElementTree.SubElement(case, "failure", message=failure).text = words
        else:
            ElementTree.SubElement(case, "system-out").text = words


def experiment_junit_xml(
    result: ExperimentResult,
    comparisons: Sequence[Comparison],
    baseline_run: str | None,
    status_words: str,
) -> str:
    """A suite per variant (a case per item and repeat), one for the run's end, and one for the
    comparisons with `baseline_run` (a case per variant, failed on a significant regression)."""
    root = ElementTree.Element("testsuites", name=result.experiment or "experiment")
    for name in result.variants:
        _variant_suite(root, result, name)
    finished = None if result.status == "finished" else status_words
    _verdict_suite(root, f"run {result.run_id}", [("the run finished", finished, status_words)])
    if baseline_run is not None:
        cases = []
        for c in comparisons:
            words = (
                f"{c.improved} improved, {c.regressed} regressed, {c.unchanged} unchanged; "
                f"exact McNemar p = {c.p_value:.3f}"
            )
            failure = f"a significant regression: {words}" if c.significant_regression else None
            cases.append((c.candidate, failure, words))
        _verdict_suite(root, f"against baseline run {baseline_run}", cases)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
