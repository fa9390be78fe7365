// A real OAuth 2.1 authorization server (the `oidc-provider` package) for yiem's MCP sign-in tests.
//
//   node mcp_auth.mjs PORT INTROSPECTION_SECRET ACCESS_TOKEN_TTL_SECONDS
//
// Listens on 127.0.0.1:PORT. Clients register themselves (dynamic client registration, RFC 7591);
// authorization code with PKCE (S256 only) and resource indicators (RFC 8707): an access token is
// issued for one resource (its `aud`), with the scopes `mcp:tools` and `mcp:admin` asked for.
// Refresh tokens are issued to clients that registered the refresh_token grant. The client
// `mcp-server` (secret INTROSPECTION_SECRET) is the protected MCP server, which introspects tokens
// (RFC 7662). The package's own pages ask for a login name (ann or bob; any password), then for
// consent to the scopes.
// Prints "listening" when ready.
import Provider from 'oidc-provider';

const [port, introspectionSecret, ttlArg] = process.argv.slice(2);
if (!port || !introspectionSecret) {
  console.error('usage: node mcp_auth.mjs PORT INTROSPECTION_SECRET [ACCESS_TOKEN_TTL_SECONDS]');
  process.exit(2);
}
const accessTokenTTL = Number(ttlArg || 3600);
const USERS = new Set(['ann', 'bob']);
const RESOURCE_SCOPES = 'mcp:tools mcp:admin';

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'mcp-server',
      client_secret: introspectionSecret,
      redirect_uris: [],
      response_types: [],
      grant_types: [],
    },
  ],
  scopes: ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'],
  async findAccount(ctx, id) {
    if (!USERS.has(id)) return undefined;
    return { accountId: id, async claims() { return { sub: id }; } };
  },
  async issueRefreshToken(ctx, client) {
    return client.grantTypeAllowed('refresh_token');
  },
  pkce: { required: () => true },
  ttl: { AccessToken: accessTokenTTL, AuthorizationCode: 120, RefreshToken: 86400, Session: 600, Interaction: 600, Grant: 86400 },
  features: {
    devInteractions: { enabled: true }, // the package's own login form: the login name is the account
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      async getResourceServerInfo(ctx, resourceIndicator) {
        return { scope: RESOURCE_SCOPES, audience: resourceIndicator, accessTokenTTL, accessTokenFormat: 'opaque' };
      },
    },
  },
});
provider.proxy = false;

const server = provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${port}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
