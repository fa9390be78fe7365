"""Drawing parts more than one page shares: message blocks, finished tool calls, the Chat link."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import streamlit as st

from ui.clipboard import copy_button
from yiem.chat import document_in
from yiem.model_setup import image_bytes
from yiem.safe_markdown import safe_markdown
from yiem.types import (
    AgentMessage,
    AgentToolCall,
    ImageContent,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
)


def continue_in_chat(conversation_id: str) -> None:
    """A link to Chat with this conversation open (a hidden one joins Chat's list once opened)."""
    st.page_link(
        "ui/pages/chat.py",
        label="Continue in Chat",
        icon=":material/chat:",
        query_params={"c": conversation_id},
    )


def json_block(value: Any, into: Any = st) -> None:
    into.code(json.dumps(value, indent=2, ensure_ascii=False, default=str), language="json")


def draw_blocks(content: list[Any]) -> None:
    reasoning = "\n\n".join(block.text for block in content if isinstance(block, ReasoningContent))
    if reasoning:
        with st.expander("Reasoning", expanded=False):
            st.markdown(safe_markdown(reasoning))
    for block in content:
        if isinstance(block, TextContent) and (document := document_in(block)) is not None:
            # An attached file's text, folded away under its name: it can be long.
            with st.expander(document.name, icon=":material/description:", expanded=False):
                st.text(document.text)
        elif isinstance(block, TextContent) and block.text:
            st.markdown(safe_markdown(block.text))
        elif isinstance(block, ImageContent):
            _draw_image(block, 320)


def _draw_image(block: ImageContent, width: int) -> None:
    # Stored or tool-made images may be damaged; one must never stop the conversation from opening.
    try:
        st.image(image_bytes(block), width=width)
    # Bad base64 (ImageDataError), or bytes Streamlit's Pillow cannot open: Pillow raises several
    # unrelated types (OSError, SyntaxError, DecompressionBombError…) before anything is drawn.
    except Exception:
        st.caption(":material/broken_image: An image that cannot be shown: its data is damaged.")


def tool_results_by_call(messages: Sequence[AgentMessage]) -> dict[str, ToolResultMessage]:
    """Each tool result keyed by the id of the call it answers, so each call is drawn with its own."""
    return {message.tool_call_id: message for message in messages if isinstance(message, ToolResultMessage)}


def draw_tool_call(call: AgentToolCall, result: ToolResultMessage | None, copyable: bool = False) -> None:
    """A finished tool call: its arguments and its result (or that it has none), folded away."""
    # An expander, not `st.status`: each status costs a 50 ms sleep on every rerun, and a finished
    # call has no state left to animate.
    if result is None:
        label, icon = f"Tool `{call.name}`: no result", ":material/error:"
    elif result.is_error:
        label, icon = f"Tool `{call.name}` failed", ":material/error:"
    else:
        label, icon = f"Tool `{call.name}`", ":material/check_circle:"
    with st.expander(label, icon=icon, expanded=False):
        st.caption("Arguments")
        json_block(call.arguments)
        if result is not None:
            st.caption("Result")
            draw_tool_result(result, copyable)


def draw_tool_result(result: ToolResultMessage, copyable: bool = False) -> None:
    """A tool's result as JSON, its images and details; if `copyable`, a Copy button for its text."""
    joined = result.text_joined_by("\n")
    if copyable and joined:
        copy_button(joined, "Copy result")
    try:
        json_block(json.loads(joined))
    except ValueError:
        has_text = any(isinstance(block, TextContent) for block in result.content)
        json_block({"content": joined, "isError": result.is_error} if has_text else result.to_json_dict())
    for block in result.content:
        if isinstance(block, ImageContent):
            _draw_image(block, 240)
    if result.details is not None:
        st.caption("Details")
        json_block(result.details)


IMAGE_TYPES = ["png", "jpg", "jpeg", "gif", "webp"]
"""The image files a chat input accepts."""


def submitted_prompt(submitted: Any) -> tuple[str, list[ImageContent]]:
    """The text and images of what a chat input with `accept_file` returned (or its plain text)."""
    if submitted is None:
        return "", []
    if isinstance(submitted, str):
        return submitted, []
    return submitted.text, [uploaded_image(file) for file in submitted.files]


def uploaded_image(file: Any) -> ImageContent:
    """An uploaded image file (a chat input's or a file uploader's) as an image block."""
    return ImageContent(data=base64.b64encode(file.getvalue()).decode(), mime_type=file.type or "image/png")
