"""Whose the open experiment is and how it is shared; the owner's share and delete, anyone's copy.

The rules (who may share, edit, delete) are yiem.experiments' (ExperimentStore); this only draws them.
"""

from __future__ import annotations

import streamlit as st

from ui.state import SHARE_MESSAGE
from yiem.experiments import (
    SHARING_WORDS,
    SHARINGS,
    ChatItemsNeedConfirmationError,
    ExperimentRecord,
    ExperimentStore,
)
from yiem.store import StoreError


def whose(record: ExperimentRecord, store: ExperimentStore) -> str:
    """'yours' or the owner's id."""
    return "yours" if record.owner == store.owner else record.owner


def picker_label(record: ExperimentRecord, store: ExperimentStore) -> str:
    """The picker's words for an experiment: its name, and whose it is when not the person's own."""
    name = record.name or "(unnamed)"
    if record.owner == store.owner:
        return name if record.sharing == "private" else f"{name} · shared"
    return f"{name} · {record.owner}'s"


def draw_message() -> None:
    """What the last share, copy or delete did (the page reran since)."""
    done = SHARE_MESSAGE.pop()
    if done:
        st.success(done)


def draw_sharing(record: ExperimentRecord, store: ExperimentStore) -> str | None:
    """The owner and sharing line, with the controls this person may use; returns the id to open next
    (a copy; "" for a new experiment after a delete) or None to stay."""
    st.caption(f":material/person: Owner: {whose(record, store)} · {SHARING_WORDS[record.sharing]}")
    if not store.may_edit(record):
        st.info(
            "Shared with you to read: you see it and its results but cannot change or run it. "
            "Make a copy to change it."
        )
    left, right = st.columns(2)
    if left.button("Make a copy", key="exp_copy", icon=":material/content_copy:"):
        copy_id = store.copy_experiment(record.id)
        SHARE_MESSAGE.set(f"This is your own copy of {record.name!r}, private until you share it.")
        return copy_id
    if not store.may_manage(record):
        return None
    with right.popover("Share or delete", icon=":material/share:"):
        return _owner_controls(record, store)


def _owner_controls(record: ExperimentRecord, store: ExperimentStore) -> str | None:
    sharing = st.radio(
        "Who sees it",
        SHARINGS,
        index=SHARINGS.index(record.sharing),
        format_func=lambda key: SHARING_WORDS[key].capitalize(),
        key="exp_sharing",
    )
    from_chats = sorted(record.chat_items)
    confirmed = False
    if from_chats and sharing != "private":
        st.warning(f"These items came from conversations: {', '.join(from_chats)}.")
        confirmed = st.checkbox("Share the items from my conversations with the team", key="exp_share_chats")
    if st.button("Save sharing", key="exp_share", disabled=sharing == record.sharing):
        try:
            store.share(record.id, sharing, confirm_chat_items=confirmed)
        except ChatItemsNeedConfirmationError as error:
            st.error(str(error))
            return None
        except StoreError as error:
            st.error(f"The sharing was not changed: {error}")
            return None
        SHARE_MESSAGE.set(f"{record.name!r} is now {SHARING_WORDS[sharing]}.")
        return record.id
    st.divider()
    sure = st.checkbox("Delete it with its runs and results", key="exp_delete_sure")
    if st.button("Delete experiment", key="exp_delete", icon=":material/delete:", disabled=not sure):
        try:
            store.delete_experiment(record.id)
        except StoreError as error:
            st.error(f"The experiment was not deleted: {error}")
            return None
        SHARE_MESSAGE.set(f"The experiment {record.name!r} was deleted.")
        return ""
    return None
