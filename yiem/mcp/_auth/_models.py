"""What a sign-in to an MCP server is made of: the server's challenge, the client, the grant."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from yiem.mcp.errors import McpConnectionError, McpError

# A token this close to its end is refreshed before it is sent.
REFRESH_MARGIN_SECONDS = 60.0

TokenAuthMethod = Literal["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]


class McpOAuthError(McpError):
    """Signing in to an MCP server failed; the message says at which step and why."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(-32000, message, data)

    def _describe(self) -> str:
        return self.message


class OAuthIssuerError(McpOAuthError):
    """The authorization server's answer names another issuer than the one yiem asked (RFC 9207)."""


class OAuthChallenge(BaseModel):
    """What a server's `WWW-Authenticate: Bearer …` (or `DPoP …`) asks for."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    # "dpop" when the server asks for DPoP-bound tokens (RFC 9449 §7.1), else "bearer".
    scheme: str = "bearer"


class McpSignInRequiredError(McpConnectionError):
    """The server needs a signed-in person (401), or more access than the token gives (403)."""

    def __init__(self, server_url: str, challenge: OAuthChallenge, words: str | None = None) -> None:
        self.server_url = server_url
        self.challenge = challenge
        more = challenge.error == "insufficient_scope"
        if words is None and more:
            words = f"MCP server {server_url} asks for more access ({challenge.scope or 'another scope'})"
        elif words is None:
            words = f"MCP server {server_url} needs you to sign in"
        super().__init__(words, data={"status": 403 if more else 401})

    def _describe(self) -> str:
        return self.message


class OAuthClient(BaseModel):
    """The client yiem is at one authorization server: pre-registered (mcp.json), registered, or a
    Client ID Metadata Document URL. `issuer` binds it to that server: never shown to another."""

    client_id: str
    client_secret: str | None = None
    # How the authorization server said this client authenticates (its registration answer).
    token_endpoint_auth_method: TokenAuthMethod | None = None
    # A PEM private key for private_key_jwt (machine sign-in); never stored with a grant.
    private_key_pem: str | None = None
    signing_algorithm: str = "ES256"
    issuer: str | None = None


class Endpoints(BaseModel):
    """Where one sign-in happens: the server, the resource its tokens are for, its authorization server."""

    server_url: str
    resource: str
    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str
    revocation_endpoint: str | None = None
    token_endpoint_auth_methods: list[str] | None = None
    client: OAuthClient
    scope: str = ""
    # The DPoP key (a private JWK, JSON) when tokens are bound to it (RFC 9449); a secret.
    dpop_key: str | None = None


class PendingSignIn(Endpoints):
    """A sign-in under way: the page the person opens, and what the way back must match."""

    state: str
    code_verifier: str
    redirect_uri: str
    authorization_url: str
    # Whether the authorization server promised to name itself (`iss`) on the way back (RFC 9207).
    iss_required: bool = False


class OAuthGrant(Endpoints):
    """What is kept per person and server (encrypted): the tokens and how to refresh them."""

    model_config = ConfigDict(extra="ignore")

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    # "client_credentials" for a machine sign-in: renewed from its credentials, not a refresh token.
    grant_type: str = "authorization_code"

    def expiring(self, margin: float = REFRESH_MARGIN_SECONDS) -> bool:
        return self.expires_at is not None and self.expires_at - margin <= time.time()
