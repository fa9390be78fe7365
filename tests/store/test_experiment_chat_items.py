"""Items from someone's conversations reach the team only on that person's word, at every save.

Sharing asks the owner to confirm the chat items already in an experiment; these tests are of what
comes after: Ann adding her chats to an experiment she already shares, Bob (an editor) adding his to
hers, and a save that leaves out the record of whose chats the items came from. SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from tests.store.test_experiment_owners import A, B
from yiem.experiments import (
    ChatItemsNeedConfirmationError,
    Dataset,
    ExperimentDraft,
    ExperimentStore,
)
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

C = "carol@example.com"
NAME = "team quiz"


def _chat(engine: Engine, owner: str, words: str) -> Dataset:
    """One saved conversation of `owner`'s (one turn), as the items "Add from conversations" makes."""
    chats = ConversationStore(engine, owner)
    chat = chats.create(title=f"{owner}'s private chat")
    chats.append_message(chat.id, UserMessage.from_text(words))
    chats.append_message(chat.id, AssistantMessage(content=[TextContent(text="ok")], provider="p", model="m"))
    return Dataset.from_conversations(chats, [chat.id])


def _shared(engine: Engine, sharing: str) -> str:
    """Ann's experiment of one typed item, shared with the team as `sharing`."""
    ann = ExperimentStore(engine, A)
    draft = ExperimentDraft(dataset=Dataset.from_records([{"id": "typed", "input": "typed by Ann"}]))
    experiment_id = ann.save_experiment(NAME, _data(draft))
    ann.share(experiment_id, sharing)
    return experiment_id


def _data(draft: ExperimentDraft) -> dict[str, Any]:
    return draft.model_dump(mode="json", exclude={"name"})


def _opened(store: ExperimentStore, experiment_id: str) -> ExperimentDraft:
    record = store.get_experiment(experiment_id)
    return ExperimentDraft.model_validate({"name": record.name, **record.data})


def _adding(
    engine: Engine, person: str, sharing: str, words: str
) -> tuple[str, ExperimentStore, ExperimentDraft, str]:
    """Ann's experiment shared as `sharing`, opened by `person`, who adds an item from a chat of theirs
    (not saved yet): its id, their store, the draft and the item's id."""
    experiment_id = _shared(engine, sharing)
    store = ExperimentStore(engine, person)
    draft = _opened(store, experiment_id)
    draft.dataset = draft.add_from_conversations(_chat(engine, person, words), person)
    (from_chat,) = draft.chat_items
    return experiment_id, store, draft, from_chat


def _inputs(engine: Engine, person: str, experiment_id: str) -> list[str]:
    return [item.input for item in _opened(ExperimentStore(engine, person), experiment_id).dataset.items]


def test_ann_adding_her_chats_to_a_shared_experiment_confirms_first(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, ann, draft, from_chat = _adding(engine, A, "read", "my salary is 90k")
    with pytest.raises(ChatItemsNeedConfirmationError, match="the team will see") as asked:
        ann.save_experiment(NAME, _data(draft), experiment_id)
    assert asked.value.items == [from_chat] and "nothing was saved" in str(asked.value)
    assert _inputs(engine, B, experiment_id) == ["typed by Ann"]
    ann.save_experiment(NAME, _data(draft), experiment_id, confirm_chat_items=True)
    assert _inputs(engine, B, experiment_id) == ["typed by Ann", "my salary is 90k"]
    assert ann.get_experiment(experiment_id).chat_items == {from_chat: A}
    # Saved again (no new chat items): nothing more to confirm.
    draft.repeats = 2
    ann.save_experiment(NAME, _data(draft), experiment_id)


def test_bob_adding_his_chats_to_anns_team_experiment_confirms_first(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, bob, draft, from_chat = _adding(engine, B, "edit", "Bob's doctor said")
    with pytest.raises(ChatItemsNeedConfirmationError, match="your conversations") as asked:
        bob.save_experiment(NAME, _data(draft), experiment_id)
    assert asked.value.items == [from_chat]
    assert _inputs(engine, C, experiment_id) == ["typed by Ann"]  # Carol sees none of Bob's chat
    # Nobody confirms for another: Bob cannot add items he says came from Carol's chats.
    claimed = draft.model_copy(update={"chat_items": {from_chat: C}})
    with pytest.raises(ChatItemsNeedConfirmationError, match="someone else's conversations"):
        bob.save_experiment(NAME, _data(claimed), experiment_id, confirm_chat_items=True)
    bob.save_experiment(NAME, _data(draft), experiment_id, confirm_chat_items=True)
    assert _inputs(engine, C, experiment_id) == ["typed by Ann", "Bob's doctor said"]
    assert ExperimentStore(engine, A).get_experiment(experiment_id).chat_items == {from_chat: B}


def test_a_save_keeps_the_record_of_whose_chats_the_items_came_from(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    ann = ExperimentStore(engine, A)
    draft = ExperimentDraft()
    draft.dataset = draft.add_from_conversations(_chat(engine, A, "Ann's secret"), A)
    experiment_id = ann.save_experiment(NAME, _data(draft))
    ann.share(experiment_id, "edit", confirm_chat_items=True)
    (from_chat,) = draft.chat_items
    # Bob's client sends the items without the record of where they came from: it is kept.
    bob = ExperimentStore(engine, B)
    bobs = _opened(bob, experiment_id).model_copy(update={"chat_items": {}})
    bob.save_experiment(NAME, _data(bobs), experiment_id)
    assert ann.get_experiment(experiment_id).chat_items == {from_chat: A}
    # Nor does taking the item out and putting it back erase it: back in, it is Ann's to confirm.
    item = bobs.dataset.items[0]
    bob.save_experiment(NAME, _data(bobs.model_copy(update={"dataset": Dataset(items=[])})), experiment_id)
    with pytest.raises(ChatItemsNeedConfirmationError, match="someone else's conversations"):
        bob.save_experiment(NAME, _data(bobs), experiment_id, confirm_chat_items=True)
    assert ann.get_experiment(experiment_id).data["dataset"]["items"] == []
    ann.save_experiment(NAME, _data(bobs), experiment_id, confirm_chat_items=True)
    record = ann.get_experiment(experiment_id)
    assert (record.chat_items, record.data["dataset"]["items"][0]["id"]) == ({from_chat: A}, item.id)
