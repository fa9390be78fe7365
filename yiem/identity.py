"""Who is using the app: the signed-in person (from OpenID Connect claims) or the one local user.

Every stored conversation, usage row and vote carries its owner's `id`; the store scopes each query
by it. Kept free of Streamlit: the UI hands the claims of `st.user` to `owner_from_claims`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from yiem.errors import YiemError

LOCAL_OWNER_ID = "local"
"""The owner of everything made without sign-in (`make run`), and of rows stored before owners existed."""


class SignInError(YiemError):
    """The identity provider's claims name nobody this app can tell apart (no email, no subject)."""


@dataclass(frozen=True)
class Owner:
    """One person: `id` scopes their data, `label` is what pages show, admins see the whole team."""

    id: str
    label: str
    is_admin: bool = False
    signed_in: bool = False


LOCAL_OWNER = Owner(id=LOCAL_OWNER_ID, label="you", is_admin=True)
"""Without sign-in there is one person, who runs the app and so administers it."""


@dataclass(frozen=True)
class AdminRule:
    """Who is an admin: an email on the list, or a claim holding a value (e.g. `groups` has `yiem-admins`)."""

    emails: frozenset[str] = frozenset()
    claim: str = ""
    claim_value: str = ""

    @classmethod
    def from_config(cls, emails: Iterable[str] = (), claim: str = "") -> AdminRule:
        """From config: `emails` as listed, `claim` as `name=value` (`roles=admin`) or empty."""
        name, _, value = claim.partition("=")
        return cls(
            emails=frozenset(e.strip().casefold() for e in emails if e.strip()),
            claim=name.strip(),
            claim_value=value.strip(),
        )

    def admits(self, claims: Mapping[str, Any], email: str) -> bool:
        """Whether the person these claims describe is an admin."""
        if email and email in self.emails:
            return True
        if not self.claim or self.claim not in claims:
            return False
        found = claims[self.claim]
        values = found if isinstance(found, list | tuple | set) else [found]
        if not self.claim_value:  # a bare claim name: any true value (e.g. `is_admin = true`)
            return any(v is True or str(v).casefold() == "true" for v in values)
        return any(str(v) == self.claim_value for v in values)


def owner_from_claims(claims: Mapping[str, Any], admins: AdminRule) -> Owner:
    """The signed-in person: their id is the verified email (lower case), else issuer and subject.

    An unverified email (`email_verified` false) is not used as an id: anyone could claim it.
    """
    email = str(claims.get("email") or "").strip().casefold()
    if claims.get("email_verified") is False:
        email = ""
    subject = str(claims.get("sub") or "").strip()
    if email:
        owner_id = email
    elif subject:
        owner_id = f"{claims.get('iss') or ''}#{subject}"
    else:
        raise SignInError(
            "The sign-in provider sent no email and no subject for this person, so their "
            "conversations could not be kept apart. Ask the operator to request the `openid email` scopes."
        )
    if owner_id == LOCAL_OWNER_ID:
        owner_id = f"#{owner_id}"  # a subject named "local" must not inherit the local user's rows
    label = str(claims.get("name") or "").strip() or email or subject
    return Owner(id=owner_id, label=label, is_admin=admins.admits(claims, email), signed_in=True)
