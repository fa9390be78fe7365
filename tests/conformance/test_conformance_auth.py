"""The official MCP conformance suite's authorization scenarios against yiem's client
(tests/conformance/auth_flow.py over yiem's public API): every `auth/*` scenario that revisions
2025-11-25 and 2026-07-28 require, each at its own wire version, and the machine sign-in and DPoP
extensions. No expected failures: each scenario's every check must pass."""

from __future__ import annotations

import sys

import pytest

from tests.fixtures.conformance import ScenarioResult, run_client_scenarios

COMMAND = [sys.executable, "-m", "tests.conformance.auth_flow"]

REQUIRED_2025_11_25 = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
REQUIRED_2026_07_28 = [
    *REQUIRED_2025_11_25,
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
EXTENSIONS = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
]

_runs: dict[str, dict[str, ScenarioResult]] = {}


def _requirement_run(revision: str) -> dict[str, ScenarioResult]:
    """One run of a revision's whole requirement set (the suite runs its scenarios in parallel)."""
    if revision not in _runs:
        results = run_client_scenarios(COMMAND, requirements=revision)
        _runs[revision] = {result.scenario: result for result in results}
    return _runs[revision]


def _assert_passed(scenario: str, result: ScenarioResult | None) -> None:
    assert result is not None, f"the suite did not run {scenario}"
    assert result.passed, "\n".join(result.failures())


def test_the_lists_are_the_suites_own() -> None:
    # The parametrized lists below must name exactly the auth scenarios each revision requires.
    for revision, expected in (("2025-11-25", REQUIRED_2025_11_25), ("2026-07-28", REQUIRED_2026_07_28)):
        ran = {name for name in _requirement_run(revision) if name.startswith("auth/")}
        assert ran == set(expected), revision


@pytest.mark.parametrize("scenario", REQUIRED_2025_11_25)
def test_required_for_2025_11_25(scenario: str) -> None:
    _assert_passed(scenario, _requirement_run("2025-11-25").get(scenario))


@pytest.mark.parametrize("scenario", REQUIRED_2026_07_28)
def test_required_for_2026_07_28(scenario: str) -> None:
    _assert_passed(scenario, _requirement_run("2026-07-28").get(scenario))


@pytest.mark.parametrize("scenario", EXTENSIONS)
def test_extension(scenario: str) -> None:
    results = run_client_scenarios(COMMAND, scenario=scenario)
    _assert_passed(scenario, results[0] if results else None)
