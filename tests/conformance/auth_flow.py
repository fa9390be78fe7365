"""A complete MCP client program for the conformance suite's `auth/*` scenarios, on yiem's public API.

`python -m tests.conformance.auth_flow URL` (the suite appends the URL and sets
MCP_CONFORMANCE_SCENARIO and MCP_CONFORMANCE_CONTEXT) connects, signs in as the scenario expects,
lists the tools and calls the first one. The person's part of a sign-in (their browser following the
authorization page, which the suite's server approves at once) is done with httpx; a machine sign-in
(client credentials) takes its credentials from the context, as mcp.json would name them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from yiem.errors import YiemError
from yiem.mcp import (
    GrantAuth,
    McpClient,
    McpSignInRequiredError,
    OAuthClient,
    OAuthGrant,
    PendingSignIn,
    SignInSession,
    client_credentials_grant,
    finish_sign_in,
    start_sign_in,
)

# Where the app's browser comes back to (the suite only redirects to it; nothing needs to listen).
REDIRECT_URI = "http://localhost:3030/callback"
# The URL of the app's own client metadata document, as the suite expects it (auth/basic-cimd).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def follow_in_browser(pending: PendingSignIn) -> dict[str, str]:
    """What a person's browser does with the authorization page: follow it back to the app."""
    with httpx.Client(timeout=15) as browser:
        page = browser.get(pending.authorization_url)
        for _hop in range(10):
            if not page.is_redirect:
                break
            target = urljoin(str(page.url), page.headers["location"])
            if target.startswith(pending.redirect_uri):
                return {key: values[0] for key, values in parse_qs(urlsplit(target).query).items()}
            page = browser.get(target)
    raise RuntimeError(f"the authorization page never sent the browser back (HTTP {page.status_code})")


def _client(context: Mapping[str, Any]) -> OAuthClient | None:
    if "client_id" not in context:
        return None
    return OAuthClient(
        client_id=context["client_id"],
        client_secret=context.get("client_secret"),
        private_key_pem=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm", "ES256"),
    )


def run_auth_scenario(scenario: str, url: str, context: dict[str, Any]) -> None:
    """Connect to `url` as the scenario asks, list its tools and call the first; raises on refusal."""
    client = _client(context)
    machine = scenario.startswith("auth/client-credentials")

    def sign_in(refused: McpSignInRequiredError, previous: OAuthGrant | None) -> OAuthGrant:
        if machine:
            assert client is not None, "a machine sign-in needs client credentials in the context"
            return client_credentials_grant(url, refused.challenge, client, previous=previous)
        pending = start_sign_in(
            url,
            refused.challenge,
            REDIRECT_URI,
            client=client,
            client_metadata_url=CLIENT_METADATA_URL,
            previous=previous,
        )
        return finish_sign_in(pending, follow_in_browser(pending))

    auth = GrantAuth(None)
    session = SignInSession(auth, sign_in)
    mcp = session.run(lambda: McpClient.http(url, auth=auth, sse_fallback=False))
    try:
        tools = session.run(mcp.list_tools)
        if tools:
            session.run(lambda: mcp.call_tool(tools[0].name, {}))
    finally:
        mcp.close()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tests.conformance.auth_flow SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        run_auth_scenario(scenario, argv[1], context)
    except YiemError as error:
        print(f"{scenario}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
