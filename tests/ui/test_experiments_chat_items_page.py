"""The Experiments page under AppTest: "Add from conversations" in a shared experiment asks the person
to confirm that the team will see the items, and a save passes their word on to the store."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.test_experiments_page import PAGE, TIMEOUT, db_url
from yiem.experiments import Dataset, ExperimentDraft, ExperimentStore
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

__all__ = ["db_url"]  # the fixture, used by name below

CONFIRM = "exp_w_confirm_chats"
ANN = "ann@example.com"


def _my_chat(url: str) -> str:
    """A saved conversation of the page's person (the local user): one turn."""
    chats = ConversationStore(create_store_engine(url))
    chat = chats.create(title="my private chat")
    chats.append_message(chat.id, UserMessage.from_text("my salary is 90k"))
    chats.append_message(chat.id, AssistantMessage(content=[TextContent(text="fair")]))
    return chat.id


def _experiment(url: str, owner: str, sharing: str) -> str:
    store = ExperimentStore(create_store_engine(url), owner)
    draft = ExperimentDraft(dataset=Dataset.from_records([{"id": "typed", "input": "typed"}]))
    experiment_id = store.save_experiment("team quiz", draft.model_dump(mode="json", exclude={"name"}))
    if sharing != "private":
        store.share(experiment_id, sharing)
    return experiment_id


def _open(experiment_id: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = experiment_id
    return at.run()


def _confirm_box(at: AppTest) -> list[Any]:
    return [box for box in at.checkbox if box.key == CONFIRM]


def _stored(url: str, experiment_id: str) -> tuple[list[str], dict[str, str]]:
    record = ExperimentStore(create_store_engine(url), ANN).get_experiment(experiment_id)
    return [item["input"] for item in record.data["dataset"]["items"]], record.chat_items


@pytest.mark.parametrize("owner", [LOCAL_OWNER_ID, ANN], ids=["own", "editor"])
def test_adding_chats_to_a_shared_experiment_asks_to_confirm_the_team_sees_them(
    db_url: str, owner: str
) -> None:
    chat_id = _my_chat(db_url)
    experiment_id = _experiment(db_url, owner, "edit")
    at = _open(experiment_id)
    assert any("they will see the items you add from your conversations" in w.value for w in at.warning)
    at.multiselect(key="exp_w_chats").set_value([chat_id]).run()
    assert at.button(key="exp_w_add_chats").disabled  # not before the person says the team may see them
    at.checkbox(key=CONFIRM).check().run()
    at.button(key="exp_w_add_chats").click().run()
    at.button(key="exp_save").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    inputs, from_chats = _stored(db_url, experiment_id)
    assert inputs == ["typed", "my salary is 90k"]
    assert list(from_chats.values()) == [LOCAL_OWNER_ID]


def test_a_private_experiment_asks_nothing_and_a_save_after_it_is_shared_does(db_url: str) -> None:
    chat_id = _my_chat(db_url)
    experiment_id = _experiment(db_url, LOCAL_OWNER_ID, "private")
    at = _open(experiment_id)
    assert _confirm_box(at) == []
    at.multiselect(key="exp_w_chats").set_value([chat_id]).run()
    at.button(key="exp_w_add_chats").click().run()
    # Shared (in another tab) before the items are saved: the save asks first.
    ExperimentStore(create_store_engine(db_url)).share(experiment_id, "read")
    at.button(key="exp_save").click().run()
    assert any("the team will see these items" in e.value for e in at.error), at.error
    assert _stored(db_url, experiment_id) == (["typed"], {})
    assert _confirm_box(at)
    at.checkbox(key=CONFIRM).check().run()
    at.button(key="exp_save").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert _stored(db_url, experiment_id)[0] == ["typed", "my salary is 90k"]
