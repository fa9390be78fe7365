"""The authorization server's client endpoints: registration (RFC 7591), and the token endpoint,
where the client authenticates by the one rule of `token_auth_method`."""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx
import jwt

from yiem.mcp._auth._discovery import json_or_empty
from yiem.mcp._auth._dpop import DpopKey
from yiem.mcp._auth._models import Endpoints, McpOAuthError, OAuthClient, TokenAuthMethod

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# RFC 8414 §2: an authorization server that names no method takes client_secret_basic.
_DEFAULT_METHODS = ["client_secret_basic"]


def token_auth_method(client: OAuthClient, supported: list[str] | None) -> TokenAuthMethod:
    """How `client` authenticates at a token endpoint offering `supported`
    (`token_endpoint_auth_methods_supported`): the method it was registered with, else the first of
    Basic and form post that the server offers; a client without a secret sends only its id."""
    if client.private_key_pem:
        return "private_key_jwt"
    if not client.client_secret:
        return "none"
    if client.token_endpoint_auth_method not in (None, "none"):
        return client.token_endpoint_auth_method
    offered = supported or _DEFAULT_METHODS
    if "client_secret_basic" not in offered and "client_secret_post" in offered:
        return "client_secret_post"
    return "client_secret_basic"


def client_authentication(client: OAuthClient, where: Endpoints) -> tuple[dict[str, str], dict[str, str]]:
    """The form fields and headers that authenticate `client` at `where`'s token endpoint."""
    method = token_auth_method(client, where.token_endpoint_auth_methods)
    if method == "client_secret_basic":
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret or '', safe='')}"
        return {}, {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    form = {"client_id": client.client_id}
    if method == "client_secret_post":
        form["client_secret"] = client.client_secret or ""
    elif method == "private_key_jwt":
        form |= {"client_assertion_type": ASSERTION_TYPE, "client_assertion": _assertion(client, where)}
    return form, {}


def _assertion(client: OAuthClient, where: Endpoints) -> str:
    now = int(time.time())
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": where.issuer,
        "jti": secrets.token_urlsafe(16),
        "iat": now,
        "exp": now + 300,
    }
    try:
        return jwt.encode(claims, client.private_key_pem or "", algorithm=client.signing_algorithm)
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise McpOAuthError(
            f"the private key for client {client.client_id!r} cannot sign a {client.signing_algorithm} "
            f"assertion ({exc}); check the PEM key named in mcp.json"
        ) from None


def register(
    web: httpx.Client,
    meta: Mapping[str, Any],
    issuer: str,
    redirect_uri: str,
    client_name: str,
    application_type: str = "web",
) -> OAuthClient:
    """Register yiem as a public client (dynamic client registration)."""
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
        "application_type": application_type,
    }
    try:
        answer = web.post(str(endpoint), json=document)
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"registering with the authorization server failed: {exc}") from exc
    body = json_or_empty(answer)
    if answer.status_code not in (200, 201) or not isinstance(body.get("client_id"), str):
        said = body.get("error_description") or body.get("error") or f"HTTP {answer.status_code}"
        raise McpOAuthError(f"the authorization server refused to register yiem: {said}")
    method = body.get("token_endpoint_auth_method")
    known = method in ("none", "client_secret_basic", "client_secret_post")
    return OAuthClient(
        client_id=body["client_id"],
        client_secret=body.get("client_secret"),
        token_endpoint_auth_method=method if known else None,
        issuer=issuer,
    )


def token_request(web: httpx.Client, where: Endpoints, form: dict[str, str]) -> dict[str, Any]:
    """POST `form` to the token endpoint, authenticated (and DPoP-signed when the grant is bound);
    the fields of the answer a grant keeps."""
    extra, headers = client_authentication(where.client, where)
    key = DpopKey(where.dpop_key) if where.dpop_key else None
    answer = _post(web, where, {**form, **extra}, headers, key)
    if key is not None and key.learn_nonce(where.token_endpoint, answer):
        answer = _post(web, where, {**form, **extra}, headers, key)  # the nonce it asked for (RFC 9449 §8)
    body = json_or_empty(answer)
    token = body.get("access_token")
    if answer.status_code != 200 or not isinstance(token, str):
        said = body.get("error_description") or body.get("error") or f"HTTP {answer.status_code}"
        raise McpOAuthError(f"the authorization server gave no token: {said}")
    tokens: dict[str, Any] = {"access_token": token}
    if isinstance(body.get("token_type"), str):
        tokens["token_type"] = "DPoP" if body["token_type"].lower() == "dpop" else "Bearer"
    if isinstance(body.get("refresh_token"), str):
        tokens["refresh_token"] = body["refresh_token"]
    if isinstance(body.get("expires_in"), int | float):
        tokens["expires_at"] = time.time() + float(body["expires_in"])
    if isinstance(body.get("scope"), str):
        tokens["scope"] = body["scope"]
    return tokens


def _post(
    web: httpx.Client, where: Endpoints, form: dict[str, str], headers: dict[str, str], key: DpopKey | None
) -> httpx.Response:
    if key is not None:
        headers = {**headers, "DPoP": key.proof("POST", where.token_endpoint)}
    try:
        return web.post(where.token_endpoint, data=form, headers=headers)
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"could not reach the authorization server's token endpoint: {exc}") from exc
