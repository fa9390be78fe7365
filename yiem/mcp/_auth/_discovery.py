"""Finding who signs a person in to an MCP server: its protected-resource metadata (RFC 9728) and
its authorization server's metadata (RFC 8414 / OpenID Connect Discovery), each checked."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from yiem.mcp._auth._models import McpOAuthError, OAuthChallenge, OAuthIssuerError

_TIMEOUT = httpx.Timeout(15.0)
_PARAM = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')
_SCHEMES = ("bearer", "dpop")


@dataclass(frozen=True)
class ResourceMetadata:
    """What the MCP server says of itself: the resource its tokens are for and who issues them."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str]
    # Whether the server wants tokens bound to a DPoP key (RFC 9728 §2, or a `DPoP` challenge).
    dpop: bool = False


def parse_challenge(header: str | None) -> OAuthChallenge | None:
    """The parameters of a `Bearer` or `DPoP` challenge (RFC 6750, RFC 9449, RFC 9728), else None."""
    if not header or not header.strip().lower().startswith(_SCHEMES):
        return None
    params = {m[1].lower(): (m[2] if m[2] else m[3]) for m in _PARAM.finditer(header)}
    return OAuthChallenge(
        scheme="dpop" if header.strip().lower().startswith("dpop") else "bearer",
        resource_metadata=params.get("resource_metadata"),
        scope=params.get("scope"),
        error=params.get("error"),
    )


def canonical_resource(url: str) -> str:
    """The server's URL as the `resource` parameter (RFC 8707): lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether tokens for `resource` are meant for `server_url`: same origin, and its path is the
    server's path or a parent of it (RFC 9728 §3.3, as the MCP SDKs check it)."""
    named, server = urlsplit(resource), urlsplit(server_url)
    if (named.scheme.lower(), named.netloc.lower()) != (server.scheme.lower(), server.netloc.lower()):
        return False
    prefix, path = named.path.rstrip("/"), server.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


@contextlib.contextmanager
def web_client(http: httpx.Client | None) -> Iterator[httpx.Client]:
    """The caller's httpx client for the sign-in steps, or one of our own, closed after."""
    if http is not None:
        yield http
        return
    with httpx.Client(timeout=_TIMEOUT, follow_redirects=False) as own:
        yield own


def json_or_empty(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def protected_resource(web: httpx.Client, server_url: str, challenge: OAuthChallenge) -> ResourceMetadata:
    """The server's protected-resource metadata, refused when it names tokens for another resource."""
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
            return _resource_metadata(server_url, found, challenge.scheme == "dpop")
    raise McpOAuthError(
        f"MCP server {server_url} asks for sign-in but publishes no protected-resource metadata"
    )


def _resource_metadata(server_url: str, found: dict[str, Any], dpop_challenge: bool) -> ResourceMetadata:
    named = found.get("resource")
    resource = named if isinstance(named, str) and named else canonical_resource(server_url)
    if not resource_covers(resource, server_url):
        raise McpOAuthError(
            f"MCP server {server_url} says its sign-in is for {resource}, which is not this server: "
            "not signing in (a token for another server could be misused there). Check the server's "
            "URL, or ask its operator to fix `resource` in its protected-resource metadata."
        )
    issuers = found.get("authorization_servers") or []
    if not isinstance(issuers, list) or not issuers or not isinstance(issuers[0], str):
        raise McpOAuthError(f"MCP server {server_url} names no authorization server in its metadata")
    scopes = found.get("scopes_supported") or []
    dpop = dpop_challenge or found.get("dpop_bound_access_tokens_required") is True
    return ResourceMetadata(resource, issuers, [s for s in scopes if isinstance(s, str)], dpop)


def authorization_server(web: httpx.Client, issuer: str) -> dict[str, Any]:
    """The metadata of `issuer`, which must name itself exactly so (RFC 8414 §3.3)."""
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
        if found is not None and found.get("token_endpoint"):
            if found.get("issuer") not in (None, issuer):
                raise OAuthIssuerError(
                    f"the authorization server at {issuer} calls itself {found.get('issuer')!r} in its "
                    "metadata, so its answers cannot be told from another server's: not signing in. "
                    "Ask the MCP server's operator to make its `authorization_servers` entry and the "
                    "authorization server's `issuer` the same URL."
                )
            return found
    raise McpOAuthError(f"the authorization server {issuer} publishes no usable metadata")


def _get_json(web: httpx.Client, url: str, what: str) -> dict[str, Any] | None:
    try:
        answer = web.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise McpOAuthError(f"could not read {what} at {url}: {exc}") from exc
    if answer.status_code != 200:
        return None
    body = json_or_empty(answer)
    return body or None
