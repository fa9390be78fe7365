"""Machine sign-in (the OAuth client credentials grant, MCP's extension for servers that programs,
not people, sign in to): the client authenticates with a secret or a signed assertion."""

from __future__ import annotations

import httpx

from yiem.mcp._auth._discovery import authorization_server, protected_resource, web_client
from yiem.mcp._auth._flow import endpoints, sign_in_scope
from yiem.mcp._auth._models import McpOAuthError, OAuthChallenge, OAuthClient, OAuthGrant
from yiem.mcp._auth._token import token_request

GRANT = "client_credentials"


def client_credentials_grant(
    server_url: str,
    challenge: OAuthChallenge,
    client: OAuthClient,
    *,
    previous: OAuthGrant | None = None,
    http: httpx.Client | None = None,
) -> OAuthGrant:
    """A token for `client` itself from the server's authorization server."""
    with web_client(http) as web:
        found = protected_resource(web, server_url, challenge)
        issuer = found.authorization_servers[0]
        meta = authorization_server(web, issuer)
        granted = meta.get("grant_types_supported")
        if isinstance(granted, list) and GRANT not in granted:
            raise McpOAuthError(
                f"the authorization server {issuer} does not sign programs in (no client_credentials "
                "grant): remove the machine sign-in from this server's entry in mcp.json and sign in "
                "on the Tools page instead"
            )
        same = previous if previous is not None and previous.issuer == issuer else None
        scope = sign_in_scope(challenge, found, {}, same)
        where = endpoints(server_url, found, issuer, meta, client, scope, same)
        form = {"grant_type": GRANT, "resource": found.resource, **({"scope": scope} if scope else {})}
        grant = OAuthGrant.model_validate({**where, "access_token": "-", "grant_type": GRANT})
        tokens = token_request(web, grant, form)
    return grant.model_copy(update=tokens)
