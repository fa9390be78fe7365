"""A Chat reply's "Experiment from here": the conversation up to that reply becomes an experiment of
one's own, one item whose replay on other models is shown beside this reply and what it cost."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.state import MADE_EXPERIMENT, NOTICE
from yiem.chat import ChatSession
from yiem.experiments import DatasetError, ExperimentDraft, ExperimentStore
from yiem.store import StoreError, database_url


def draw_up_to_here(chat: ChatSession, index: int) -> None:
    """The button under the reply at `index`, and once pressed, the link to the experiment it made."""
    where = (chat.conversation_id or "", index)
    made = MADE_EXPERIMENT.get()
    if made is not None and made[:2] == where:
        st.success(
            f":material/science: Made the experiment “{made[3]}” of this conversation up to here: "
            f"[open it on the Experiments page](experiments?e={made[2]}), add the models to replay it on, "
            "and Run. Its results show each replay beside this reply, with both costs.",
        )
        return
    st.button(
        "Experiment from here",
        icon=":material/science:",
        key=f"up-to-here-{chat.conversation_id}-{index}",
        type="tertiary",
        help="Makes an experiment of your own whose one item is this conversation up to this reply, "
        "to replay it on other models and compare their replies and costs with this one.",
        on_click=_make,
        args=(chat, index),
    )


def _make(chat: ChatSession, index: int) -> None:
    person = bootstrap.owner()
    title = chat.conversation.title if chat.conversation else ""
    try:
        draft = ExperimentDraft.from_chat(
            title, chat.conversation_id or "", chat.messages, index, person.id, bootstrap.settings()
        )
        store = ExperimentStore(bootstrap.store_engine(database_url()), person.id, admin=person.is_admin)
        experiment_id = store.save_experiment(draft.name, draft.model_dump(mode="json", exclude={"name"}))
    except (DatasetError, StoreError) as error:
        NOTICE.set(f"No experiment was made: {error}")
        return
    MADE_EXPERIMENT.set((chat.conversation_id or "", index, experiment_id, draft.name))
