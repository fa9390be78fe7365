"""Each person's MCP sign-ins: grants sealed in the store (SQLite and PostgreSQL), never in the clear,
and a sign-in under way finished only by the person who started it, against the real servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.fixtures.mcp_oauth import ProtectedServers, sign_in_in_browser
from yiem.explorer import GrantVault, PendingSignIns, SignInError, publish_client_metadata, sealing_key
from yiem.mcp import HttpServerConfig, McpClient, McpSignInRequiredError, OAuthClient, OAuthGrant
from yiem.redaction import redact
from yiem.store import create_store_engine, mcp_sign_ins

REDIRECT = "http://127.0.0.1:8501/tools"
ANN, BOB = "ann@example.com", "bob@example.com"


def _grant(server: str = "http://127.0.0.1:9/mcp", token: str = "access-token-of-ann-0123") -> OAuthGrant:
    return OAuthGrant(
        server_url=server,
        resource=server,
        issuer="http://127.0.0.1:8",
        authorization_endpoint="http://127.0.0.1:8/auth",
        token_endpoint="http://127.0.0.1:8/token",
        client=OAuthClient(client_id="client-1"),
        scope="mcp:tools",
        access_token=token,
        refresh_token="refresh-token-of-ann-0123",
    )


def test_grants_are_sealed_and_each_persons_own(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    key = sealing_key("an operator's secret")
    ann, bob = GrantVault(engine, ANN, key), GrantVault(engine, BOB, key)
    ann.save(_grant())
    ann.save(_grant(token="access-token-of-ann-4567"))  # a refresh replaces the grant
    with engine.connect() as conn:
        rows = conn.execute(select(mcp_sign_ins)).all()
    assert len(rows) == 1 and "access-token" not in rows[0].sealed and "refresh-token" not in rows[0].sealed
    assert ann.load("http://127.0.0.1:9/mcp").access_token == "access-token-of-ann-4567"  # type: ignore[union-attr]
    assert bob.load("http://127.0.0.1:9/mcp") is None
    bob.forget("http://127.0.0.1:9/mcp")
    assert ann.load("http://127.0.0.1:9/mcp") is not None
    # Under another key (the app restarted without YIEM_TOKEN_KEY) it is as if never signed in.
    assert GrantVault(engine, ANN, sealing_key("another secret")).load("http://127.0.0.1:9/mcp") is None
    assert "access-token-of-ann" not in redact("the token access-token-of-ann-4567 leaked")
    ann.forget("http://127.0.0.1:9/mcp")
    assert ann.load("http://127.0.0.1:9/mcp") is None


def test_a_sign_in_is_finished_only_by_whoever_started_it(
    protected_mcp: ProtectedServers, tmp_path: Path
) -> None:
    url = protected_mcp.tools
    entry = HttpServerConfig(url=url)
    with pytest.raises(McpSignInRequiredError) as raised:
        McpClient.http(url)
    pending = PendingSignIns()
    request = pending.begin(ANN, "protected", entry, url, raised.value.challenge, REDIRECT)
    back = sign_in_in_browser(request, "ann")
    with pytest.raises(SignInError, match="not started here"):
        pending.complete(BOB, back)
    done = pending.complete(ANN, back)
    assert (done.name, done.entry) == ("protected", entry)
    with pytest.raises(SignInError):  # once only
        pending.complete(ANN, back)

    vault = GrantVault(create_store_engine(f"sqlite:///{tmp_path / 'yiem.db'}"), ANN)
    vault.save(done.grant)
    client = McpClient.http(url, auth=vault.auth(url))
    try:
        assert client.call_tool("whoami", {}).content[0].text == "signed in as ann"  # type: ignore[union-attr]
    finally:
        client.close()


def test_the_client_metadata_document_is_published_only_for_an_https_address(tmp_path: Path) -> None:
    assert publish_client_metadata(tmp_path, "http://127.0.0.1:8501") is None
    assert not (tmp_path / "client-metadata.json").exists()
    url = publish_client_metadata(tmp_path, "https://yiem.example.com/")
    assert url == "https://yiem.example.com/app/static/client-metadata.json"
    document = json.loads((tmp_path / "client-metadata.json").read_text())
    assert document["client_id"] == url and document["redirect_uris"] == ["https://yiem.example.com/tools"]
    assert document["grant_types"] == ["authorization_code", "refresh_token"]
