"""The Tools page's Resources and Prompts tabs: list, read a resource, fill a prompt's arguments."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import avatars
from ui.state import PROMPT_RESULT, RESOURCE_CONTENTS, TOOLS_LISTINGS, chosen_prompt, chosen_resource
from ui.tool_form import remember
from ui.tools.result import draw_image, draw_resource_contents, draw_text
from ui.tools.templates import draw_argument_form, draw_subscribe
from yiem.explorer import describe_error, prompt_input_schema, prompt_ref
from yiem.mcp import EmbeddedResourceBlock, ImageBlock, McpClient, McpError, TextBlock
from yiem.safe_markdown import safe_markdown


def _listing(client: McpClient, server: str, what: str) -> list[Any] | None:
    """A cached list of resources or prompts, or None (with the reason shown) when there are none."""
    if what not in client.capabilities:
        st.caption(f"{server} offers no {what}.")
        return None
    cache: dict[tuple[str, str], list[Any]] = TOOLS_LISTINGS.setdefault(dict)
    if st.button("Refresh", key=f"tools-refresh-{what}", icon=":material/refresh:"):
        cache.pop((server, what), None)
    if (server, what) not in cache:
        try:
            cache[(server, what)] = client.list_resources() if what == "resources" else client.list_prompts()
        except McpError as error:
            st.error(f"Listing {what} failed: {describe_error(error)}")
            return None
    if not cache[(server, what)]:
        st.caption(f"The server lists no {what}.")
        return None
    return cache[(server, what)]


def draw_resources(client: McpClient, server: str) -> None:
    resources = _listing(client, server, "resources")
    if not resources:
        return
    remember("tools-resource-search")
    query = st.text_input("Search resources", key="tools-resource-search", placeholder="name or URI")
    shown = [r for r in resources if query.lower() in f"{r.name} {r.title or ''} {r.uri}".lower()]
    if not shown:
        st.caption("No resource matches.")
        return
    uris = [resource.uri for resource in shown]
    by_uri = {resource.uri: resource for resource in shown}
    remember(f"tools-resource:{server}")
    if chosen_resource(server).get() not in uris:
        chosen_resource(server).set(uris[0])
    uri = st.selectbox(
        f"Resource ({len(shown)} of {len(resources)})",
        uris,
        key=chosen_resource(server).name,
        format_func=lambda uri: f"{by_uri[uri].title or by_uri[uri].name or uri}  ·  {uri}",
    )
    resource = by_uri[uri]
    if resource.description:
        st.caption(safe_markdown(resource.description))
    draw_subscribe(client, server, uri)
    if st.button("Read", key="tools-resource-read", icon=":material/visibility:"):
        try:
            RESOURCE_CONTENTS.set((server, uri, client.read_resource(uri)))
        except McpError as error:
            RESOURCE_CONTENTS.set((server, uri, describe_error(error)))
    found = RESOURCE_CONTENTS.get()
    if found and found[0] == server and found[1] == uri:
        if isinstance(found[2], str):
            st.error(found[2])
        elif not found[2]:
            st.caption("The resource is empty.")
        for index, contents in enumerate(found[2] if isinstance(found[2], list) else []):
            with st.container(border=True):
                draw_resource_contents(contents, f"tools-resource-{index}")


def draw_prompts(client: McpClient, server: str) -> None:
    prompts = _listing(client, server, "prompts")
    if not prompts:
        return
    by_name = {prompt.name: prompt for prompt in prompts}
    remember(f"tools-prompt:{server}")
    if chosen_prompt(server).get() not in by_name:
        chosen_prompt(server).set(next(iter(by_name)))
    name = st.selectbox(
        "Prompt",
        list(by_name),
        key=chosen_prompt(server).name,
        format_func=lambda name: by_name[name].title or name,
    )
    prompt = by_name[name]
    clicked, arguments = draw_argument_form(
        client,
        what="prompt",
        name=name,
        ref=prompt_ref(name),
        schema=prompt_input_schema(prompt),
        description=prompt.description,
        prefix=f"pf:{server}",
        action=("Get prompt", "tools-prompt-get", ":material/chat:"),
    )
    if clicked:
        if arguments is not None:
            try:
                result = client.get_prompt(name, {key: str(value) for key, value in arguments.items()})
                PROMPT_RESULT.set((server, name, result))
            except McpError as error:
                PROMPT_RESULT.set((server, name, describe_error(error)))
        st.rerun()
    found = PROMPT_RESULT.get()
    if not found or found[:2] != (server, name):
        return
    if isinstance(found[2], str):
        st.error(found[2])
        return
    if found[2].description:
        st.caption(safe_markdown(found[2].description))
    for index, message in enumerate(found[2].messages):
        user = message.role == "user"
        with st.chat_message(
            "user" if user else "assistant", avatar=avatars.USER if user else avatars.ASSISTANT
        ):
            block = message.content
            if isinstance(block, TextBlock):
                draw_text(block.text)
            elif isinstance(block, ImageBlock):
                draw_image(block.data, block.mime_type)
            elif isinstance(block, EmbeddedResourceBlock):
                draw_resource_contents(block.resource, f"tools-prompt-{index}")
            else:
                st.json(block.model_dump(mode="json"), expanded=False)
