"""Who may see and change an experiment: its owner's, private until shared with the team by choice.

The owner shares it to read ("read") or to edit ("edit"). Others see only shared ones; editors change
the draft and run it; only the owner (or an admin) renames, deletes or re-shares it. Items taken from
someone's conversations reach the team only on that person's word: when the experiment is shared, and
when they add them to one already shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlalchemy import ColumnElement, select

from yiem.identity import LOCAL_OWNER_ID
from yiem.store import StoreError, experiment_runs, experiments, visible_experiments

Sharing = Literal["private", "read", "edit"]
SHARINGS: tuple[Sharing, ...] = get_args(Sharing)
SHARING_WORDS: dict[Sharing, str] = {
    "private": "private: only its owner sees it",
    "read": "shared with the team to read",
    "edit": "shared with the team to edit",
}

CHAT_ITEMS = "chat_items"
"""The draft data's map of item id to the person whose conversation the item was taken from."""


class ExperimentAccessError(StoreError):
    """This person may see the experiment but not do this to it (not its owner, not shared to edit)."""


class ExperimentOwnerError(StoreError):
    """An experiments store made for nobody (an empty owner id): what it stored would be no one's."""


class ChatItemsNeedConfirmationError(ExperimentAccessError):
    """Sharing would show the team items taken from someone's conversations; their owner confirms first."""

    def __init__(self, message: str, items: list[str]) -> None:
        super().__init__(message)
        self.items = items


def chat_items(data: Mapping[str, Any]) -> dict[str, str]:
    """The draft's items that came from conversations (item id -> whose), those still in its dataset."""
    found = data.get(CHAT_ITEMS) or {}
    present = {str(item.get("id")) for item in (data.get("dataset") or {}).get("items", [])}
    return {str(item): str(who) for item, who in found.items() if str(item) in present}


def with_stored_chat_items(stored: Mapping[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """`data` as saved over `stored`: the record of whose chats items came from is the stored row's, which
    a client's save adds to but never drops or rewrites (an editor's page may hold an older copy)."""
    kept = {**(data.get(CHAT_ITEMS) or {}), **(stored.get(CHAT_ITEMS) or {})}
    return {**data, CHAT_ITEMS: kept} if kept else data


def added_chat_items(stored: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, str]:
    """The chat items `data` has that the stored dataset does not (new, or put back after a removal)."""
    before = chat_items(stored)
    return {item: who for item, who in chat_items(data).items() if item not in before}


def check_sharing(sharing: str) -> Sharing:
    if sharing not in SHARINGS:
        raise ExperimentAccessError(
            f"An experiment is shared as one of {', '.join(SHARINGS)}, not {sharing!r}."
        )
    return sharing  # type: ignore[return-value]  # checked just above


@dataclass(frozen=True)
class Access:
    """The person a store works for: their id, and whether they administer the app."""

    owner: str
    admin: bool = False

    def __post_init__(self) -> None:
        # Every experiment and run row names its owner: an empty one would be a row of nobody's.
        if not self.owner or not self.owner.strip():
            raise ExperimentOwnerError(
                f"The experiments store needs the id of the person it works for (the signed-in person's, "
                f"or {LOCAL_OWNER_ID!r} without sign-in), not {self.owner!r}; nothing was read or stored."
            )

    def visible(self) -> ColumnElement[bool]:
        """The experiments this person sees: their own and the ones shared with the team."""
        return visible_experiments(self.owner)

    def visible_runs(self) -> Any:
        """The ids of the runs of the experiments this person sees (a subquery)."""
        shown = select(experiments.c.id).where(self.visible())
        return select(experiment_runs.c.id).where(experiment_runs.c.experiment_id.in_(shown))

    def may_edit(self, owner: str, sharing: str) -> bool:
        return owner == self.owner or sharing == "edit" or self.admin

    def may_manage(self, owner: str) -> bool:
        return owner == self.owner or self.admin

    def require_edit(self, owner: str, sharing: str, name: str) -> None:
        if not self.may_edit(owner, sharing):
            raise ExperimentAccessError(
                f"The experiment {name!r} is {owner}'s, shared with the team to read only: nothing was "
                "changed. Make a copy of it to change it, or ask them to share it for editing."
            )

    def require_manage(self, owner: str, name: str, doing: str) -> None:
        if not self.may_manage(owner):
            raise ExperimentAccessError(
                f"Only {owner}, who owns the experiment {name!r}, or an admin can {doing} it; "
                "nothing was changed."
            )

    def require_chat_confirmation(
        self, found: Mapping[str, str], name: str, confirmed: bool, *, adding: bool = False
    ) -> None:
        """Showing the team items taken from conversations (`found`, item id -> whose), by sharing the
        experiment or by `adding` them to a shared one: only the person whose chats they are may, on
        confirming."""
        others = sorted(item for item, who in found.items() if who != self.owner)
        if others:
            raise ChatItemsNeedConfirmationError(_chat_words(adding, False, name, others), others)
        mine = sorted(found)
        if mine and not confirmed:
            raise ChatItemsNeedConfirmationError(_chat_words(adding, True, name, mine), mine)


# What a refusal over chat items says, by (adding them to a shared experiment, the person's own chats).
_CHAT_WORDS = {
    (False, False): "The experiment {name!r} has items taken from someone else's conversations "
    "({items}); only that person can share them. Remove those items to share it.",
    (False, True): "These items of {name!r} came from your conversations: {items}. Sharing shows them "
    "to the team; confirm to share them.",
    (True, False): "Items taken from someone else's conversations ({items}) would be added to the "
    "shared experiment {name!r}; only that person can add them. Remove those items to save it; nothing "
    "was saved.",
    (True, True): "The experiment {name!r} is shared: the team will see these items from your "
    'conversations once it is saved: {items}. Confirm under "Add from conversations" that the team '
    "may see them, then save again; nothing was saved.",
}


def _chat_words(adding: bool, mine: bool, name: str, items: list[str]) -> str:
    return _CHAT_WORDS[adding, mine].format(name=name, items=", ".join(items))
