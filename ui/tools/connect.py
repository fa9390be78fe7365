"""The Tools page's connection panel: servers from mcp.json or typed in; connect, details, ping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from ui import bootstrap
from ui.server_questions import server_questions
from ui.state import (
    ADDED_SERVERS,
    CHOOSE_NEXT,
    CONNECT_ERRORS,
    ENABLED_TOOLS,
    MCP_CLIENTS,
    MCP_ERRORS,
    PINGS,
    SAVE_PROBLEM,
    SERVER_CHOICE,
    SERVER_EVENTS,
    SIGNED_IN,
    TOOL_LISTS,
    TOOL_REGISTRY,
    add_server_field,
)
from ui.tools import sign_in
from yiem.amounts import duration
from yiem.explorer import (
    ServerEvents,
    ServerFormError,
    StdioPolicy,
    check_server_name,
    describe_error,
    entry_summary,
    example_server,
    http_entry,
    icon_src,
    notification_words,
    ping_ms,
    stdio_entry,
    stdio_policy,
)
from yiem.mcp import (
    GrantAuth,
    McpClient,
    McpConfig,
    McpConfigError,
    McpError,
    McpServerConfig,
    McpSignInRequiredError,
    McpTool,
    connect_server,
    entry_roots,
    literal_entry,
    load_mcp_config,
    parse_server_entry,
    save_mcp_config,
)
from yiem.redaction import redact_data
from yiem.safe_markdown import safe_markdown
from yiem.tool_registry import ToolRegistry


def config_path() -> Path:
    """The mcp.json the app's bootstrap reads."""
    return bootstrap.mcp_config_path()


def clients() -> dict[str, McpClient]:
    return MCP_CLIENTS.setdefault(dict)


def registry() -> ToolRegistry:
    return TOOL_REGISTRY.setdefault(ToolRegistry)


def enabled_tools() -> set[str]:
    return ENABLED_TOOLS.setdefault(set)


def _load_config() -> tuple[McpConfig, str | None]:
    try:
        return load_mcp_config(config_path()), None
    except McpConfigError as error:
        return McpConfig(), str(error)


def current_policy(config: McpConfig) -> StdioPolicy:
    return stdio_policy(st.get_option("server.address"), config.allow_stdio_from_ui, bootstrap.owner())


def connect(name: str, entry: McpServerConfig, *, typed: bool = False) -> bool:
    """Open the server, register its tools; a failure is kept in words to show next to the server.

    A `typed` entry (added in the browser) is used literally: `${…}` is expanded only in mcp.json."""
    errors: dict[str, str] = CONNECT_ERRORS.setdefault(dict)
    try:
        auth = bootstrap.mcp_auth(name, entry, typed=typed)
        client = connect_server(name, entry, expand=not typed, auth=auth, **server_questions().handlers(name))
    except McpSignInRequiredError as error:
        sign_in.needs_sign_in(name, error.server_url, error.challenge)
        errors[name] = describe_error(error)
        return False
    except (McpError, McpConfigError, OSError) as error:
        errors[name] = describe_error(error)
        return False
    try:
        registry().add_mcp_server(name, client)
    except (McpError, ValueError) as error:
        client.close()
        errors[name] = describe_error(error)
        return False
    errors.pop(name, None)
    sign_in.clear(name)
    MCP_ERRORS.get({}).pop(name, None)
    clients()[name] = client
    watch(name, client)
    return True


def disconnect(name: str) -> None:
    """Close the session, drop its tools from the registry and from the chat's tools."""
    chat_names = set(registry().chat_names(name).values())
    client = clients().pop(name, None)
    registry().remove_mcp_server(name)
    ENABLED_TOOLS.set(enabled_tools() - chat_names)
    PINGS.get({}).pop(name, None)
    TOOL_LISTS.get({}).pop(name, None)
    SERVER_EVENTS.get({}).pop(name, None)
    if client is not None:
        client.close()


