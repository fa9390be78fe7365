"""The Tools tab (list, form, call with progress and Cancel, result) and the call history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from ui.server_questions import new_questions
from ui.state import (
    CALL_TIMEOUT,
    CALL_TIMEOUT_KEPT,
    ENABLED_TOOLS,
    HISTORY_ERROR,
    LAST_CALLS,
    SERVER_CHOICE,
    TOOL_HISTORY,
    TOOL_RUN,
    TOOLS_TAB,
    FormKeys,
    chosen_tool,
    tool_in_chat,
    widget,
)
from ui.tool_form import draw_form, form_arguments, load_arguments, remember
from ui.tools import connect as connection
from ui.tools.checks import draw_save_form
from ui.tools.result import draw_record
from ui.tools.tasks import as_task_toggle, draw_server_tasks, draw_task
from ui.tools.views import draw_tool_view
from yiem.amounts import elapsed
from yiem.explorer import (
    CallRecord,
    ToolCallRun,
    ToolForm,
    UnusableSchemaError,
    annotation_badges,
    chat_tool_name,
    describe_error,
    duration_words,
    history_json,
    icon_src,
    progress_fraction,
    progress_words,
)
from yiem.mcp import McpClient, McpError, McpTool, cache_words
from yiem.safe_markdown import safe_markdown

# Short calls finish before the page is drawn, so their result shows without a progress step.
_QUICK_WAIT_S = 1.0
_POLL_S = 0.5
_SEARCH_FROM = 8


def _form_keys(server: str, tool: str) -> FormKeys:
    return FormKeys(f"tf:{server}:{tool}")


def _form_for(tool: McpTool) -> tuple[ToolForm, str | None]:
    try:
        return ToolForm(tool.input_schema), None
    except UnusableSchemaError as error:
        return ToolForm(None), f"The form cannot be built from this tool's schema ({error}); edit the JSON."


def finish_run() -> None:
    """Move a finished call into the history (once), wherever the page is."""
    run: ToolCallRun | None = TOOL_RUN.get()
    if run is None or not run.done:
        return
    record = run.record
    TOOL_HISTORY.setdefault(list).append(record)
    LAST_CALLS.setdefault(dict)[(record.server, record.tool)] = record
    TOOL_RUN.pop()


def start_call(
    server: str,
    client: McpClient,
    tool: str,
    arguments: dict[str, Any],
    as_task: bool = False,
    meanwhile: Callable[[ToolCallRun], None] | None = None,
) -> None:
    """Send the call; `meanwhile` draws while it runs (the view's frame), before the short wait."""
    timeout = float(CALL_TIMEOUT.get() or 0) or None
    run = ToolCallRun(client, server, tool, arguments, timeout=timeout, as_task=as_task).start()
    TOOL_RUN.set(run)
    if meanwhile is not None:
        meanwhile(run)
    if run.wait(_QUICK_WAIT_S):
        finish_run()


def draw_tools(server: str, client: McpClient) -> None:
    try:
        tools = connection.cached_tools(server)
    except McpError as error:
        st.error(f"Listing the tools failed: {describe_error(error)}")
        return
    if not tools:
        st.caption(f"{server} offers no tools.")
        return
    left, right = st.columns([2, 3], gap="large")
    with left:
        shown = _tool_list(server, tools)
    chosen = chosen_tool(server).get()
    tool = next((tool for tool in shown if tool.name == chosen), None)
    with right:
        if tool is not None:
            _draw_tool(server, client, tool)
    draw_server_tasks(server, client)


def _tool_list(server: str, tools: list[McpTool]) -> list[McpTool]:
    header, refresh = st.columns([3, 1], vertical_alignment="center")
    client = connection.clients().get(server)
    fresh = cache_words(client.list_age("tools/list")) if client is not None else ""
    header.markdown(f"**{len(tools)} tools**" + (f"  \n:gray[{fresh}]" if fresh else ""))
    if refresh.button("", icon=":material/refresh:", key="tools-refresh", help="List the tools again"):
        problem = connection.refresh_tools(server)
        if problem is None:
            st.rerun()
        st.error(f"Listing the tools failed: {problem}")
    shown = tools
    if len(tools) > _SEARCH_FROM:
        remember("tools-search")
        query = st.text_input("Search tools", key="tools-search", placeholder="name or description").lower()
        shown = [t for t in tools if query in f"{t.name} {t.display_name} {t.description}".lower()]
    if not shown:
        st.caption("No tool matches.")
        return []
    by_name = {tool.name: tool for tool in shown}
    chosen = chosen_tool(server)
    key = chosen.name
    remember(key)
    if chosen.get() not in by_name:
        chosen.set(shown[0].name)
    # A long list scrolls on its own, so the chosen tool's form stays in view.
    with st.container(height=520 if len(shown) > 6 else "content", border=False):
        st.radio(
            "Tool",
            list(by_name),
            key=key,
            label_visibility="collapsed",
            format_func=lambda name: by_name[name].display_name,
            captions=[_caption(tool) for tool in shown],
        )
    return shown


def _caption(tool: McpTool) -> str:
    first_line = (tool.description or "").strip().splitlines()[0] if tool.description.strip() else ""
    short = first_line if len(first_line) <= 90 else first_line[:89] + "…"
    badges = " ".join(f"`{badge}`" for badge in annotation_badges(tool.annotations))
    return f"{badges} {short}".strip()


_BADGE_COLORS = {
    "read-only": "green",
    "destructive": "red",
    "idempotent": "blue",
    "open-world": "violet",
    "task (required)": "orange",
    "task (optional)": "orange",
}


def _draw_tool(server: str, client: McpClient, tool: McpTool) -> None:
    if src := icon_src(tool.icons):
        st.image(src, width=32)
    st.subheader(tool.display_name, anchor=False)
    st.caption(f"`{tool.name}`")
    badges = annotation_badges(tool.annotations)
    if tool.task_support != "forbidden":
        badges.append(f"task ({tool.task_support})")
    if badges:
        with st.container(horizontal=True):
            for badge in badges:
                st.badge(badge, color=_BADGE_COLORS.get(badge, "gray"))  # type: ignore[arg-type]
    if tool.description:
        st.markdown(safe_markdown(tool.description))
    _use_in_chat_toggle(server, tool)

    form, problem = _form_for(tool)
    keys = _form_keys(server, tool.name)
    if problem:
        st.warning(problem)
        widget(keys.raw_mode).set(True)
    draw_form(form, keys)
    as_task = as_task_toggle(server, client, tool)

    run: ToolCallRun | None = TOOL_RUN.get()
    busy = run is not None
    cols = st.columns([2, 2, 3], vertical_alignment="bottom")
    with cols[0]:
        call = st.button(
            "Call", type="primary", icon=":material/play_arrow:", key="tools-call", disabled=busy
        )
    with cols[1]:
        # Its start comes as `value`, not set in the session first (as `remember` does): a run cut
        # short at this widget then left the browser's field at its minimum, and calls timed out
        # after 1 s (ci25). A value the person chose is the widget's own and wins over `value`.
        CALL_TIMEOUT_KEPT.set(
            st.number_input(
                "Timeout (s)",
                key=CALL_TIMEOUT.name,
                value=CALL_TIMEOUT_KEPT.get() or 60,
                min_value=1,
                max_value=3600,
                step=5,
                help="Progress from the server resets it.",
            )
        )
    # Two fixed places, so the view's frame is drawn at the same spot from the moment the call starts
    # to its result: Streamlit then keeps the frame (and its loaded document) and only updates its data.
    result_box, view_box = st.container(), st.container()

    def mount_view(run: ToolCallRun, just_called: bool = False) -> None:
        with view_box:
            draw_tool_view(server, client, tool, run.record, waiting=True, just_called=just_called)

    if call:
        arguments = form_arguments(form, keys)
        if arguments is not None:
            start_call(
                server, client, tool.name, arguments, as_task, meanwhile=lambda run: mount_view(run, True)
            )
        st.rerun()

    run = TOOL_RUN.get()
    if run is not None:
        with result_box:
            _draw_running(run)
        if (run.record.server, run.record.tool) == (server, tool.name):
            mount_view(run)
        return
    last: CallRecord | None = LAST_CALLS.get({}).get((server, tool.name))
    if last is None:
        # Loaded when the tool is chosen (the extension lets a host fetch a view before the call), so
        # a quick call's result finds the view's document drawn; the view is answered nothing till then.
        with view_box:
            draw_tool_view(server, client, tool, None)
        return
    with result_box:
        st.markdown("**Result**")
        draw_record(last, tool.output_schema, key=f"result-{last.id}", read=client.read_resource)
        if last.task is not None:
            draw_task(last.task)
    with view_box:
        draw_tool_view(server, client, tool, last)


def _use_in_chat_toggle(server: str, tool: McpTool) -> None:
    name = chat_tool_name(connection.registry(), server, tool.name)
    if name is None:
        return
    enabled = connection.enabled_tools()

    def changed() -> None:
        chosen = set(connection.enabled_tools())
        if tool_in_chat(name).get():
            chosen.add(name)
        else:
            chosen.discard(name)
        ENABLED_TOOLS.set(chosen)

    tool_in_chat(name).set(name in enabled)
    st.toggle(
        "Use in chat",
        key=tool_in_chat(name).name,
        on_change=changed,
        help=f"The chat's model may call this tool (as `{name}`).",
    )


def _draw_running(run: ToolCallRun) -> None:
    """Progress and Cancel, redrawn on a timer while the call runs; the whole page redraws when it ends."""

    @st.fragment(run_every=_POLL_S)
    def running() -> None:
        if run.done or new_questions(run.record.server):
            st.rerun()
        record = run.record
        progress = run.progress
        fraction = progress_fraction(progress)
        words = f"Calling `{record.tool}` — {progress_words(progress)} · {elapsed(run.elapsed_s)}"
        if fraction is None:
            st.progress(0, text=words)  # no total from the server: a bar that only says it is working
        else:
            st.progress(fraction, text=words)
        if (task := run.task) is not None:
            draw_task(task)
        if st.button("Cancel", icon=":material/cancel:", key="tools-cancel"):
            run.cancel()
            run.wait(2.0)
            st.rerun()

    running()


def _replay(record: CallRecord) -> None:
    """Load a past call's arguments into its tool's form and run it again."""
    client = connection.clients().get(record.server)
    if client is None:
        HISTORY_ERROR.set(f"{record.server} is not connected; connect it to replay this call.")
        return
    SERVER_CHOICE.set(record.server)
    chosen_tool(record.server).set(record.tool)
    TOOLS_TAB.set("Tools")
    try:
        tool = next((t for t in connection.cached_tools(record.server) if t.name == record.tool), None)
    except McpError as error:
        HISTORY_ERROR.set(f"Replaying needs {record.server}'s tools: {describe_error(error)}")
        return
    if tool is not None:
        load_arguments(_form_for(tool)[0], _form_keys(record.server, record.tool), record.arguments)
    if TOOL_RUN.get() is None:
        start_call(record.server, client, record.tool, record.arguments, "task" in record.request["params"])


def draw_history() -> None:
    records: list[CallRecord] = TOOL_HISTORY.get([])
    if problem := HISTORY_ERROR.pop():
        st.error(problem)
    if not records:
        st.caption("Calls made in this session appear here.")
        return
    st.download_button(
        "Export as JSON",
        history_json(records),
        file_name="yiem-tool-calls.json",
        mime="application/json",
        icon=":material/download:",
        key="tools-history-export",
    )
    for record in reversed(records):
        took = duration_words(record.duration_ms)
        when = f"{record.started_at:%H:%M:%S} UTC"
        label = f"{when} · {record.server} · {record.tool} — {record.status.value}, {took}"
        with st.expander(label, icon=":material/error:" if _failed(record) else ":material/check:"):
            st.markdown("**Arguments**")
            st.json(record.arguments, expanded=True)
            st.button(
                "Replay",
                key=f"tools-replay-{record.id}",
                on_click=_replay,
                args=(record,),
                icon=":material/replay:",
            )
            draw_save_form(record)
            client = connection.clients().get(record.server)
            read = client.read_resource if client is not None else None
            draw_record(record, None, key=f"history-{record.id}", read=read)
            if record.task is not None:
                draw_task(record.task)


def _failed(record: CallRecord) -> bool:
    result = record.result
    return record.error is not None or (result is not None and result.is_error)
