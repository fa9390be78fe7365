"""DPoP (RFC 9449): tokens bound to a key of ours, each request signed with a fresh proof, and the
nonces servers hand out to make proofs unreplayable."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from yiem.errors import YiemError

ALGORITHM = "ES256"


def wants_dpop(metadata: dict[str, Any]) -> bool:
    """Whether the authorization server binds tokens to a DPoP key we can sign with."""
    algorithms = metadata.get("dpop_signing_alg_values_supported")
    return isinstance(algorithms, list) and ALGORITHM in algorithms


class DpopKeyError(YiemError, ValueError):
    """A stored DPoP key that is not a private P-256 key."""


class DpopKey:
    """One P-256 key: made fresh for a sign-in, or read back from the grant that holds it."""

    def __init__(self, private_jwk: str | None = None) -> None:
        key = ECAlgorithm.from_jwk(private_jwk) if private_jwk else ec.generate_private_key(ec.SECP256R1())
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise DpopKeyError("a DPoP key must be a private EC key")
        self._key = key
        self.private_jwk = ECAlgorithm.to_jwk(key)
        public = json.loads(ECAlgorithm.to_jwk(key.public_key()))
        self.public_jwk = {name: public[name] for name in ("kty", "crv", "x", "y")}
        self._lock = threading.Lock()
        self._nonces: dict[str, str] = {}

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request (`ath` binds it to the token it carries)."""
        parts = urlsplit(url)
        target = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": target,
            "iat": int(time.time()),
        }
        if access_token:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        with self._lock:
            nonce = self._nonces.get(_origin(url))
        if nonce:
            claims["nonce"] = nonce
        headers = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers=headers)

    def learn_nonce(self, url: str, response: httpx.Response) -> bool:
        """Keep the nonce a server sent; True when it asked for one (`use_dpop_nonce`): retry once."""
        nonce = response.headers.get("dpop-nonce")
        if not nonce:
            return False
        with self._lock:
            self._nonces[_origin(url)] = nonce
        # A server sends a nonce with its `use_dpop_nonce` refusal (400 from a token endpoint, 401 from
        # a resource), or with a success for the next request.
        return response.status_code in (400, 401)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
