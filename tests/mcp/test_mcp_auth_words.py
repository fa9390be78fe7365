"""The words of MCP sign-in's refusals (issuer checks, resource checks, the sign-in limit, machine
sign-in in mcp.json), against a scripted authorization server on loopback, and the one rule for
how a client authenticates at the token endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.scripted_http import ScriptedServer, json_reply
from yiem.mcp import (
    GrantAuth,
    McpConfigError,
    McpOAuthError,
    McpSignInLoopError,
    McpSignInRequiredError,
    OAuthChallenge,
    OAuthClient,
    OAuthGrant,
    OAuthIssuerError,
    PendingSignIn,
    SignInSession,
    finish_sign_in,
    parse_server_entry,
    resolve_server,
    start_sign_in,
)
from yiem.mcp._auth import token_auth_method
from yiem.redaction import redact

REDIRECT = "http://127.0.0.1:8501/tools"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def _metadata(url: str, **fields: object) -> dict[str, object]:
    return {
        "issuer": url,
        "authorization_endpoint": f"{url}/authorize",
        "token_endpoint": f"{url}/token",
        "code_challenge_methods_supported": ["S256"],
        **fields,
    }


def _pending(server: ScriptedServer, **metadata: object) -> PendingSignIn:
    mcp = f"{server.url}/mcp"
    server.script(
        json_reply({"resource": mcp, "authorization_servers": [server.url]}),
        json_reply(_metadata(server.url, **metadata)),
    )
    challenge = OAuthChallenge(resource_metadata=f"{server.url}/.well-known/oauth-protected-resource/mcp")
    return start_sign_in(mcp, challenge, REDIRECT, client=OAuthClient(client_id="c"))


def test_an_answer_from_another_issuer_is_refused_before_the_code_is_used(server: ScriptedServer) -> None:
    pending = _pending(server, authorization_response_iss_parameter_supported=True)
    back = {"state": pending.state, "code": "the-code"}
    with pytest.raises(OAuthIssuerError) as raised:
        finish_sign_in(pending, {**back, "iss": "https://evil.example.com"})
    assert str(raised.value).startswith(
        f"the sign-in came back from https://evil.example.com, but yiem sent you to {server.url}"
    )
    with pytest.raises(OAuthIssuerError, match=r"came back from .*/, but yiem sent you to"):
        finish_sign_in(pending, {**back, "iss": f"{server.url}/"})
    with pytest.raises(OAuthIssuerError, match="without naming its authorization server, though"):
        finish_sign_in(pending, back)
    assert len(server.requests) == 2  # the two metadata reads: no token request was ever made


def test_metadata_that_names_another_issuer_says_what_to_fix(server: ScriptedServer) -> None:
    mcp = f"{server.url}/mcp"
    server.script(
        json_reply({"resource": mcp, "authorization_servers": [server.url]}),
        json_reply(_metadata(server.url) | {"issuer": "https://attacker.example.com"}),
    )
    with pytest.raises(OAuthIssuerError) as raised:
        start_sign_in(mcp, OAuthChallenge(resource_metadata=f"{server.url}/prm"), REDIRECT)
    assert str(raised.value) == (
        f"the authorization server at {server.url} calls itself 'https://attacker.example.com' in its "
        "metadata, so its answers cannot be told from another server's: not signing in. Ask the MCP "
        "server's operator to make its `authorization_servers` entry and the authorization server's "
        "`issuer` the same URL."
    )


def test_a_resource_for_another_server_is_refused_and_a_parent_one_is_sent_as_published(
    server: ScriptedServer,
) -> None:
    mcp = f"{server.url}/mcp"
    server.script(
        json_reply({"resource": "https://evil.example.com/mcp", "authorization_servers": [server.url]})
    )
    with pytest.raises(
        McpOAuthError, match=re.escape("says its sign-in is for https://evil.example.com/mcp, which is not")
    ):
        start_sign_in(mcp, OAuthChallenge(resource_metadata=f"{server.url}/prm"), REDIRECT)
    server.script(
        json_reply({"resource": server.url, "authorization_servers": [server.url]}),
        json_reply(_metadata(server.url)),
    )
    pending = start_sign_in(
        mcp,
        OAuthChallenge(resource_metadata=f"{server.url}/prm"),
        REDIRECT,
        client=OAuthClient(client_id="c"),
    )
    assert pending.resource == server.url  # exactly as published: no "/" added


def test_a_server_never_satisfied_ends_after_three_sign_ins_in_words() -> None:
    refusal = McpSignInRequiredError(
        "http://127.0.0.1:9/mcp", OAuthChallenge(error="insufficient_scope", scope="mcp:admin")
    )
    sign_ins: list[OAuthGrant | None] = []

    def sign_in(refused: McpSignInRequiredError, previous: OAuthGrant | None) -> OAuthGrant:
        sign_ins.append(previous)
        return OAuthGrant(
            server_url=refused.server_url,
            resource=refused.server_url,
            issuer="http://127.0.0.1:9",
            token_endpoint="http://127.0.0.1:9/token",
            client=OAuthClient(client_id="c"),
            access_token=f"token-{len(sign_ins)}",
        )

    def call() -> None:
        raise refusal

    with pytest.raises(McpSignInLoopError) as raised:
        SignInSession(GrantAuth(None), sign_in).run(call)
    assert len(sign_ins) == 3 and sign_ins[1] is not None and sign_ins[1].access_token == "token-1"
    assert str(raised.value) == (
        "MCP server http://127.0.0.1:9/mcp still refuses after 3 sign-ins in a row (it asks for "
        "mcp:admin); yiem stopped trying. The account may not have that access: ask the server's operator."
    )


@pytest.mark.parametrize(
    ("client", "supported", "method"),
    [
        (OAuthClient(client_id="c", client_secret="s"), ["client_secret_basic"], "client_secret_basic"),
        (OAuthClient(client_id="c", client_secret="s"), ["client_secret_post"], "client_secret_post"),
        (OAuthClient(client_id="c", client_secret="s"), None, "client_secret_basic"),  # RFC 8414 default
        (OAuthClient(client_id="c"), ["client_secret_basic"], "none"),
        (
            OAuthClient(client_id="c", client_secret="s", token_endpoint_auth_method="client_secret_post"),
            ["client_secret_basic", "client_secret_post"],
            "client_secret_post",
        ),
        (OAuthClient(client_id="c", private_key_pem="-----BEGIN…"), ["private_key_jwt"], "private_key_jwt"),
    ],
)
def test_one_rule_picks_the_token_endpoint_auth_method(
    client: OAuthClient, supported: list[str] | None, method: str
) -> None:
    assert token_auth_method(client, supported) == method


def test_a_machine_sign_in_without_credentials_is_explained_and_its_key_is_a_secret() -> None:
    with pytest.raises(McpConfigError) as raised:
        parse_server_entry("api", {"url": "https://api.example/mcp", "oauth_grant": "client_credentials"})
    assert "oauth_grant 'client_credentials' needs oauth_client_id and either oauth_client_secret" in str(
        raised.value
    )
    entry = parse_server_entry(
        "api",
        {
            "url": "https://api.example/mcp",
            "oauth_grant": "client_credentials",
            "oauth_client_id": "robot",
            "oauth_private_key": "${ROBOT_KEY}",
        },
    )
    pem = (
        "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n"
        "-----END PRIVATE KEY-----"
    )
    resolved = resolve_server("api", entry, {"ROBOT_KEY": pem})
    assert resolved.oauth_private_key == pem  # type: ignore[union-attr]
    assert pem not in redact(f"the key is {pem}")
    with pytest.raises(
        McpConfigError, match="uses \\$\\{ROBOT_KEY\\}, but the environment variable ROBOT_KEY"
    ):
        resolve_server("api", entry, {})
