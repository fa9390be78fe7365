"""Signing a person in to an OAuth-protected MCP server (MCP authorization, OAuth 2.1).

A 401 names the server's protected-resource metadata; from it come the authorization server, its
metadata and a client (pre-registered, a Client ID Metadata Document URL, or registered
dynamically). The person then signs in in their own browser tab (authorization code with PKCE S256
and the server's `resource`), and the code comes back to `finish_sign_in`, which checks who sent it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import httpx

from yiem.mcp._auth._cimd import is_client_metadata_url
from yiem.mcp._auth._discovery import (
    ResourceMetadata,
    authorization_server,
    protected_resource,
    web_client,
)
from yiem.mcp._auth._dpop import DpopKey, wants_dpop
from yiem.mcp._auth._models import (
    Endpoints,
    McpOAuthError,
    McpSignInRequiredError,
    OAuthChallenge,
    OAuthClient,
    OAuthGrant,
    OAuthIssuerError,
    PendingSignIn,
)
from yiem.mcp._auth._token import client_authentication, register, token_request

OFFLINE_ACCESS = "offline_access"


def start_sign_in(
    server_url: str,
    challenge: OAuthChallenge,
    redirect_uri: str,
    *,
    client: OAuthClient | None = None,
    client_name: str = "yiem",
    client_metadata_url: str | None = None,
    previous: OAuthGrant | None = None,
    http: httpx.Client | None = None,
) -> PendingSignIn:
    """Discover the authorization server, find or register a client and build the page the person
    opens. `previous` is the grant a 403 found too narrow (its scopes are asked for again) or an
    authorization server no longer accepts."""
    with web_client(http) as web:
        found = protected_resource(web, server_url, challenge)
        issuer = found.authorization_servers[0]
        meta = authorization_server(web, issuer)
        if "S256" not in (meta.get("code_challenge_methods_supported") or []):
            raise McpOAuthError(
                f"the authorization server {issuer} does not offer PKCE (S256); not signing in"
            )
        same = previous is not None and previous.issuer == issuer and previous.resource == found.resource
        chosen = _client(client, previous if same else None, issuer, meta, client_metadata_url)
        chosen = chosen or register(web, meta, issuer, redirect_uri, client_name)
    scope = sign_in_scope(challenge, found, meta, previous if same else None)
    verifier = secrets.token_urlsafe(48)
    challenge_code = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": chosen.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge_code,
        "code_challenge_method": "S256",
        "state": state,
        "resource": found.resource,
        **({"scope": scope} if scope else {}),
    }
    endpoint = str(meta["authorization_endpoint"])
    return PendingSignIn(
        **endpoints(server_url, found, issuer, meta, chosen, scope, previous if same else None),
        state=state,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
        authorization_url=f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}",
        iss_required=meta.get("authorization_response_iss_parameter_supported") is True,
    )


def endpoints(
    server_url: str,
    found: ResourceMetadata,
    issuer: str,
    meta: Mapping[str, Any],
    client: OAuthClient,
    scope: str,
    previous: OAuthGrant | None = None,
) -> dict[str, Any]:
    """The fields of `Endpoints` for a sign-in at `issuer` (a DPoP key when it binds tokens)."""
    key = previous.dpop_key if previous is not None and previous.dpop_key else None
    # Bound tokens only for a server that asks for them: one that takes Bearer would refuse them.
    if key is None and found.dpop and wants_dpop(dict(meta)):
        key = DpopKey().private_jwk
    methods = meta.get("token_endpoint_auth_methods_supported")
    return {
        "server_url": server_url,
        "resource": found.resource,
        "issuer": issuer,
        "authorization_endpoint": meta.get("authorization_endpoint"),
        "token_endpoint": str(meta["token_endpoint"]),
        "revocation_endpoint": meta.get("revocation_endpoint"),
        "token_endpoint_auth_methods": methods if isinstance(methods, list) else None,
        "client": client,
        "scope": scope,
        "dpop_key": key,
    }


def sign_in_scope(
    challenge: OAuthChallenge,
    found: ResourceMetadata,
    meta: Mapping[str, Any],
    previous: OAuthGrant | None = None,
) -> str:
    """The scopes to ask for: the challenge's, else all the server supports, else none; with those
    already granted (a step-up keeps them) and `offline_access` when the authorization server offers it."""
    asked = challenge.scope.split() if challenge.scope else list(found.scopes_supported)
    if previous is not None and previous.scope:
        asked = previous.scope.split() + asked
    offered = meta.get("scopes_supported") or []
    if asked and OFFLINE_ACCESS in offered:
        asked.append(OFFLINE_ACCESS)  # a refresh token, so the person need not sign in again soon
    return " ".join(dict.fromkeys(asked))


def _client(
    given: OAuthClient | None,
    previous: OAuthGrant | None,
    issuer: str,
    meta: Mapping[str, Any],
    metadata_url: str | None,
) -> OAuthClient | None:
    # A client belongs to the authorization server it came from: never shown to another (SEP-2352).
    if given is not None and given.issuer in (None, issuer):
        return given
    if previous is not None:
        return previous.client
    supported = meta.get("client_id_metadata_document_supported") is True
    if metadata_url and supported and is_client_metadata_url(metadata_url):
        return OAuthClient(client_id=metadata_url, issuer=issuer)
    return None


def finish_sign_in(
    pending: PendingSignIn, params: Mapping[str, str], http: httpx.Client | None = None
) -> OAuthGrant:
    """Trade the code the person's browser brought back for tokens; checks `state` and `iss`."""
    if params.get("state") != pending.state:
        raise McpOAuthError("the sign-in came back for another request (state does not match); sign in again")
    check_issuer(pending, params.get("iss"))
    if "error" in params:
        said = params.get("error_description") or params["error"]
        raise McpOAuthError(f"the authorization server refused the sign-in: {said}")
    code = params.get("code")
    if not code:
        raise McpOAuthError("the sign-in came back without a code; sign in again")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": pending.redirect_uri,
        "code_verifier": pending.code_verifier,
        "resource": pending.resource,
    }
    with web_client(http) as web:
        tokens = token_request(web, pending, form)
    kept = Endpoints.model_validate(pending.model_dump()).model_dump()
    return OAuthGrant.model_validate({**kept, **tokens})


