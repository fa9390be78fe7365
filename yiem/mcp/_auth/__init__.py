"""MCP authorization: signing people in (authorization code, PKCE, RFC 9207 issuer checks), machine
sign-in (client credentials), DPoP-bound tokens, and the credentials an HTTP transport sends."""

from yiem.mcp._auth._cimd import client_metadata_document, is_client_metadata_url
from yiem.mcp._auth._discovery import canonical_resource, parse_challenge, resource_covers
from yiem.mcp._auth._flow import check_issuer, finish_sign_in, refresh_grant, revoke_grant, start_sign_in
from yiem.mcp._auth._grant_auth import GrantAuth
from yiem.mcp._auth._machine import client_credentials_grant
from yiem.mcp._auth._models import (
    McpOAuthError,
    McpSignInRequiredError,
    OAuthChallenge,
    OAuthClient,
    OAuthGrant,
    OAuthIssuerError,
    PendingSignIn,
)
from yiem.mcp._auth._session import MAX_SIGN_INS, McpSignInLoopError, SignInSession
from yiem.mcp._auth._token import token_auth_method

__all__ = [
    "MAX_SIGN_INS",
    "GrantAuth",
    "McpOAuthError",
    "McpSignInLoopError",
    "McpSignInRequiredError",
    "OAuthChallenge",
    "OAuthClient",
    "OAuthGrant",
    "OAuthIssuerError",
    "PendingSignIn",
    "SignInSession",
    "canonical_resource",
    "check_issuer",
    "client_credentials_grant",
    "client_metadata_document",
    "finish_sign_in",
    "is_client_metadata_url",
    "parse_challenge",
    "refresh_grant",
    "resource_covers",
    "revoke_grant",
    "start_sign_in",
    "token_auth_method",
]
