"""Signing in to an OAuth-protected MCP server (MCP 2025-11-25 authorization, OAuth 2.1).

A 401 names the server's protected-resource metadata; from it come the authorization server, its
metadata and a client (pre-registered, or registered dynamically). The person then signs in in
their own browser tab (authorization code with PKCE S256 and the `resource` of the server), and
the code comes back to `finish_sign_in`. Tokens are refreshed before they expire.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, ConfigDict

from yiem.mcp.errors import McpConnectionError, McpError

# A token this close to its end is refreshed before it is sent.
REFRESH_MARGIN_SECONDS = 60.0
_TIMEOUT = httpx.Timeout(15.0)
_PARAM = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


class McpOAuthError(McpError):
    """Signing in to an MCP server failed; the message says at which step and why."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(-32000, message, data)

    def _describe(self) -> str:
        return self.message


class OAuthChallenge(BaseModel):
    """What a server's `WWW-Authenticate: Bearer …` asks for."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None


class McpSignInRequiredError(McpConnectionError):
    """The server needs a signed-in person (401), or more access than the token gives (403)."""

    def __init__(self, server_url: str, challenge: OAuthChallenge) -> None:
        self.server_url = server_url
        self.challenge = challenge
        if challenge.error == "insufficient_scope":
            words = f"MCP server {server_url} asks for more access ({challenge.scope or 'another scope'})"
        else:
            words = f"MCP server {server_url} needs you to sign in"
        super().__init__(words, data={"status": 403 if challenge.error == "insufficient_scope" else 401})

    def _describe(self) -> str:
        return self.message


class OAuthClient(BaseModel):
    """The client yiem is at one authorization server: pre-registered (mcp.json) or registered."""

    client_id: str
    client_secret: str | None = None


class _Endpoints(BaseModel):
    server_url: str
    resource: str
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    revocation_endpoint: str | None = None
    client: OAuthClient
    scope: str = ""


class PendingSignIn(_Endpoints):
    """A sign-in under way: the page the person opens, and what the way back must match."""

    state: str
    code_verifier: str
    redirect_uri: str
    authorization_url: str


class OAuthGrant(_Endpoints):
    """What is kept per person and server (encrypted): the tokens and how to refresh them."""

    model_config = ConfigDict(extra="ignore")

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None

    def expiring(self, margin: float = REFRESH_MARGIN_SECONDS) -> bool:
        return self.expires_at is not None and self.expires_at - margin <= time.time()


def parse_challenge(header: str | None) -> OAuthChallenge | None:
    """The parameters of a `Bearer` challenge (RFC 6750, RFC 9728), or None for another scheme."""
    if not header or not header.strip().lower().startswith("bearer"):
        return None
    params = {m[1].lower(): (m[2] if m[2] else m[3]) for m in _PARAM.finditer(header)}
    return OAuthChallenge(
        resource_metadata=params.get("resource_metadata"),
        scope=params.get("scope"),
        error=params.get("error"),
    )


def canonical_resource(url: str) -> str:
    """The server's URL as the `resource` parameter (RFC 8707): lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def start_sign_in(
    server_url: str,
    challenge: OAuthChallenge,
    redirect_uri: str,
    *,
    client: OAuthClient | None = None,
    client_name: str = "yiem",
    http: httpx.Client | None = None,
) -> PendingSignIn:
    """Discover the authorization server, register if needed and build the page the person opens."""
    with _client(http) as web:
        resource_meta = _protected_resource(web, server_url, challenge)
        resource = canonical_resource(server_url)
        named = resource_meta.get("resource")
        if isinstance(named, str) and canonical_resource(named) != resource:
            raise McpOAuthError(
                f"MCP server {server_url} names another resource ({named}) in its metadata; not signing in"
            )
        issuers = resource_meta.get("authorization_servers") or []
        if not issuers or not isinstance(issuers[0], str):
            raise McpOAuthError(f"MCP server {server_url} names no authorization server in its metadata")
        issuer = issuers[0]
        meta = _authorization_server(web, issuer)
        if "S256" not in (meta.get("code_challenge_methods_supported") or []):
            raise McpOAuthError(
                f"the authorization server {issuer} does not offer PKCE (S256); not signing in"
            )
        client = client or _register(web, meta, redirect_uri, client_name)
    scope = challenge.scope or " ".join(resource_meta.get("scopes_supported") or [])
    verifier = secrets.token_urlsafe(48)
    challenge_code = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge_code,
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
        **({"scope": scope} if scope else {}),
    }
    endpoint = str(meta["authorization_endpoint"])
    return PendingSignIn(
        server_url=server_url,
        resource=resource,
        issuer=issuer,
        authorization_endpoint=endpoint,
        token_endpoint=str(meta["token_endpoint"]),
        revocation_endpoint=meta.get("revocation_endpoint"),
        client=client,
        scope=scope,
        state=state,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
        authorization_url=f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}",
    )