def check_issuer(pending: PendingSignIn, iss: str | None) -> None:
    """RFC 9207: an `iss` on the way back must be the issuer yiem sent the person to, character for
    character; a server that promised one must send it. Otherwise the code is never used."""
    if iss is None and pending.iss_required:
        raise OAuthIssuerError(
            f"the sign-in came back without naming its authorization server, though {pending.issuer} "
            "promised to (RFC 9207), so yiem cannot tell it from an answer of another server and did "
            "not use it. Sign in again; if this repeats, tell the authorization server's operator."
        )
    if iss is not None and iss != pending.issuer:
        raise OAuthIssuerError(
            f"the sign-in came back from {iss}, but yiem sent you to {pending.issuer}: the answer may "
            "come from another server posing as this one, so it was not used. Sign in again from "
            "this page; if this repeats, tell the MCP server's operator."
        )


def refresh_grant(grant: OAuthGrant, http: httpx.Client | None = None) -> OAuthGrant:
    """New tokens from the refresh token; McpSignInRequiredError when there is none or it is refused."""
    if not grant.refresh_token:
        raise McpSignInRequiredError(grant.server_url, OAuthChallenge(error="invalid_token"))
    form = {"grant_type": "refresh_token", "refresh_token": grant.refresh_token, "resource": grant.resource}
    try:
        with web_client(http) as web:
            tokens = token_request(web, grant, form)
    except McpOAuthError as exc:
        raise McpSignInRequiredError(grant.server_url, OAuthChallenge(error="invalid_token")) from exc
    tokens.setdefault("refresh_token", grant.refresh_token)  # a server may keep the old one valid
    return grant.model_copy(update=tokens)


def revoke_grant(grant: OAuthGrant, http: httpx.Client | None = None) -> None:
    """Ask the authorization server to forget the tokens (sign out); best effort."""
    if not grant.revocation_endpoint:
        return
    form, headers = client_authentication(grant.client, grant)
    with web_client(http) as web:
        for token, hint in ((grant.refresh_token, "refresh_token"), (grant.access_token, "access_token")):
            if token:
                with contextlib.suppress(httpx.HTTPError):
                    web.post(
                        grant.revocation_endpoint,
                        data={"token": token, "token_type_hint": hint, **form},
                        headers=headers,
                    )
