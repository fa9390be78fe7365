"""Signing in again while a program works with a server: when it answers 401 or 403, a new grant
is fetched and the call repeated, a bounded number of times, so a server that is never satisfied
ends in words instead of a loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from yiem.mcp._auth._grant_auth import GrantAuth
from yiem.mcp._auth._models import McpSignInRequiredError, OAuthGrant

# Sign-ins in a row without a call getting through, before giving up (the MCP spec asks for a limit).
MAX_SIGN_INS = 3

T = TypeVar("T")
SignIn = Callable[[McpSignInRequiredError, OAuthGrant | None], OAuthGrant]


class McpSignInLoopError(McpSignInRequiredError):
    """The server still refused after `MAX_SIGN_INS` fresh sign-ins."""


class SignInSession:
    """Runs calls with `auth`, signing in by `sign_in(refusal, previous grant)` when refused."""

    def __init__(self, auth: GrantAuth, sign_in: SignIn, max_sign_ins: int = MAX_SIGN_INS) -> None:
        self.auth = auth
        self._sign_in = sign_in
        self._max = max_sign_ins

    def run(self, call: Callable[[], T]) -> T:
        rounds = 0
        while True:
            try:
                return call()
            except McpSignInRequiredError as refused:
                if rounds >= self._max:
                    wanted = refused.challenge.scope or "access it does not name"
                    raise McpSignInLoopError(
                        refused.server_url,
                        refused.challenge,
                        f"MCP server {refused.server_url} still refuses after {rounds} sign-ins in a row "
                        f"(it asks for {wanted}); yiem stopped trying. The account may not have that "
                        "access: ask the server's operator.",
                    ) from refused
                rounds += 1
                self.auth.use(self._sign_in(refused, self.auth.grant))