def watch(server: str, client: McpClient) -> ServerEvents:
    """The server's notifications, listened to from now on; a tools change makes the list be read again."""
    found: dict[str, ServerEvents] = SERVER_EVENTS.setdefault(dict)
    lists: dict[str, list[McpTool]] = TOOL_LISTS.setdefault(dict)
    events = found.setdefault(server, ServerEvents())
    # The sink runs on the client's thread, where session state is out of reach: it holds the dict.

    def tools_changed() -> None:
        lists.pop(server, None)

    events.attach(client, tools_changed)
    return events


def cached_tools(server: str) -> list[McpTool]:
    """The server's tools as last listed (listed now if they never were)."""
    lists: dict[str, list[McpTool]] = TOOL_LISTS.setdefault(dict)
    if server not in lists and server in clients():
        lists[server] = clients()[server].list_tools()
    return lists.get(server, [])


def refresh_tools(server: str) -> str | None:
    """List the server's tools again (here and in the chat's registry); the failure in words, if any."""
    TOOL_LISTS.setdefault(dict).pop(server, None)
    try:
        if server in registry().servers:
            registry().refresh(server)
    except McpError as error:
        return describe_error(error)
    return None


def draw_connection_panel() -> str | None:
    """Choose, add and connect servers; returns the chosen server when it is connected."""
    config, config_error = _load_config()
    added: dict[str, McpServerConfig] = ADDED_SERVERS.setdefault(dict)
    if config_error:
        st.error(f"mcp.json could not be read: {config_error}")
    sign_in.finish_from_url()
    if returned := SIGNED_IN.pop():
        # Back from a server's sign-in page, in a new browser session: connect it now.
        name, entry = returned
        if name not in config.servers:
            added[name] = entry
        connect(name, entry, typed=name in added)
        CHOOSE_NEXT.set(name)
    known = {**config.servers, **added}
    names = list(dict.fromkeys([*known, *clients()]))
    policy = current_policy(config)

    if CHOOSE_NEXT.present():
        SERVER_CHOICE.set(CHOOSE_NEXT.pop(""))
    if not names:
        st.info(
            "No MCP servers yet: this page connects to MCP servers so you can try their tools, "
            "resources and prompts by hand and let the chat call their tools; to begin, add one "
            f"below, or list them in `{config_path()}`."
        )
        if policy.allowed:  # the example is a program started on the server, like any stdio entry
            _offer_example()
    else:
        if SERVER_CHOICE.get() not in names:
            SERVER_CHOICE.set(next(iter(clients()), names[0]))
        left, right = st.columns([3, 2], vertical_alignment="bottom")
        with left:
            st.selectbox("Server", names, key=SERVER_CHOICE.name)
        chosen: str = SERVER_CHOICE()
        with right:
            if chosen in clients():
                if st.button("Disconnect", icon=":material/link_off:", key="tools-disconnect"):
                    disconnect(chosen)
                    st.rerun()
            elif chosen in known:
                entry = known[chosen]
                if st.button("Connect", type="primary", icon=":material/power:", key="tools-connect"):
                    with st.spinner(f"Starting {chosen}…"):
                        connect(chosen, entry, typed=chosen in added)
                    st.rerun()
        if chosen in known and chosen not in clients():
            st.caption(f"`{entry_summary(known[chosen].model_dump())}`")
        problem = CONNECT_ERRORS.get({}).get(chosen) or MCP_ERRORS.get({}).get(chosen)
        if (
            chosen in known
            and chosen not in clients()
            and sign_in.draw_sign_in(chosen, known[chosen], typed=chosen in added)
        ):
            pass  # the offer to sign in says what the server wants
        elif problem and chosen not in clients():
            st.error(f"Could not connect to **{chosen}**:\n\n```\n{problem}\n```", icon=":material/error:")

    if problem := SAVE_PROBLEM.pop():
        st.warning(problem)
    _draw_add_server(config, known, policy)
    chosen_name = SERVER_CHOICE.get()
    if chosen_name in clients():
        _follow_roots(chosen_name, clients()[chosen_name], config)
        _draw_details(chosen_name, clients()[chosen_name])
        return str(chosen_name)
    return None


