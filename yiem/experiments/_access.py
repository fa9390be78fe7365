"""Who may see and change an experiment: its owner's, private until shared with the team by choice.

The owner shares it to read ("read") or to edit ("edit"). Others see only shared ones; editors change
the draft and run it; only the owner (or an admin) renames, deletes or re-shares it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlalchemy import ColumnElement, select

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

    def require_chat_confirmation(self, data: Mapping[str, Any], name: str, confirmed: bool) -> None:
        """Sharing items taken from conversations: only the person whose chats they are may, on confirming."""
        found = chat_items(data)
        others = sorted(item for item, who in found.items() if who != self.owner)
        if others:
            raise ChatItemsNeedConfirmationError(
                f"The experiment {name!r} has items taken from someone else's conversations "
                f"({', '.join(others)}); only that person can share them. Remove those items to share it.",
                others,
            )
        if found and not confirmed:
            mine = sorted(found)
            raise ChatItemsNeedConfirmationError(
                f"These items of {name!r} came from your conversations: {', '.join(mine)}. Sharing shows "
                "them to the team; confirm to share them.",
                mine,
            )
