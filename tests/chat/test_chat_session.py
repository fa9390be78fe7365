"""A chat session over the real Agent and loop with ScriptedLlm: saving as it goes, rewinding, isolation."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from yiem.agent import Agent
from yiem.chat import (
    ChatSession,
    ChatSessionError,
    RunAgent,
    Transcript,
    export_json,
    import_json,
    reply_caption,
    title_from,
    user_message,
)
from yiem.events import AgentEvent, MessageEndEvent, MessageUpdateEvent
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine, usage
from yiem.types import (
    AgentMessage,
    AgentTool,
    AssistantMessage,
    ImageContent,
    LlmModel,
    LlmUsage,
    ModelCost,
    TextContent,
    UsageCost,
    UserMessage,
)

PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
LOCAL = LlmModel(id="smollm2", provider="local", price_known=False)


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))


def _runner(agent: Agent) -> RunAgent:
    def run(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        text = "".join(b.text for b in prompt.content if isinstance(b, TextContent))
        return agent.prompt(text, [b for b in prompt.content if isinstance(b, ImageContent)])

    return run


def test_each_message_is_saved_when_it_ends(store: ConversationStore) -> None:
    llm = ScriptedLlm(
        [
            {"toolCalls": [{"id": "c1", "name": "shout", "arguments": {"text": "hi"}}]},
            {"content": "HI it is.", "usage": {"inputTokens": 100, "outputTokens": 10}},
        ]
    )
    tool = AgentTool(name="shout", execute=lambda _id, args, _signal: args["text"].upper())
    agent = Agent(llm, PRICED, tools=[tool])
    chat = ChatSession(store)
    saved_counts = []
    for event in chat.run(_runner(agent), user_message("shout hi"), PRICED):
        if isinstance(event, MessageEndEvent):
            assert chat.conversation_id is not None
            saved_counts.append(len(store.load_messages(chat.conversation_id)))
    assert chat.conversation_id is not None
    roles = [m.role for m in store.load_messages(chat.conversation_id)]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    # At each message_end the message is already in the store (the prompt is saved before the run).
    assert saved_counts == [1, 2, 3, 4]
    final = chat.messages[-1]
    assert isinstance(final, AssistantMessage) and final.cost is not None
    assert final.cost.total == pytest.approx(100 * 3 / 1e6 + 10 * 15 / 1e6)
    assert store.get(chat.conversation_id).title == "shout hi"
    with store.engine.connect() as conn:
        assert conn.execute(usage.select()).fetchall().__len__() == 2


def test_a_model_without_price_leaves_cost_unknown(store: ConversationStore) -> None:
    agent = Agent(ScriptedLlm(["ok"]), LOCAL)
    chat = ChatSession(store)
    list(chat.run(_runner(agent), user_message("hi"), LOCAL))
    reply = chat.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.cost is None
    assert "price unknown" in reply_caption(reply)


def test_abort_mid_stream_saves_the_partial_reply(store: ConversationStore) -> None:
    llm = ScriptedLlm(["word " * 400], chunk_size=5, delay=0.002)
    agent = Agent(llm, LOCAL)
    chat = ChatSession(store)
    events = chat.run(_runner(agent), user_message("long please"), LOCAL)
    streamed = 0
    for event in events:
        if isinstance(event, MessageUpdateEvent):
            streamed += 1
            if streamed == 10:
                agent.abort("Stopped by the user")
    assert chat.conversation_id is not None
    saved = store.load_messages(chat.conversation_id)
    assert [m.role for m in saved] == ["user", "assistant"]
    partial = saved[1]
    assert isinstance(partial, AssistantMessage) and partial.stop_reason == "aborted"
    assert 0 < len(partial.text) < len("word " * 400)


def test_rewind_edits_and_keeps_the_first_version(store: ConversationStore) -> None:
    agent = Agent(ScriptedLlm(["one", "two", "three"]), LOCAL)
    chat = ChatSession(store)
    list(chat.run(_runner(agent), user_message("first"), LOCAL))
    list(chat.run(_runner(agent), user_message("second"), LOCAL))
    prompt = chat.rewind_to(chat.last_prompt_index())
    assert prompt.content == [TextContent(text="second")]
    list(chat.run(_runner(agent), user_message("second, edited"), LOCAL))
    assert chat.conversation_id is not None
    saved = store.load_messages(chat.conversation_id)
    assert [getattr(m, "text", None) or m.content[0].text for m in saved] == [  # type: ignore[union-attr]
        "first",
        "one",
        "second, edited",
        "three",
    ]
    assert [len(s) for s in chat.siblings] == [1, 1, 2, 1]  # "second" is kept as an alternative
    with pytest.raises(ChatSessionError):
        chat.rewind_to(1)  # an assistant message


def test_going_on_with_the_latest_turns_opens_a_new_conversation_and_keeps_the_old(
    store: ConversationStore,
) -> None:
    agent = Agent(ScriptedLlm(["one", "two"]), LOCAL)
    chat = ChatSession(store)
    with pytest.raises(ChatSessionError):
        chat.continue_with_latest(0)  # nothing open yet
    list(chat.run(_runner(agent), user_message("first"), LOCAL, "Be brief."))
    list(chat.run(_runner(agent), user_message("second"), LOCAL, "Be brief."))
    old = chat.conversation_id
    carried = chat.continue_with_latest(2)
    assert chat.conversation_id == carried.id != old
    assert (carried.title, carried.system_prompt) == ("first (latest turns)", "Be brief.")
    assert [m.role for m in chat.messages] == ["user", "assistant"]
    assert [m.text for m in store.load_messages(carried.id)] == ["second", "two"]  # type: ignore[union-attr]
    assert old is not None and len(store.load_messages(old)) == 4


def test_regenerate_answers_the_same_prompt_again_beside_the_old_reply(store: ConversationStore) -> None:
    agent = Agent(ScriptedLlm(["one", "two"]), LOCAL)
    chat = ChatSession(store)
    list(chat.run(_runner(agent), user_message("question"), LOCAL))
    prompt = chat.regenerate(chat.last_prompt_index())
    assert chat.is_resend(prompt) and [m.role for m in chat.messages] == ["user"]
    list(chat.run(_runner(agent), prompt, LOCAL))
    assert chat.conversation_id is not None
    tree = store.load_tree(chat.conversation_id)
    assert [m.role for m in tree.messages] == ["user", "assistant", "assistant"]  # the prompt once
    assert chat.siblings[1] == tuple(store.load_path(chat.conversation_id).siblings[1])
    assert len(chat.siblings[1]) == 2
    chat.switch_to(chat.siblings[1][0])
    assert [m.text for m in chat.messages] == ["question", "one"]  # type: ignore[union-attr]


def test_a_tree_survives_export_and_import(store: ConversationStore) -> None:
    agent = Agent(ScriptedLlm(["one", "two", "three"]), LOCAL)
    chat = ChatSession(store)
    list(chat.run(_runner(agent), user_message("first"), LOCAL))
    list(chat.run(_runner(agent), chat.regenerate(0), LOCAL))
    chat.rewind_to(0)
    list(chat.run(_runner(agent), user_message("first, edited"), LOCAL))
    exported = chat.transcript()
    assert (exported.parents, exported.current) == ([None, 0, 0, None, 3], 4)
    body = json.loads(export_json(exported))
    assert body["messages"][2] == exported.messages[2].to_json_dict()  # each message as the spec has it
    imported = ChatSession(store)
    imported.import_transcript(import_json(export_json(exported)))
    assert imported.conversation_id is not None
    again = store.load_tree(imported.conversation_id)
    assert (again.parents, again.current) == (exported.parents, exported.current)
    assert [m.text for m in imported.messages] == ["first, edited", "three"]  # type: ignore[union-attr]
    assert [len(s) for s in imported.siblings] == [2, 1]


def test_a_prompt_is_kept_when_the_model_cannot_be_reached(store: ConversationStore) -> None:
    chat = ChatSession(store)
    conversation_id = chat.keep_prompt(user_message("do not lose me"), "openai", "gpt-4o-mini")
    assert [m.role for m in store.load_messages(conversation_id)] == ["user"]


def test_two_sessions_never_see_each_others_unsaved_state(store: ConversationStore, tmp_path: Path) -> None:
    """Session B opens A's conversation while A streams: B sees only what A has saved."""
    other_store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))
    release = threading.Event()

    def slow(context: object) -> str:
        release.wait(10)
        return "late reply"

    a = ChatSession(store)
    agent = Agent(ScriptedLlm([slow]), LOCAL)
    events = a.run(_runner(agent), user_message("question from A"), LOCAL)
    next(events)  # A's prompt is saved and the run has started
    assert a.conversation_id is not None
    b = ChatSession(other_store)
    b.open(a.conversation_id)
    assert [m.role for m in b.messages] == ["user"]
    b.new()
    assert b.messages == [] and a.messages[0].role == "user"
    release.set()
    list(events)
    b.open(a.conversation_id)
    assert [m.role for m in b.messages] == ["user", "assistant"]


