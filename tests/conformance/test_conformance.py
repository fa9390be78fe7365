"""The official MCP conformance suite's client scenarios (every one a revision requires, but the
`auth/*` ones, which tests/conformance/test_conformance_auth.py runs), driven by driver.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.fixtures.conformance import run_client_scenarios

DRIVER = Path(__file__).with_name("driver.py")
# `node …/index.js list --client --requirements REVISION`, less the auth/* scenarios, plus the
# scenario the suite adds after release but does not score (json-schema-2020-12-preservation).
REQUIRED = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ),
}


@pytest.mark.parametrize(
    ("revision", "scenario"),
    [(revision, scenario) for revision, scenarios in REQUIRED.items() for scenario in scenarios],
)
def test_client_scenario(revision: str, scenario: str) -> None:
    results = run_client_scenarios(
        [sys.executable, str(DRIVER)], scenario=scenario, spec_version=revision, timeout_s=300
    )
    assert [result.scenario for result in results] == [scenario]
    result = results[0]
    assert result.passed, "\n".join(result.failures())
