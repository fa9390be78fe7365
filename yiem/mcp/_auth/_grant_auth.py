"""The credentials an HTTP transport sends: a grant's token as `Bearer` or, bound to a key, as
`DPoP` with a fresh proof per request; refreshed (or renewed) before it expires."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator

import httpx

from yiem.mcp._auth._dpop import DpopKey
from yiem.mcp._auth._flow import refresh_grant
from yiem.mcp._auth._models import OAuthGrant

OnRefresh = Callable[[OAuthGrant], None]


class GrantAuth(httpx.Auth):
    """httpx authentication from an OAuth grant; thread-safe. Without a grant (not signed in yet)
    requests go out as they are. `renew` replaces refreshing for grants without a refresh token
    (machine sign-in)."""

    def __init__(
        self,
        grant: OAuthGrant | None,
        on_refresh: OnRefresh | None = None,
        renew: Callable[[OAuthGrant], OAuthGrant] | None = None,
    ) -> None:
        self._grant = grant
        self._on_refresh = on_refresh
        self._renew = renew
        self._lock = threading.Lock()
        self._key: DpopKey | None = None

    @property
    def grant(self) -> OAuthGrant | None:
        return self._grant

    def use(self, grant: OAuthGrant) -> None:
        """Send `grant` from now on (a new sign-in)."""
        with self._lock:
            self._grant, self._key = grant, None

    def current(self) -> OAuthGrant | None:
        """The grant to send now, refreshed first when it is about to expire."""
        with self._lock:
            grant = self._grant
            if grant is not None and grant.expiring():
                grant = self._renew(grant) if self._renew is not None else refresh_grant(grant)
                self._grant = grant
                if self._on_refresh is not None:
                    self._on_refresh(grant)
            return grant

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        grant = self.current()
        if grant is None:
            yield request
            return
        key = self._dpop_key(grant)
        self._sign(request, grant, key)
        response = yield request
        if key is not None and response.status_code == 401 and key.learn_nonce(str(request.url), response):
            self._sign(request, grant, key)  # again, with the nonce the server asked for (RFC 9449 §9)
            yield request

    def _dpop_key(self, grant: OAuthGrant) -> DpopKey | None:
        if grant.token_type != "DPoP" or not grant.dpop_key:
            return None
        with self._lock:
            if self._key is None:
                self._key = DpopKey(grant.dpop_key)
            return self._key

    @staticmethod
    def _sign(request: httpx.Request, grant: OAuthGrant, key: DpopKey | None) -> None:
        if key is None:
            request.headers["Authorization"] = f"Bearer {grant.access_token}"
            return
        request.headers["Authorization"] = f"DPoP {grant.access_token}"
        request.headers["DPoP"] = key.proof(request.method, str(request.url), grant.access_token)