def _draw_add_server(config: McpConfig, known: dict[str, Any], policy: StdioPolicy) -> None:
    with st.expander("Add a server", icon=":material/add:", expanded=not known):
        kinds = ["URL (Streamable HTTP)", "Command (stdio)"]
        kind = st.radio("How to reach it", kinds, key="tools-add-kind", horizontal=True)
        name = st.text_input("Name", key="tools-add-name", placeholder="e.g. time")
        stdio = kind == kinds[1]
        if stdio and not policy.allowed:
            st.warning(policy.reason, icon=":material/lock:")
        if stdio:
            st.text_input(
                "Command",
                key=add_server_field("command").name,
                placeholder="e.g. uvx",
                disabled=not policy.allowed,
            )
            st.text_input(
                "Arguments",
                key=add_server_field("args").name,
                placeholder="e.g. mcp-server-time --local-timezone UTC",
                disabled=not policy.allowed,
                help="Split like a shell does; quote arguments that contain spaces.",
            )
            st.text_area(
                "Environment",
                key=add_server_field("env").name,
                placeholder="KEY=value, one a line",
                height=68,
                disabled=not policy.allowed,
            )
            st.text_input(
                "Working folder",
                key=add_server_field("cwd").name,
                placeholder="optional",
                disabled=not policy.allowed,
            )
        else:
            st.text_input("URL", key=add_server_field("url").name, placeholder="http://127.0.0.1:3001/mcp")
            st.text_area(
                "Headers",
                key=add_server_field("headers").name,
                placeholder="Authorization: Bearer …  (one a line)",
                height=68,
            )
        may_save = bootstrap.may_change_mcp_config()
        save = st.checkbox(
            f"Save to {config_path()}",
            key="tools-add-save",
            value=False,
            disabled=not may_save,
            help=None if may_save else "Only an admin may save servers to mcp.json.",
        )
        if st.button("Add and connect", key="tools-add-connect", disabled=stdio and not policy.allowed):
            _add_server(name, stdio, save, known)


def _offer_example() -> None:
    """One click to a real server (the one `make run` installs), so a first look is not an empty page.

    Offered only to a person who may start stdio servers from the browser (signed in: an admin); the
    button is never drawn for anyone else, so no click of theirs can start it."""
    example = example_server()
    if example is None:
        return
    with st.container(border=True):
        st.markdown(
            f":material/schedule: **Try an example:** `{example.package}` {example.description}. "
            "Its tools are then ready here and in the chat."
        )
        if st.button(f"Add the {example.name} server", key="tools-add-example", type="primary"):
            ADDED_SERVERS()[example.name] = example.entry
            CHOOSE_NEXT.set(example.name)
            with st.spinner(f"Starting {example.name}…"):
                if connect(example.name, example.entry):
                    # The point of the example is to be used: the chat may call its tools at once.
                    chat_names = registry().chat_names(example.name).values()
                    ENABLED_TOOLS.set(enabled_tools() | set(chat_names))
            st.rerun()


def _add_server(name: str, stdio: bool, save: bool, known: dict[str, Any]) -> None:
    try:
        name = check_server_name(name, known)
        if stdio:
            raw = stdio_entry(
                add_server_field("command").get(""),
                add_server_field("args").get(""),
                add_server_field("env").get(""),
                add_server_field("cwd").get(""),
            )
        else:
            raw = http_entry(add_server_field("url").get(""), add_server_field("headers").get(""))
        entry = parse_server_entry(name, raw, "the form")
    except (ServerFormError, McpConfigError) as error:
        st.error(str(error))
        return
    # Checked again at the moment of starting: the policy is the server's, not the form's.
    config, _ = _load_config()
    if stdio and not current_policy(config).allowed:
        st.error(current_policy(config).reason)
        return
    ADDED_SERVERS()[name] = entry
    if save:
        SAVE_PROBLEM.set(_save(name, entry))
    CHOOSE_NEXT.set(name)
    with st.spinner(f"Connecting to {name}…"):
        connect(name, entry, typed=True)
    st.rerun()


