"""The official MCP conformance suite's authorization scenarios against yiem's client
(tests/conformance/auth_flow.py over yiem's public API): every `auth/*` scenario that revisions
2025-11-25 and 2026-07-28 require, each at its own wire version, and the machine sign-in and DPoP
extensions. No expected failures: each scenario's every check must pass."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.fixtures.conformance import NODE, SUITE, run_client_scenarios

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


def _required_auth(revision: str) -> set[str]:
    """The `auth/*` client scenarios the suite itself lists as required for `revision`."""
    listing = subprocess.run(
        [str(NODE), str(SUITE), "list", "--client", "--requirements", revision],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    required = listing.split("Run and reported")[0]
    return set(re.findall(r"^\s+- (auth/\S+)$", required, flags=re.MULTILINE))


def _run(scenario: str, revision: str | None) -> None:
    # One scenario at a time: the suite's 30 s per scenario holds on a busy machine.
    results = run_client_scenarios(COMMAND, scenario=scenario, spec_version=revision)
    assert results, f"the suite did not run {scenario}"
    assert results[0].passed, "\n".join(results[0].failures())


@pytest.mark.parametrize(
    ("revision", "expected"), [("2025-11-25", REQUIRED_2025_11_25), ("2026-07-28", REQUIRED_2026_07_28)]
)
def test_the_lists_are_the_suites_own(revision: str, expected: list[str]) -> None:
    assert _required_auth(revision) == set(expected)


@pytest.mark.parametrize("scenario", REQUIRED_2025_11_25)
def test_required_for_2025_11_25(scenario: str) -> None:
    _run(scenario, "2025-11-25")


@pytest.mark.parametrize("scenario", REQUIRED_2026_07_28)
def test_required_for_2026_07_28(scenario: str) -> None:
    _run(scenario, "2026-07-28")


@pytest.mark.parametrize("scenario", EXTENSIONS)
def test_extension(scenario: str) -> None:
    _run(scenario, None)  # extensions are not on the spec timeline: the suite runs them at 2025-11-25
