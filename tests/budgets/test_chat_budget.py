"""ChatSession under a spending limit: the check of the saved prompt, and taking a refused prompt back."""

from __future__ import annotations

from pathlib import Path

from tests.budgets.scripted import MODEL, reply
from yiem.budgets import Budget, BudgetStore
from yiem.chat import ChatSession
from yiem.identity import LOCAL_OWNER
from yiem.store import ConversationStore, create_store_engine
from yiem.types import UserMessage


def test_a_refused_prompt_is_taken_back_and_an_emptied_new_chat_is_not_kept(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}")
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.02))
    store = ConversationStore(engine)
    chat = ChatSession(store)
    chat.keep_prompt(UserMessage.from_text("first"), MODEL.provider, MODEL.id)

    checked = chat.check_budget(MODEL, 1000)  # up to $0.030 of $0.02
    assert not checked.allowed and "daily limit of $0.0200" in checked.message
    assert chat.withdraw_prompt().text == "first"
    assert chat.conversation is None and store.list_conversations() == []

    # In a conversation with earlier turns only the refused prompt goes; the conversation stays.
    chat.keep_prompt(UserMessage.from_text("earlier"), MODEL.provider, MODEL.id)
    assert chat.conversation is not None
    store.append_message(chat.conversation.id, reply(), MODEL)
    chat.reload()
    chat.keep_prompt(UserMessage.from_text("refused"), MODEL.provider, MODEL.id)
    assert chat.withdraw_prompt().text == "refused"
    assert [m.role for m in store.load_messages(chat.conversation.id)] == ["user", "assistant"]
