"""A long stored conversation on the Chat page (AppTest): what a rerun draws stays small and linear.

Wall time is measured by bench/chat_page.py, never here; these tests pin the structure that makes
a rerun cheap: no `st.status` (it sleeps 50 ms each) for finished tool calls, one edit box at a
time instead of one per prompt, and only the latest turns drawn until earlier ones are asked for.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from yiem.store import ConversationStore, create_store_engine
from yiem.types import (
    AgentMessage,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

ROOT = Path(__file__).resolve().parents[2]


def _turns(count: int, tool_every: int = 4) -> list[AgentMessage]:
    """`count` turns of a prompt and a reply; every `tool_every`-th goes through a tool call."""
    messages: list[AgentMessage] = []
    for turn in range(count):
        messages.append(UserMessage(content=[TextContent(text=f"question {turn}")]))
        if turn % tool_every == 0:
            call = AgentToolCall(id=f"call-{turn}", name="get-sum", arguments={"a": turn, "b": 1})
            messages.append(AssistantMessageToolCall(tool_calls=[call]))
            failed = turn % (2 * tool_every) == 0
            messages.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text="boom" if failed else str(turn + 1))],
                    is_error=failed,
                )
            )
        messages.append(AssistantMessage(content=[TextContent(text=f"answer {turn}")]))
    return messages


def _open(db_url: str, messages: list[AgentMessage]) -> tuple[AppTest, str]:
    store = ConversationStore(create_store_engine(db_url))
    conversation = store.create(title="Long talk")
    store.replace_messages(conversation.id, messages)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["c"] = conversation.id
    return at.run(), conversation.id


def _user_texts(at: AppTest) -> list[str]:
    return [str(m.markdown[0].value) for m in at.chat_message if m.name == "user"]


def test_finished_tool_calls_are_drawn_without_st_status(db_url: str) -> None:
    at, _ = _open(db_url, _turns(8, tool_every=2))
    assert not at.exception, at.exception
    assert len(at.status) == 0, [s.label for s in at.status]
    tools = [e for e in at.expander if "get-sum" in e.label]
    assert len(tools) == 4
    # Failed calls say so in the label; each shows its arguments and its result.
    assert ["failed" in e.label for e in tools] == [True, False, True, False]
    assert '"a": 2' in tools[1].code[0].value and "3" in tools[1].code[1].value


def test_one_edit_box_at_a_time(db_url: str) -> None:
    at, conversation_id = _open(db_url, _turns(12))
    assert len(at.main.text_area) == 0  # no keyed text area per prompt: each rerun would pay for all
    at.button(key=f"edit-{conversation_id}-4").click().run()  # the second prompt (after a tool turn)
    assert not at.exception, at.exception
    assert [t.value for t in at.main.text_area] == ["question 1"]
    at.button(key=f"edit-{conversation_id}-0").click().run()
    assert [t.value for t in at.main.text_area] == ["question 0"]
    at.button(key=f"edit-cancel-{conversation_id}-0").click().run()
    assert len(at.main.text_area) == 0
    assert not at.exception


def test_only_the_latest_turns_are_drawn_until_earlier_ones_are_asked_for(db_url: str) -> None:
    at, _ = _open(db_url, _turns(400))
    assert not at.exception, at.exception
    shown = _user_texts(at)
    # A bounded window of the latest whole turns, starting at a prompt and ending at the last one.
    assert 5 <= len(shown) <= 40 and shown[-1] == "question 399"
    first = int(shown[0].split()[1])
    assert shown == [f"question {turn}" for turn in range(first, 400)]
    at.button(key="show-earlier").click().run()
    more = _user_texts(at)
    assert len(more) > len(shown) and more[-len(shown) :] == shown
    # Regenerate and the edit buttons still name the stored messages by their place.
    assert at.button(key="regenerate")
    assert len(at.status) == 0
