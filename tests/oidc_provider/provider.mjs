// A real OpenID Connect provider (the `oidc-provider` package) for yiem's sign-in tests.
//
//   node provider.mjs PORT APP_URL CLIENT_SECRET
//
// Listens on 127.0.0.1:PORT with one client, `yiem`, whose redirect URI is APP_URL/oauth2callback
// (what Streamlit's st.login sends). The login form takes the person's login name (ann, bob or
// carol; any password); consent is granted without a second page, as a company's own app would be.
// carol is in the `yiem-admins` group (the `groups` claim). Prints "listening" when ready.
import Provider from 'oidc-provider';

const [port, appUrl, clientSecret] = process.argv.slice(2);
if (!port || !appUrl || !clientSecret) {
  console.error('usage: node provider.mjs PORT APP_URL CLIENT_SECRET');
  process.exit(2);
}
const callback = `${appUrl.replace(/\/$/, '')}/oauth2callback`;

const USERS = {
  ann: { email: 'ann@example.com', name: 'Ann Example', groups: [] },
  bob: { email: 'bob@example.com', name: 'Bob Example', groups: [] },
  carol: { email: 'carol@example.com', name: 'Carol Admin', groups: ['yiem-admins'] },
};

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'yiem',
      client_secret: clientSecret,
      redirect_uris: [callback],
      post_logout_redirect_uris: [callback, appUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  // The ID token carries the scopes' claims (Streamlit reads st.user from it).
  conformIdTokenClaims: false,
  cookies: { keys: [clientSecret] },
  async findAccount(ctx, id) {
    const user = USERS[id];
    if (!user) return undefined; // an unknown login name cannot sign in
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: user.email, email_verified: true, name: user.name, groups: user.groups };
      },
    };
  },
  // First-party app: the scopes asked for are granted at once (no consent page).
  async loadExistingGrant(ctx) {
    const { client, session } = ctx.oidc;
    const found = session.grantIdFor(client.clientId);
    if (found) return ctx.oidc.provider.Grant.find(found);
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
  features: {
    devInteractions: { enabled: true }, // the package's own login form: the login name is the account
    rpInitiatedLogout: {
      enabled: true,
      // Signing out of the app signs out here too, without a "do you want to sign out" page.
      async logoutSource(ctx, form) {
        ctx.body = `<!DOCTYPE html><html><body>${form}<script>
          const f = document.getElementById('op.logoutForm');
          const yes = document.createElement('input');
          yes.type = 'hidden'; yes.name = 'logout'; yes.value = 'yes';
          f.appendChild(yes); f.submit();
        </script></body></html>`;
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