def _save(name: str, entry: McpServerConfig) -> str | None:
    """Add the entry to mcp.json; why not, in words. A file that does not read is never overwritten.

    The entry is saved to mean exactly what was typed (`${` escaped, so it is never filled from the
    server's environment later), with any secret the server knows masked."""
    if not bootstrap.may_change_mcp_config():
        return "The server was not saved: only an admin may change mcp.json."
    config, problem = _load_config()
    if problem:
        return f"The server was not saved: {problem}"
    masked = redact_data(literal_entry(entry).model_dump(mode="json", exclude_defaults=True))
    config.servers[name] = parse_server_entry(name, {**masked, "type": entry.type}, "the form")
    try:
        save_mcp_config(config_path(), config)
    except OSError as error:
        return f"The server was not saved to {config_path()}: {error.strerror or error}"
    st.toast(f"Saved {name} to {config_path()}.")
    return None


def _follow_roots(name: str, client: McpClient, config: McpConfig) -> None:
    """When an admin changed the server's folders in mcp.json, tell the server (roots/list_changed)."""
    entry = config.servers.get(name)
    if entry is None or client.features.roots is None:
        return
    wanted = entry_roots(entry)
    if wanted != client.features.roots:
        try:
            client.set_roots(wanted)
        except McpError as error:
            st.warning(f"Telling {name} about its new folders failed: {describe_error(error)}")


def _draw_details(name: str, client: McpClient) -> None:
    info = client.server_info
    with st.container(border=True):
        top = st.columns([3, 2, 2], vertical_alignment="center")
        with top[0]:
            if src := icon_src(info.icons):
                st.image(src, width=32)
            title = f"**{info.title}** `{info.name}`" if info.title else f"**{info.name or name}**"
            # The title and version are the server's words: no image in them loads from the network.
            st.markdown(
                safe_markdown(f"{title} {info.version}") + "  \n:green[:material/check_circle: connected]"
            )
        with top[1]:
            if client.stateless:
                session = "none (stateless revision)"
            else:
                session = f"`{client.session_id}`" if client.session_id else "none (stdio)"
            st.markdown(f"Protocol revision **{client.protocol_version}**  \nSession {session}")
        with top[2]:
            pings: dict[str, str] = PINGS.setdefault(dict)
            if st.button("Ping", icon=":material/network_ping:", key="tools-ping"):
                try:
                    pings[name] = f"answered in {duration(ping_ms(client))}"
                except McpError as error:
                    pings[name] = f"no answer: {describe_error(error)}"
            if name in pings:
                st.caption(f"Ping {pings[name]}")
            auth = getattr(client.transport, "auth", None)
            grant = auth.grant if isinstance(auth, GrantAuth) else None
            # A machine sign-in (client credentials in mcp.json) is the operator's, not a person's to end.
            if (
                grant is not None
                and grant.grant_type != "client_credentials"
                and st.button("Sign out of this server", icon=":material/logout:", key="tools-sign-out")
            ):
                sign_in.sign_out(name, grant.server_url)
                disconnect(name)
                st.rerun()
        if client.instructions:
            with st.expander("Instructions from the server", icon=":material/info:"):
                st.markdown(safe_markdown(client.instructions))
        with st.expander("Capabilities", icon=":material/tune:"):
            st.code(json.dumps(client.capabilities, indent=2), language="json")
            st.caption("What yiem offers this server (roots, questions to you, your model):")
            st.code(json.dumps(client.features.capabilities(), indent=2), language="json")
            roots = client.features.roots or []
            st.caption(
                "Folders it may use (set by an admin in mcp.json): "
                + (", ".join(f"`{root.uri}`" for root in roots) if roots else "none")
            )
        events = watch(name, client)
        with st.expander(f"Server notifications ({len(events)})", icon=":material/notifications:"):
            recent = events.recent()
            if not recent:
                st.caption("Log messages and changes the server announces show here.")
            else:
                lines = [f"{when:%H:%M:%S} {notification_words(event)}" for when, event in recent]
                st.code("\n".join(lines), language=None, wrap_lines=True)
                st.button("Update", key="tools-events-update", icon=":material/refresh:")
