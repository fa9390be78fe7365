"""Sign-ins to OAuth-protected MCP servers for the Tools page: each person's grants, sealed in the
store, and the sign-ins under way (between the person leaving for the sign-in page and coming back)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from pydantic import ValidationError
from sqlalchemy import Engine, delete, insert, select, update

from yiem.errors import YiemError
from yiem.mcp import (
    GrantAuth,
    McpServerConfig,
    OAuthChallenge,
    OAuthClient,
    OAuthGrant,
    PendingSignIn,
    client_metadata_document,
    finish_sign_in,
    is_client_metadata_url,
    start_sign_in,
)
from yiem.providers import configured_secret
from yiem.redaction import add_secrets
from yiem.store import mcp_sign_ins

# How long a person may take on the sign-in page before the request is forgotten.
PENDING_SECONDS = 600.0
KEY_NAME = "YIEM_TOKEN_KEY"
# The app's https address as people reach it (behind a proxy): it then serves its own client
# metadata document, and authorization servers that support those need no registration.
PUBLIC_URL_NAME = "YIEM_PUBLIC_URL"
CLIENT_METADATA_FILE = "client-metadata.json"


class SignInError(YiemError):
    """A sign-in came back that this server did not start, or too late, or for someone else."""


def sealing_key(secret: str | None = None) -> bytes:
    """The Fernet key for grants: from `YIEM_TOKEN_KEY` (environment or secrets.toml), else one for
    this process only, so without it a sign-in lasts until the app restarts."""
    secret = secret if secret is not None else configured_secret(KEY_NAME)
    if not secret:
        return _PROCESS_KEY
    return base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest())


_PROCESS_KEY = Fernet.generate_key()


class GrantVault:
    """One person's grants, one per server URL, encrypted before they reach the database."""

    def __init__(self, engine: Engine, owner: str, key: bytes | None = None) -> None:
        self.engine = engine
        self.owner = owner
        self._fernet = Fernet(key or sealing_key())

    def load(self, server_url: str) -> OAuthGrant | None:
        with self.engine.connect() as conn:
            sealed = conn.execute(
                select(mcp_sign_ins.c.sealed).where(
                    mcp_sign_ins.c.owner == self.owner, mcp_sign_ins.c.server_url == server_url
                )
            ).scalar()
        if sealed is None:
            return None
        try:
            grant = OAuthGrant.model_validate_json(self._fernet.decrypt(sealed.encode()))
        except (InvalidToken, ValidationError):
            return None  # sealed under another key (the app restarted without YIEM_TOKEN_KEY): sign in again
        _keep_secret(grant)
        return grant

    def save(self, grant: OAuthGrant) -> None:
        _keep_secret(grant)
        sealed = self._fernet.encrypt(grant.model_dump_json().encode()).decode()
        now = int(time.time() * 1000)
        where = (mcp_sign_ins.c.owner == self.owner, mcp_sign_ins.c.server_url == grant.server_url)
        with self.engine.begin() as conn:
            changed = conn.execute(update(mcp_sign_ins).where(*where).values(sealed=sealed, updated_ms=now))
            if not changed.rowcount:
                conn.execute(
                    insert(mcp_sign_ins).values(
                        owner=self.owner, server_url=grant.server_url, sealed=sealed, updated_ms=now
                    )
                )

    def forget(self, server_url: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                delete(mcp_sign_ins).where(
                    mcp_sign_ins.c.owner == self.owner, mcp_sign_ins.c.server_url == server_url
                )
            )

    def auth(self, server_url: str) -> GrantAuth | None:
        """The token source for a connection, saving each refreshed grant; None when not signed in."""
        grant = self.load(server_url)
        return GrantAuth(grant, on_refresh=self.save) if grant is not None else None


def _keep_secret(grant: OAuthGrant) -> None:
    # Tokens are secrets: redaction masks them in anything stored, exported, logged or shown.
    add_secrets(grant.access_token, grant.refresh_token, grant.client.client_secret, grant.dpop_key)


def publish_client_metadata(static_dir: Path, public_url: str) -> str | None:
    """Write the app's Client ID Metadata Document where Streamlit serves static files
    (`/app/static/`); its URL (the client id), or None when the app has no https address."""
    base = public_url.rstrip("/")
    url = f"{base}/app/static/{CLIENT_METADATA_FILE}"
    if not is_client_metadata_url(url):
        return None
    static_dir.mkdir(parents=True, exist_ok=True)
    document = client_metadata_document(url, [f"{base}/tools"])
    (static_dir / CLIENT_METADATA_FILE).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return url


@dataclass
class _Pending:
    owner: str
    name: str
    entry: McpServerConfig
    request: PendingSignIn
    started: float


@dataclass
class CompletedSignIn:
    """A sign-in that came back: the server it was for (as the person added it) and its grant."""

    name: str
    entry: McpServerConfig
    grant: OAuthGrant


class PendingSignIns:
    """Sign-ins under way in this server process, by their `state`: the way back opens a new browser
    session, which finds its request here (and only the person who started it can finish it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}

    def begin(
        self,
        owner: str,
        name: str,
        entry: McpServerConfig,
        server_url: str,
        challenge: OAuthChallenge,
        redirect_uri: str,
        client: OAuthClient | None = None,
        *,
        client_metadata_url: str | None = None,
        previous: OAuthGrant | None = None,
    ) -> PendingSignIn:
        """Start a sign-in; `previous` is the grant a server found too narrow (its scopes are kept)."""
        request = start_sign_in(
            server_url,
            challenge,
            redirect_uri,
            client=client,
            client_name="yiem",
            client_metadata_url=client_metadata_url,
            previous=previous,
        )
        with self._lock:
            self._drop_old()
            self._pending[request.state] = _Pending(owner, name, entry, request, time.monotonic())
        return request

    def complete(self, owner: str, params: dict[str, str]) -> CompletedSignIn:
        with self._lock:
            self._drop_old()
            pending = self._pending.get(params.get("state", ""))
            if pending is None or pending.owner != owner:
                raise SignInError(
                    "This sign-in was not started here, or took longer than 10 minutes: sign in again."
                )
            del self._pending[pending.request.state]
        grant = finish_sign_in(pending.request, params)
        return CompletedSignIn(pending.name, pending.entry, grant)

    def _drop_old(self) -> None:
        now = time.monotonic()
        for state in [s for s, p in self._pending.items() if now - p.started > PENDING_SECONDS]:
            del self._pending[state]
