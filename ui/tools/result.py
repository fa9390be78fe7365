"""Drawing a tool call's outcome on the Tools page: content blocks, structured content, raw exchange."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from typing import Any

import streamlit as st

from ui.state import OPENED_LINKS
from yiem.explorer import CallRecord, CallStatus, check_structured_content, describe_error, duration_words
from yiem.mcp import (
    AudioBlock,
    CallToolResult,
    EmbeddedResourceBlock,
    ImageBlock,
    McpError,
    ResourceContents,
    ResourceLinkBlock,
    TextBlock,
)
from yiem.safe_markdown import safe_markdown


def decode_base64(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


_IMAGE_MIME = re.compile(r"^image/[A-Za-z0-9.+-]+$")


def draw_image(data: str, mime_type: str | None, caption: str | None = None) -> None:
    """A base64 image as a data URL: the browser decodes it, so any format it can show works."""
    mime = mime_type if mime_type and _IMAGE_MIME.match(mime_type) else "image/png"
    if decode_base64(data) is None:
        st.error("The image's data is not valid base64.")
        return
    st.image(f"data:{mime};base64,{data.strip()}", caption=caption)


def draw_text(text: str) -> None:
    """Text as markdown; text that is a JSON object or array as collapsible JSON."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            st.json(json.loads(stripped), expanded=2)
            return
        except ValueError:
            pass
    st.markdown(safe_markdown(text))


def draw_resource_contents(contents: ResourceContents, key: str) -> None:
    """One resource's contents: text, an image, audio, or a file to download."""
    mime = contents.mime_type or ""
    st.caption(f"`{contents.uri}`" + (f" · {mime}" if mime else ""))
    if contents.text is not None:
        if mime in ("text/markdown", "text/plain") or not mime:
            draw_text(contents.text)
        else:
            st.code(contents.text, language=_language(mime))
        return
    if contents.blob is None:
        st.caption("The server sent neither text nor data for this resource.")
        return
    data = decode_base64(contents.blob)
    if data is None:
        st.error("The resource's data is not valid base64.")
        return
    text = _as_text(data, mime)
    if text is not None:
        draw_text(text)
    elif mime.startswith("image/"):
        draw_image(contents.blob, mime, contents.uri)
    elif mime.startswith("audio/"):
        st.audio(data, format=mime)
    else:
        st.write(f"{len(data):,} bytes of {mime or 'binary data'}.")
    name = contents.uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
    st.download_button("Download", data, file_name=name, mime=mime or None, key=f"{key}-download")


def _as_text(data: bytes, mime: str) -> str | None:
    # Servers send text as a blob too; showing it beats offering a download.
    if not (mime.startswith("text/") or mime in ("application/json", "application/xml")):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _language(mime: str) -> str | None:
    return {"application/json": "json", "text/html": "html", "text/x-python": "python"}.get(mime)


ReadResource = Callable[[str], list[ResourceContents]]


def _draw_link(block: ResourceLinkBlock, key: str, read: ReadResource | None) -> None:
    title = block.title or block.name or block.uri
    details = " · ".join(part for part in (block.mime_type, _size(block.size)) if part)
    st.markdown(f":material/link: **{title}** — `{block.uri}`" + (f" · {details}" if details else ""))
    if block.description:
        st.caption(safe_markdown(block.description))
    if read is None:
        return
    opened: dict[str, list[ResourceContents] | str] = OPENED_LINKS.setdefault(dict)
    if key not in opened:
        if st.button("Open", key=f"{key}-open", icon=":material/open_in_new:"):
            try:
                opened[key] = read(block.uri)
            except McpError as error:
                opened[key] = describe_error(error)
            st.rerun()
        return
    found = opened[key]
    if isinstance(found, str):
        st.error(found)
        return
    for index, contents in enumerate(found):
        with st.container(border=True):
            draw_resource_contents(contents, f"{key}-{index}")


def draw_result(
    result: CallToolResult, output_schema: dict[str, Any] | None, key: str, read: ReadResource | None = None
) -> None:
    """The blocks of a result in order; an error result in an error box."""
    box = st.container(border=True)
    with box:
        if result.is_error:
            st.error("The tool reported an error:", icon=":material/error:")
        for index, block in enumerate(result.content):
            block_key = f"{key}-{index}"
            if isinstance(block, TextBlock):
                if result.is_error:
                    st.error(safe_markdown(block.text))
                else:
                    draw_text(block.text)
            elif isinstance(block, ImageBlock):
                draw_image(block.data, block.mime_type, block.mime_type)
            elif isinstance(block, AudioBlock):
                data = decode_base64(block.data)
                if data is None:
                    st.error("The audio's data is not valid base64.")
                else:
                    st.audio(data, format=block.mime_type)
            elif isinstance(block, ResourceLinkBlock):
                _draw_link(block, block_key, read)
            elif isinstance(block, EmbeddedResourceBlock):
                with st.expander(
                    f"Resource {block.resource.uri}", expanded=True, icon=":material/description:"
                ):
                    draw_resource_contents(block.resource, block_key)
            else:
                st.caption(f"A content block of type {block.type!r} that yiem does not draw:")
                st.json(block.model_dump(mode="json"), expanded=False)
        if not result.content and result.structured_content is None:
            st.caption("The tool returned nothing.")
        if result.structured_content is not None:
            st.markdown("**Structured content**")
            st.json(result.structured_content, expanded=2)
        problem = check_structured_content(output_schema, result)
        if problem:
            st.warning(f"The structured content does not match the tool's output schema: {problem}")
        elif output_schema and not result.is_error:
            st.caption(":material/check: The structured content matches the tool's output schema.")


def _size(size: int | None) -> str:
    return f"{size:,} bytes" if size is not None else ""


def draw_record(
    record: CallRecord, output_schema: dict[str, Any] | None, key: str, read: ReadResource | None = None
) -> None:
    """A finished call: its result or error, how long it took, and the raw exchange one click away."""
    took = duration_words(record.duration_ms)
    if record.status == CallStatus.CANCELLED:
        st.warning(f"Cancelled after {took}.", icon=":material/cancel:")
    elif record.status == CallStatus.FAILED:
        st.error(record.error or "The call failed.", icon=":material/error:")
    result = record.result
    if result is not None:
        draw_result(result, output_schema, key, read)
    st.caption(f"`{record.server}` · `{record.tool}` · {took}")
    with st.expander("Raw request and response", icon=":material/data_object:"):
        st.markdown("**Request**")
        st.json(record.request, expanded=True)
        st.markdown("**Response**")
        if record.response is not None:
            st.json(record.response, expanded=True)
        else:
            st.caption(record.error or "No response.")
