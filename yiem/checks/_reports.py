"""A run for people (text), for programs (JSON) and for CI (JUnit XML)."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from yiem.amounts import duration
from yiem.checks._runner import CheckRun


def run_text(run: CheckRun) -> str:
    """One line per call, the failures in words under it, then the totals."""
    lines = []
    for outcome in run.outcomes:
        mark = "PASS" if outcome.passed else "FAIL"
        lines.append(f"{mark}  {outcome.name}  ({duration(outcome.duration_ms)})")
        lines.extend(f"      {failure}" for failure in outcome.failures)
        if outcome.snapshot_diff:
            lines.extend(f"      {line}" for line in outcome.snapshot_diff.splitlines())
    lines.append(
        f"{run.passed} passed, {run.failed} failed of {len(run.outcomes)} in {duration(run.duration_ms)} "
        f"(collection {run.collection!r})."
    )
    return "\n".join(lines)


def run_json(run: CheckRun) -> str:
    """The run as JSON, with its totals."""
    data = run.model_dump(mode="json", exclude={"outcomes": {"__all__": {"result"}}})
    data.update(passed=run.passed, failed=run.failed, pass_rate=run.pass_rate)
    return json.dumps(data, indent=2, ensure_ascii=False)


def junit_xml(run: CheckRun) -> str:
    """A JUnit XML report: one testsuite for the collection, one testcase per saved call."""
    suites = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name=run.collection,
        tests=str(len(run.outcomes)),
        failures=str(run.failed),
        errors="0",
        time=f"{run.duration_ms / 1000:.3f}",
        timestamp=run.started_at.isoformat(),
    )
    for outcome in run.outcomes:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=f"{run.collection}.{outcome.server}",
            name=outcome.name,
            time=f"{outcome.duration_ms / 1000:.3f}",
        )
        if not outcome.passed:
            failure = ElementTree.SubElement(
                case, "failure", message=outcome.failures[0] if outcome.failures else ""
            )
            failure.text = "\n".join(
                outcome.failures + ([outcome.snapshot_diff] if outcome.snapshot_diff else [])
            )
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True)
