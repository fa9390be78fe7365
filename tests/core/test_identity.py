"""Who is signed in: OpenID Connect claims to an owner id and the admin rule (yiem.identity)."""

from __future__ import annotations

import pytest

from yiem.identity import LOCAL_OWNER, LOCAL_OWNER_ID, AdminRule, SignInError, owner_from_claims

NOBODY = AdminRule()


def test_the_owner_is_the_verified_email_in_lower_case() -> None:
    owner = owner_from_claims({"sub": "1", "email": "Ann@Example.COM", "name": "Ann"}, NOBODY)
    assert (owner.id, owner.label, owner.signed_in, owner.is_admin) == ("ann@example.com", "Ann", True, False)


def test_an_unverified_email_is_not_an_identity() -> None:
    # Anyone can type any email at some providers: the subject keeps them apart instead.
    owner = owner_from_claims(
        {"iss": "https://idp", "sub": "42", "email": "boss@example.com", "email_verified": False}, NOBODY
    )
    assert owner.id == "https://idp#42"
    assert not AdminRule.from_config(["boss@example.com"]).admits({}, "") and not owner.is_admin


def test_without_email_or_subject_sign_in_is_refused_in_words() -> None:
    with pytest.raises(SignInError, match="openid email"):
        owner_from_claims({"name": "Someone"}, NOBODY)


def test_a_subject_named_local_never_inherits_the_local_users_rows() -> None:
    assert owner_from_claims({"sub": LOCAL_OWNER_ID}, NOBODY).id != LOCAL_OWNER_ID


def test_admins_by_email_list_or_by_claim() -> None:
    by_email = AdminRule.from_config([" Carol@Example.com ", ""])
    assert owner_from_claims({"sub": "c", "email": "carol@example.com"}, by_email).is_admin
    assert not owner_from_claims({"sub": "a", "email": "ann@example.com"}, by_email).is_admin
    by_group = AdminRule.from_config(claim="groups=yiem-admins")
    assert owner_from_claims({"sub": "c", "groups": ["staff", "yiem-admins"]}, by_group).is_admin
    assert not owner_from_claims({"sub": "a", "groups": ["staff"]}, by_group).is_admin
    assert not owner_from_claims({"sub": "a", "groups": "yiem-admins-not"}, by_group).is_admin
    by_flag = AdminRule.from_config(claim="is_admin")
    assert owner_from_claims({"sub": "c", "is_admin": True}, by_flag).is_admin
    assert not owner_from_claims({"sub": "a", "is_admin": False}, by_flag).is_admin


def test_without_sign_in_the_one_local_user_administers_the_app() -> None:
    assert LOCAL_OWNER.is_admin and not LOCAL_OWNER.signed_in and LOCAL_OWNER.id == LOCAL_OWNER_ID
