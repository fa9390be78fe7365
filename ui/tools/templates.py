"""Resource templates with a form for their variables, argument completion, and subscriptions."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.state import SUBSCRIBED, TEMPLATE_CONTENTS, TEMPLATES, FormKeys, widget
from ui.tool_form import draw_form, form_arguments
from ui.tools.result import draw_resource_contents
from yiem.explorer import (
    ToolForm,
    describe_error,
    expand_template,
    template_ref,
    template_schema,
)
from yiem.mcp import McpClient, McpError, McpResourceTemplate
from yiem.safe_markdown import safe_markdown


def draw_suggestions(
    client: McpClient, ref: dict[str, str], form: ToolForm, keys: FormKeys, prefix: str
) -> None:
    """Values the server suggests for each field, from what is typed so far (`completion/complete`)."""
    if "completions" not in client.capabilities or not form.fields:
        return
    typed = {f.name: str(widget(keys.value(f.name)).get() or "") for f in form.fields}
    for field in form.fields:
        context = {name: value for name, value in typed.items() if name != field.name and value}
        try:
            values = client.complete(ref, field.name, typed[field.name], context).values
        except McpError:
            continue  # a server without suggestions for this field simply has none
        values = [value for value in values if value != typed[field.name]][:8]
        if not values:
            continue
        with st.container(horizontal=True, vertical_alignment="center"):
            st.caption(f"Suggestions for {field.label}:")
            for value in values:
                st.button(
                    value,
                    key=f"{prefix}:suggest:{field.name}:{value}",
                    on_click=_fill,
                    args=(keys.value(field.name), value),
                    type="tertiary",
                )


def _fill(key: str, value: str) -> None:
    widget(key).set(value)


def draw_argument_form(
    client: McpClient,
    *,
    what: str,
    name: str,
    ref: dict[str, str],
    schema: dict[str, Any],
    description: str | None,
    prefix: str,
    action: tuple[str, str, str],
) -> tuple[bool, dict[str, Any] | None]:
    """A prompt's or template's description, a form for its arguments with the server's suggestions,
    and the `action` button (label, key, icon): whether it was clicked, then the arguments if valid."""
    if description:
        st.caption(safe_markdown(description))
    form = ToolForm(schema)
    keys = FormKeys(f"{prefix}:{name}")
    draw_form(form, keys, what=what)
    draw_suggestions(client, ref, form, keys, prefix)
    label, key, icon = action
    if not st.button(label, key=key, icon=icon):
        return False, None
    return True, form_arguments(form, keys)


def draw_templates(client: McpClient, server: str) -> None:
    """Pick a template, fill its variables (with suggestions), read the resource it names."""
    if "resources" not in client.capabilities:
        return
    cache: dict[str, list[McpResourceTemplate]] = TEMPLATES.setdefault(dict)
    if server not in cache:
        try:
            cache[server] = client.list_resource_templates()
        except McpError as error:
            st.error(f"Listing resource templates failed: {describe_error(error)}")
            return
    templates = cache[server]
    if not templates:
        return
    st.divider()
    st.markdown(f"**Resource templates** ({len(templates)})")
    by_uri = {template.uri_template: template for template in templates}
    chosen = st.selectbox(
        "Template",
        list(by_uri),
        key=f"tools-template:{server}",
        format_func=lambda uri: f"{by_uri[uri].title or by_uri[uri].name or uri}  ·  {uri}",
    )
    template = by_uri[chosen]
    _, values = draw_argument_form(
        client,
        what="template",
        name=chosen,
        ref=template_ref(chosen),
        schema=template_schema(template),
        description=template.description,
        prefix=f"rt:{server}",
        action=("Read from template", "tools-template-read", ":material/visibility:"),
    )
    if values is not None:
        uri = expand_template(chosen, values)
        try:
            TEMPLATE_CONTENTS.set((server, uri, client.read_resource(uri)))
        except McpError as error:
            TEMPLATE_CONTENTS.set((server, uri, describe_error(error)))
    found = TEMPLATE_CONTENTS.get()
    if found and found[0] == server:
        st.caption(f"`{found[1]}`")
        if isinstance(found[2], str):
            st.error(found[2])
            return
        for index, contents in enumerate(found[2]):
            with st.container(border=True):
                draw_resource_contents(contents, f"tools-template-{index}")


def draw_subscribe(client: McpClient, server: str, uri: str) -> None:
    """Subscribe to updates of the resource; updates appear in the Log tab and the notifications."""
    if not (client.capabilities.get("resources") or {}).get("subscribe"):
        return
    subscribed: set[str] = SUBSCRIBED.setdefault(dict).setdefault(server, set())
    on = uri in subscribed
    label = "Unsubscribe" if on else "Subscribe to updates"
    if st.button(label, key=f"tools-subscribe:{server}", icon=":material/notifications:"):
        try:
            if on:
                client.unsubscribe(uri)
                subscribed.discard(uri)
            else:
                client.subscribe(uri)
                subscribed.add(uri)
        except McpError as error:
            st.error(f"{label} failed: {describe_error(error)}")
            return
        st.rerun()
    if on:
        st.caption("Subscribed: updates show in the Log tab (“Resource … was updated”).")
