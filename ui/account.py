"""Sign-in: off unless the secrets file has an `[auth]` section, then Streamlit's st.login (OpenID Connect).

Who the person is and whether they are an admin is decided in yiem.identity; this module only reads
st.user and the secrets file, and draws the sign-in page and the account box.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

from yiem.identity import LOCAL_OWNER, AdminRule, Owner, SignInError, owner_from_claims
from yiem.redaction import add_secrets


def _secrets_section(name: str) -> Mapping[str, Any]:
    # st.secrets raises (and may draw an error) when no secrets file exists: ask first.
    try:
        if not st.secrets.load_if_toml_exists():
            return {}
        found = st.secrets.get(name)
    except (FileNotFoundError, KeyError, OSError, ValueError):
        return {}
    return found if isinstance(found, Mapping) else {}


def sign_in_configured() -> bool:
    """Whether sign-in is on: the secrets file Streamlit reads has an `[auth]` section."""
    return bool(_secrets_section("auth"))


def admin_rule() -> AdminRule:
    """Admins from `[admins]` in the secrets file (`emails`, `claim = "name=value"`) and YIEM_ADMIN_EMAILS."""
    section = _secrets_section("admins")
    listed = section.get("emails", [])
    emails = [str(e) for e in listed] if isinstance(listed, list) else [str(listed)]
    emails += os.environ.get("YIEM_ADMIN_EMAILS", "").split(",")
    return AdminRule.from_config(emails, str(section.get("claim", "")))


def _providers(auth: Mapping[str, Any]) -> list[str | None]:
    # `[auth]` holding client_id is one provider (st.login()); `[auth.name]` sections are named ones.
    named: list[str | None] = [key for key, value in auth.items() if isinstance(value, Mapping)]
    return [None] if "client_id" in auth or not named else named


def current_owner() -> Owner:
    """The person using this session; without sign-in the one local user.

    With sign-in on and nobody signed in, draws the sign-in page and stops the script, so no page
    (and no store query) runs for an unknown person.
    """
    auth = _secrets_section("auth")
    if not auth:
        return LOCAL_OWNER
    # The sign-in secrets (client secret, cookie secret) are masked like every key the server holds.
    add_secrets(*(str(v) for v in _leaf_values(auth) if isinstance(v, str) and len(v) >= 8))
    if st.user.is_logged_in:
        try:
            return owner_from_claims(st.user.to_dict(), admin_rule())
        except SignInError as error:
            st.error(str(error))
            if st.button("Sign out", key="account-sign-out-unusable"):
                st.logout()
            st.stop()
    _draw_sign_in(_providers(auth))
    st.stop()


def _leaf_values(section: Mapping[str, Any]) -> list[Any]:
    found: list[Any] = []
    for value in section.values():
        found += _leaf_values(value) if isinstance(value, Mapping) else [value]
    return found


def _draw_sign_in(providers: list[str | None]) -> None:
    st.title("yiem")
    st.write("Sign in to see your conversations, costs and tools. Each person sees only their own.")
    for provider in providers:
        label = "Sign in" if provider is None else f"Sign in with {provider}"
        if st.button(label, key=f"account-sign-in-{provider or 'default'}", type="primary"):
            st.login(provider)


def draw_account(owner: Owner) -> None:
    """The sidebar's account line and Sign out, when sign-in is on."""
    if not owner.signed_in:
        return
    with st.sidebar:
        role = " · admin" if owner.is_admin else ""
        st.caption(f":material/account_circle: Signed in as **{owner.label}**{role}")
        if st.button("Sign out", key="account-sign-out", icon=":material/logout:"):
            st.logout()
