"""A conversation item's messages drawn readably: each turn as Chat draws it, tool calls and results too."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ui import avatars
from ui.messages import draw_blocks, draw_tool_call, draw_tool_result, tool_results_by_call
from ui.state import EXPERIMENT_WIDGET_PREFIX
from yiem.experiments import Dataset, DatasetItem
from yiem.types import AgentMessage, AssistantMessageToolCall, UserMessage


def item_kind(item: DatasetItem) -> str:
    """What the item is besides its input, in a few words for its table row."""
    if item.user is not None:
        return f"simulated user, up to {item.user.max_turns} turns"
    if item.messages:
        count = len(item.messages)
        return f"conversation of {count} {'message' if count == 1 else 'messages'}"
    return ""


def draw_messages(messages: Sequence[AgentMessage]) -> None:
    """The messages in order; a tool call shows its result under it."""
    results = tool_results_by_call(list(messages))
    asked = {call.id for m in messages if isinstance(m, AssistantMessageToolCall) for call in m.tool_calls}
    for message in messages:
        if isinstance(message, UserMessage):
            with st.chat_message("user", avatar=avatars.USER):
                draw_blocks(message.content)
        elif isinstance(message, AssistantMessageToolCall):
            with st.chat_message("assistant", avatar=avatars.ASSISTANT):
                draw_blocks(message.content)
                for call in message.tool_calls:
                    draw_tool_call(call, results.get(call.id))
        elif message.role == "assistant":
            with st.chat_message("assistant", avatar=avatars.ASSISTANT):
                draw_blocks(message.content)
        elif message.tool_call_id not in asked:
            with st.chat_message("assistant", avatar=avatars.TOOL):
                draw_tool_result(message)


def draw_conversation_items(dataset: Dataset) -> None:
    """Pick one of the dataset's conversation items and read its conversation, then its next turn."""
    talks = {item.id: item for item in dataset.items if item.messages}
    if not talks:
        return
    st.markdown(f"**Conversations** · {len(talks)} of the items carry the conversation before their input")
    picked = st.selectbox(
        "Read the conversation of item",
        ["", *talks],
        format_func=lambda key: key or "(choose an item)",
        key=f"{EXPERIMENT_WIDGET_PREFIX}read_conversation",
    )
    item = talks.get(picked)
    if item is None:
        return
    with st.container(border=True, key=f"{EXPERIMENT_WIDGET_PREFIX}conversation_{item.id}"):
        draw_messages(item.messages)
        if item.input:
            st.caption("Then the item's input, the turn the model answers:")
            with st.chat_message("user", avatar=avatars.USER):
                st.text(item.input)
        if item.expected:
            st.caption(f"Expected: {item.expected}")
