"""Signing in to OAuth-protected MCP servers: the official SDK's auth in front of a real authorization
server (oidc-provider: dynamic registration, PKCE, resource indicators, refresh, revocation)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fixtures.mcp_oauth import AuthServer, ProtectedServers, sign_in_in_browser
from yiem.mcp import (
    GrantAuth,
    McpClient,
    McpOAuthError,
    McpSignInRequiredError,
    OAuthChallenge,
    OAuthClient,
    OAuthGrant,
    finish_sign_in,
    refresh_grant,
    revoke_grant,
    start_sign_in,
)

REDIRECT = "http://127.0.0.1:8501/tools"


def _challenge(url: str) -> OAuthChallenge:
    with pytest.raises(McpSignInRequiredError) as raised:
        McpClient.http(url)
    return raised.value.challenge


def _signed_in(url: str, login: str = "ann", **options: object) -> OAuthGrant:
    pending = start_sign_in(url, _challenge(url), REDIRECT, **options)  # type: ignore[arg-type]
    return finish_sign_in(pending, sign_in_in_browser(pending, login))


def _whoami(url: str, grant: OAuthGrant) -> str:
    client = McpClient.http(url, auth=GrantAuth(grant))
    try:
        return client.call_tool("whoami", {}).content[0].text  # type: ignore[union-attr]
    finally:
        client.close()


def test_a_401_names_the_servers_metadata_and_is_not_taken_for_an_old_server(
    protected_mcp: ProtectedServers,
) -> None:
    with pytest.raises(McpSignInRequiredError) as raised:
        McpClient.http(protected_mcp.tools)  # an SSE fallback would hide the 401 behind another error
    assert str(raised.value) == f"MCP server {protected_mcp.tools} needs you to sign in"
    assert raised.value.challenge.resource_metadata == (
        protected_mcp.tools.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    )


def test_sign_in_registers_uses_pkce_and_the_resource_then_calls_the_tool(
    protected_mcp: ProtectedServers, mcp_auth_server: AuthServer
) -> None:
    pending = start_sign_in(protected_mcp.tools, _challenge(protected_mcp.tools), REDIRECT)
    asked = {k: v[0] for k, v in parse_qs(urlsplit(pending.authorization_url).query).items()}
    assert pending.authorization_url.startswith(f"{mcp_auth_server.url}/auth?")
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert asked["resource"] == protected_mcp.tools and asked["scope"] == "mcp:tools offline_access"
    assert asked["redirect_uri"] == REDIRECT and asked["client_id"] == pending.client.client_id
    grant = finish_sign_in(pending, sign_in_in_browser(pending, "ann"))
    assert grant.refresh_token and grant.scope == "mcp:tools"
    assert _whoami(protected_mcp.tools, grant) == "signed in as ann"


def test_the_code_is_worthless_without_its_verifier_or_with_another_state(
    protected_mcp: ProtectedServers,
) -> None:
    pending = start_sign_in(protected_mcp.tools, _challenge(protected_mcp.tools), REDIRECT)
    back = sign_in_in_browser(pending, "ann")
    with pytest.raises(McpOAuthError, match="state does not match"):
        finish_sign_in(pending, {**back, "state": "another"})
    with pytest.raises(McpOAuthError, match="gave no token"):
        finish_sign_in(pending.model_copy(update={"code_verifier": "x" * 64}), back)


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(protected_mcp: ProtectedServers) -> None:
    grant = _signed_in(protected_mcp.tools, "bob")
    auth = GrantAuth(grant.model_copy(update={"expires_at": 0.0}))
    client = McpClient.http(protected_mcp.tools, auth=auth)
    try:
        assert client.call_tool("whoami", {}).content[0].text == "signed in as bob"  # type: ignore[union-attr]
    finally:
        client.close()
    assert auth.grant.access_token != grant.access_token and not auth.grant.expiring()


def test_a_revoked_grant_asks_to_sign_in_again(protected_mcp: ProtectedServers) -> None:
    grant = _signed_in(protected_mcp.tools)
    revoke_grant(grant)
    with pytest.raises(McpSignInRequiredError, match="needs you to sign in"):
        McpClient.http(protected_mcp.tools, auth=GrantAuth(grant))
    with pytest.raises(McpSignInRequiredError):
        refresh_grant(grant)


def test_a_token_for_another_server_is_refused(protected_mcp: ProtectedServers) -> None:
    grant = _signed_in(protected_mcp.tools)  # its audience is the tools server
    with pytest.raises(McpSignInRequiredError):
        McpClient.http(protected_mcp.admin, auth=GrantAuth(grant))


def test_more_scope_asked_for_is_a_second_sign_in(protected_mcp: ProtectedServers) -> None:
    url = protected_mcp.admin
    narrow = start_sign_in(url, OAuthChallenge(scope="mcp:tools"), REDIRECT)
    grant = finish_sign_in(narrow, sign_in_in_browser(narrow, "ann"))
    with pytest.raises(McpSignInRequiredError) as raised:
        McpClient.http(url, auth=GrantAuth(grant))
    assert raised.value.challenge.error == "insufficient_scope"
    assert "asks for more access" in str(raised.value)
    wider = start_sign_in(url, raised.value.challenge, REDIRECT, client=narrow.client)
    assert set(wider.scope.split()) == {"mcp:tools", "mcp:admin", "offline_access"}
    assert _whoami(url, finish_sign_in(wider, sign_in_in_browser(wider, "ann"))) == "signed in as ann"


def test_a_client_registered_beforehand_is_used_as_it_is(protected_mcp: ProtectedServers) -> None:
    registered = start_sign_in(protected_mcp.tools, _challenge(protected_mcp.tools), REDIRECT).client
    given = OAuthClient(client_id=registered.client_id)
    pending = start_sign_in(protected_mcp.tools, _challenge(protected_mcp.tools), REDIRECT, client=given)
    assert pending.client == given
    assert _whoami(protected_mcp.tools, finish_sign_in(pending, sign_in_in_browser(pending, "bob"))) == (
        "signed in as bob"
    )


def test_a_server_without_metadata_is_explained() -> None:
    with pytest.raises(McpOAuthError, match="could not read the server's protected-resource metadata"):
        start_sign_in("http://127.0.0.1:9/mcp", OAuthChallenge(), REDIRECT)
