"""An MCP server that only answers with an OAuth access token, built on the official SDK's auth.

    python -m tests.mcp_servers.protected PORT AUTH_SERVER_URL INTROSPECTION_SECRET [SCOPES]

Streamable HTTP on http://127.0.0.1:PORT/mcp. The SDK serves the protected-resource metadata and
answers 401 with `WWW-Authenticate: Bearer resource_metadata=…` (403 `insufficient_scope` when a
scope in SCOPES, default `mcp:tools`, is missing). Tokens are checked by introspection at the
authorization server, and only a token issued for this server's URL (its audience) is accepted.
The tool `whoami` says whose token it is.
"""

from __future__ import annotations

import sys

import httpx
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


class IntrospectingVerifier:
    """Asks the authorization server whether a token is active, for whom and for which resource."""

    def __init__(self, auth_server: str, secret: str) -> None:
        self.endpoint = f"{auth_server}/token/introspection"
        self.secret = secret

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(self.endpoint, data={"token": token}, auth=("mcp-server", self.secret))
        info = answer.json() if answer.status_code == 200 else {}
        if not info.get("active"):
            return None
        audience = info.get("aud")
        return AccessToken(
            token=token,
            client_id=str(info.get("client_id", "")),
            scopes=str(info.get("scope", "")).split(),
            expires_at=info.get("exp"),
            resource=audience[0] if isinstance(audience, list) else audience,
            subject=info.get("sub"),
        )


def main() -> None:
    port, auth_server, secret = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    scopes = sys.argv[4].split(",") if len(sys.argv) > 4 else ["mcp:tools"]
    url = f"http://127.0.0.1:{port}/mcp"
    server: MCPServer = MCPServer(
        "protected-test-server",
        token_verifier=IntrospectingVerifier(auth_server, secret),
        auth=AuthSettings(
            issuer_url=auth_server,
            resource_server_url=url,
            required_scopes=scopes,
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Whose access token this request carries."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"signed in as {token.subject if token else 'nobody'}"

    server.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
