"""Signing in to an OAuth-protected MCP server from the Tools page, and the way back from its page."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

from ui import bootstrap
from ui.state import SIGN_IN_NEEDED, SIGN_IN_STARTED, SIGNED_IN, sign_in_scope
from yiem.explorer import PUBLIC_URL_NAME, GrantVault, PendingSignIns, SignInError, publish_client_metadata
from yiem.mcp import (
    HttpServerConfig,
    McpConfigError,
    McpError,
    McpServerConfig,
    OAuthChallenge,
    OAuthClient,
    resolve_server,
    revoke_grant,
)


@st.cache_resource(show_spinner=False)
def pending_sign_ins() -> PendingSignIns:
    """The sign-ins under way in this server process (the way back opens a new browser session)."""
    return PendingSignIns()


@st.cache_resource(show_spinner=False)
def client_metadata_url() -> str | None:
    """The URL of the app's own client metadata document (its OAuth client id), when the app has a
    public https address; written once per server process into the static folder Streamlit serves."""
    public = bootstrap.secret(PUBLIC_URL_NAME)
    return publish_client_metadata(_STATIC_DIR, public) if public else None


_STATIC_DIR = Path(__file__).resolve().parents[2] / "static"


def vault() -> GrantVault:
    return bootstrap.grant_vault()


def needs_sign_in(name: str, url: str, challenge: OAuthChallenge) -> None:
    """Remember that `name` asked for a sign-in, so its panel offers one."""
    SIGN_IN_NEEDED.setdefault(dict)[name] = (url, challenge)
    SIGN_IN_STARTED.get({}).pop(name, None)


def clear(name: str) -> None:
    SIGN_IN_NEEDED.get({}).pop(name, None)
    SIGN_IN_STARTED.get({}).pop(name, None)


def draw_sign_in(name: str, entry: McpServerConfig, *, typed: bool) -> bool:
    """The sign-in offer for a server that asked for one; False when it did not ask. A `typed` entry
    (added in the browser) is taken literally, as for connecting."""
    needed = SIGN_IN_NEEDED.get({}).get(name)
    if needed is None:
        return False
    url, challenge = needed
    more = challenge.error == "insufficient_scope"
    with st.container(border=True):
        st.markdown(
            f":material/lock: **{name}** {'asks for more access' if more else 'needs you to sign in'}."
        )
        started: dict[str, str] = SIGN_IN_STARTED.setdefault(dict)
        if name not in started:
            st.caption(
                "You sign in on the server's own page, in a new tab; yiem keeps the tokens for you "
                "(encrypted), never shows them, and you can sign out here."
            )
            if st.button("Sign in", type="primary", icon=":material/login:", key=f"tools-sign-in-{name}"):
                try:
                    request = pending_sign_ins().begin(
                        bootstrap.owner().id,
                        name,
                        entry,
                        url,
                        challenge,
                        _redirect_uri(),
                        _client(entry, typed),
                        client_metadata_url=client_metadata_url(),
                        previous=vault().load(url) if more else None,
                    )
                except McpError as error:
                    st.error(str(error))
                    return True
                started[name] = request.authorization_url
                sign_in_scope(name).set(request.scope)
                st.rerun()
        else:
            scope = sign_in_scope(name).get("")
            st.markdown(f"It asks for: {', '.join(f'`{s}`' for s in scope.split()) or 'no named scope'}.")
            st.link_button("Open the sign-in page", started[name], icon=":material/open_in_new:")
            st.caption("After signing in you come back to this page, in that tab, connected.")
    return True


def finish_from_url() -> None:
    """On the way back from a sign-in page (`?code=…&state=…`): keep the grant, connect on this run."""
    client_metadata_url()  # published before any authorization server comes to read it
    params = {
        key: st.query_params[key]
        for key in ("code", "state", "iss", "error", "error_description")
        if key in st.query_params
    }
    if "state" not in params:
        return
    for key in params:
        del st.query_params[key]
    try:
        done = pending_sign_ins().complete(bootstrap.owner().id, params)
    except (SignInError, McpError) as error:
        st.error(f"Signing in did not work: {error}")
        return
    vault().save(done.grant)
    clear(done.name)
    SIGNED_IN.set((done.name, done.entry))


def sign_out(name: str, url: str) -> None:
    """Forget this person's tokens for the server and ask its authorization server to revoke them."""
    grant = vault().load(url)
    if grant is not None:
        revoke_grant(grant)
        vault().forget(url)
    clear(name)


def signed_in(url: str) -> bool:
    return vault().load(url) is not None


def _client(entry: McpServerConfig, typed: bool) -> OAuthClient | None:
    # A client registered beforehand; ${VAR} in its secret is expanded only in mcp.json.
    if not isinstance(entry, HttpServerConfig) or not entry.oauth_client_id:
        return None
    secret = entry.oauth_client_secret
    if secret and "${" in secret and not typed:
        try:
            secret = resolve_server("", entry).oauth_client_secret  # type: ignore[union-attr]
        except McpConfigError:
            secret = None
    return OAuthClient(client_id=entry.oauth_client_id, client_secret=secret)


def _redirect_uri() -> str:
    # The way back is this app's own Tools page, as the person's browser reaches it (or at the public
    # address its client metadata document names).
    public = bootstrap.secret(PUBLIC_URL_NAME)
    if public and client_metadata_url():
        return f"{public.rstrip('/')}/tools"
    here = urlsplit(st.context.url or "http://127.0.0.1:8501/tools")
    return f"{here.scheme}://{here.netloc}/tools"