def test_transcript_import_opens_a_new_conversation(store: ConversationStore) -> None:
    chat = ChatSession(store)
    imported = chat.import_transcript(
        Transcript(
            title="From file",
            messages=[user_message("hi"), AssistantMessage(content=[TextContent(text="yo")])],
        )
    )
    assert chat.conversation_id == imported.id
    assert [m.role for m in store.load_messages(imported.id)] == ["user", "assistant"]


def test_title_and_caption_formats() -> None:
    assert title_from("  line one\nline two") == "line one"
    assert title_from("x" * 100).endswith("…") and len(title_from("x" * 100)) == 60
    message = AssistantMessage(
        usage=LlmUsage(input_tokens=12_345, output_tokens=67, cache_read_tokens=8),
        cost=UsageCost(total=0.0123),
        duration_ms=2500,
    )
    assert reply_caption(message) == "12.3k in · 67 out · 8 cached · $0.0123 · 2.50 s"


def test_history_start_keeps_whole_turns_within_the_limit() -> None:
    from yiem.chat import history_start
    from yiem.types import AgentToolCall, AssistantMessageToolCall, ToolResultMessage

    def turn(n: int, tool: bool) -> list[AgentMessage]:
        middle: list[AgentMessage] = []
        if tool:
            call = AgentToolCall(id=f"c{n}", name="t")
            middle = [
                AssistantMessageToolCall(tool_calls=[call]),
                ToolResultMessage(tool_call_id=f"c{n}", tool_name="t"),
            ]
        return [user_message(f"q{n}"), *middle, AssistantMessage(content=[TextContent(text=f"a{n}")])]

    messages = [m for n in range(10) for m in turn(n, tool=n % 2 == 0)]  # 5 x 4 + 5 x 2 = 30
    assert history_start(messages, 100) == 0 and history_start(messages, 30) == 0
    start = history_start(messages, 7)
    assert isinstance(messages[start], UserMessage) and len(messages) - start <= 7
    assert messages[start].content[0].text == "q8"  # type: ignore[union-attr]
    # A last turn longer than the limit is still drawn whole, from its prompt.
    long_turn = [user_message("only"), *[AssistantMessage(content=[TextContent(text="x")])] * 9]
    assert history_start(long_turn, 3) == 0
    assert history_start([], 5) == 0