def finish_sign_in(
    pending: PendingSignIn, params: Mapping[str, str], http: httpx.Client | None = None
) -> OAuthGrant:
    """Trade the code the person's browser brought back for tokens; checks `state` and `iss`."""
    if params.get("state") != pending.state:
        raise McpOAuthError("the sign-in came back for another request (state does not match); sign in again")
    if "error" in params:
        said = params.get("error_description") or params["error"]
        raise McpOAuthError(f"the authorization server refused the sign-in: {said}")
    if params.get("iss") and params["iss"] != pending.issuer:
        raise McpOAuthError("the sign-in came back from another authorization server; sign in again")
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
    with _client(http) as web:
        tokens = _token_request(web, pending, form)
    endpoints = _Endpoints.model_validate(pending.model_dump()).model_dump()
    return OAuthGrant.model_validate({**endpoints, **tokens})


def refresh_grant(grant: OAuthGrant, http: httpx.Client | None = None) -> OAuthGrant:
    """New tokens from the refresh token; McpSignInRequiredError when there is none or it is refused."""
    if not grant.refresh_token:
        raise McpSignInRequiredError(grant.server_url, OAuthChallenge(error="invalid_token"))
    form = {"grant_type": "refresh_token", "refresh_token": grant.refresh_token, "resource": grant.resource}
    try:
        with _client(http) as web:
            tokens = _token_request(web, grant, form)
    except McpOAuthError as exc:
        raise McpSignInRequiredError(grant.server_url, OAuthChallenge(error="invalid_token")) from exc
    tokens.setdefault("refresh_token", grant.refresh_token)  # a server may keep the old one valid
    return grant.model_copy(update=tokens)


def revoke_grant(grant: OAuthGrant, http: httpx.Client | None = None) -> None:
    """Ask the authorization server to forget the tokens (sign out); best effort."""
    if not grant.revocation_endpoint:
        return
    with _client(http) as web:
        for token, hint in ((grant.refresh_token, "refresh_token"), (grant.access_token, "access_token")):
            if token:
                with contextlib.suppress(httpx.HTTPError):
                    web.post(
                        grant.revocation_endpoint,
                        data={"token": token, "token_type_hint": hint, **_auth_form(grant.client)},
                    )


class GrantAuth:
    """The bearer token an HTTP transport sends, refreshed before it expires; thread-safe."""

    def __init__(self, grant: OAuthGrant, on_refresh: Any = None) -> None:
        self.grant = grant
        self._on_refresh = on_refresh
        self._lock = threading.Lock()

    def header(self) -> str:
        with self._lock:
            if self.grant.expiring():
                self.grant = refresh_grant(self.grant)
                if self._on_refresh is not None:
                    self._on_refresh(self.grant)
            return f"Bearer {self.grant.access_token}"


# --- the HTTP steps --------------------------------------------------------------------------


@contextlib.contextmanager
def _client(http: httpx.Client | None) -> Iterator[httpx.Client]:
    """The caller's httpx client for the sign-in steps, or one of our own, closed after."""
    if http is not None:
        yield http
        return
    with httpx.Client(timeout=_TIMEOUT, follow_redirects=False) as own:
        yield own


def _get_json(web: httpx.Client, url: str, what: str) -> dict[str, Any] | None:
    try:
        answer = web.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"could not read {what} at {url}: {exc}") from exc
    if answer.status_code != 200:
        return None
    try:
        body = answer.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _protected_resource(web: httpx.Client, server_url: str, challenge: OAuthChallenge) -> dict[str, Any]:
    parts = urlsplit(server_url)
    root = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    candidates = [challenge.resource_metadata] if challenge.resource_metadata else []
    candidates += [
        f"{root}/.well-known/oauth-protected-resource{path}",
        f"{root}/.well-known/oauth-protected-resource",
    ]
    for url in dict.fromkeys(c for c in candidates if c):
        found = _get_json(web, url, "the server's protected-resource metadata")
        if found is not None:
            return found
    raise McpOAuthError(
        f"MCP server {server_url} asks for sign-in but publishes no protected-resource metadata"
    )


def _authorization_server(web: httpx.Client, issuer: str) -> dict[str, Any]:
    parts = urlsplit(issuer)
    root, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    candidates = (
        [
            f"{root}/.well-known/oauth-authorization-server{path}",
            f"{root}/.well-known/openid-configuration{path}",
            f"{root}{path}/.well-known/openid-configuration",
        ]
        if path
        else [f"{root}/.well-known/oauth-authorization-server", f"{root}/.well-known/openid-configuration"]
    )
    for url in candidates:
        found = _get_json(web, url, "the authorization server's metadata")
        if found is not None and found.get("authorization_endpoint") and found.get("token_endpoint"):
            if found.get("issuer") not in (None, issuer):
                raise McpOAuthError(
                    f"the authorization server at {issuer} calls itself {found.get('issuer')}"
                )
            return found
    raise McpOAuthError(f"the authorization server {issuer} publishes no usable metadata")


def _register(web: httpx.Client, meta: Mapping[str, Any], redirect_uri: str, client_name: str) -> OAuthClient:
    endpoint = meta.get("registration_endpoint")
    if not endpoint:
        raise McpOAuthError(
            "the authorization server does not register clients itself: put a client_id (and "
            "client_secret) for it in this server's entry in mcp.json"
        )
    document = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    try:
        answer = web.post(str(endpoint), json=document)
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"registering with the authorization server failed: {exc}") from exc
    body = _json_or_empty(answer)
    if answer.status_code not in (200, 201) or not isinstance(body.get("client_id"), str):
        said = body.get("error_description") or body.get("error") or f"HTTP {answer.status_code}"
        raise McpOAuthError(f"the authorization server refused to register yiem: {said}")
    return OAuthClient(client_id=body["client_id"], client_secret=body.get("client_secret"))


def _auth_form(client: OAuthClient) -> dict[str, str]:
    form = {"client_id": client.client_id}
    if client.client_secret:
        form["client_secret"] = client.client_secret
    return form


def _token_request(web: httpx.Client, where: _Endpoints, form: dict[str, str]) -> dict[str, Any]:
    try:
        answer = web.post(where.token_endpoint, data={**form, **_auth_form(where.client)})
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"could not reach the authorization server's token endpoint: {exc}") from exc
    body = _json_or_empty(answer)
    token = body.get("access_token")
    if answer.status_code != 200 or not isinstance(token, str):
        said = body.get("error_description") or body.get("error") or f"HTTP {answer.status_code}"
        raise McpOAuthError(f"the authorization server gave no token: {said}")
    tokens: dict[str, Any] = {"access_token": token}
    if isinstance(body.get("refresh_token"), str):
        tokens["refresh_token"] = body["refresh_token"]
    if isinstance(body.get("expires_in"), int | float):
        tokens["expires_at"] = time.time() + float(body["expires_in"])
    if isinstance(body.get("scope"), str):
        tokens["scope"] = body["scope"]
    return tokens


def _json_or_empty(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
