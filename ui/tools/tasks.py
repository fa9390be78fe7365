"""Server-side tasks on the Tools page: the "Run as a task" toggle, a task's status, the server's tasks."""

from __future__ import annotations

import streamlit as st

from ui.state import TASK_NOTE, TASK_RESULT
from ui.tool_form import remember
from ui.tools.result import draw_result
from yiem.explorer import (
    cancels_tasks,
    created_words,
    describe_error,
    fetch_result,
    has_result,
    lists_tasks,
    status_words,
    task_rows,
    task_toggle,
    ttl_words,
)
from yiem.mcp import CallToolResult, McpClient, McpError, McpTask, McpTool
from yiem.safe_markdown import safe_markdown

_SHOWN = 20


def as_task_toggle(server: str, client: McpClient, tool: McpTool) -> bool:
    """Draw "Run as a task" for a tool that may or must run as one; whether the call goes as a task."""
    toggle = task_toggle(tool, client.capabilities)
    if toggle is None:
        return False
    default, changeable = toggle
    key = f"tools-as-task:{server}:{tool.name}"
    if not changeable:
        st.toggle(
            "Run as a task",
            value=True,
            key=key,
            disabled=True,
            help="This tool only runs as a task: the server works on it and yiem asks how it stands.",
        )
        return True
    remember(key, default)
    return bool(
        st.toggle(
            "Run as a task",
            key=key,
            help="The server answers at once with a task; its status shows while it runs; Cancel stops it.",
        )
    )


def draw_task(task: McpTask) -> None:
    """A task's id, status in words, time to live and poll interval."""
    st.markdown(f"**Task** `{task.task_id}` · {safe_markdown(status_words(task))}")
    polled = f" · checked every {task.poll_interval / 1000:g} s" if task.poll_interval else ""
    st.caption(f"Created {created_words(task)} · kept for {ttl_words(task.ttl)}{polled}")


def draw_server_tasks(server: str, client: McpClient) -> None:
    """tasks/list with Get result and Cancel per task, when the server keeps a list of tasks."""
    if not lists_tasks(client.capabilities):
        return
    with st.expander("Tasks on this server", icon=":material/task:"):
        if note := TASK_NOTE.get({}).pop(server, None):
            st.info(note)
        st.button("Refresh", key=f"tools-tasks-refresh:{server}", icon=":material/refresh:")
        try:
            tasks = client.list_tasks()
        except McpError as error:
            st.error(f"Listing the tasks failed: {describe_error(error)}")
            return
        if not tasks:
            st.caption("No tasks yet: tools run as tasks appear here.")
            return
        by_id = {task.task_id: task for task in tasks}
        can_cancel = cancels_tasks(client.capabilities)
        for row in task_rows(tasks)[:_SHOWN]:
            task = by_id[row["Task"]]
            cols = st.columns([3, 4, 2, 2, 2, 2], vertical_alignment="center")
            cols[0].markdown(f"`{task.task_id[:12]}`", help=task.task_id)
            cols[1].markdown(safe_markdown(row["Status"]))
            cols[2].caption(row["Created"])
            cols[3].caption(f"kept {row['Kept for']}")
            cols[4].button(
                "Get result",
                key=f"tools-task-get:{task.task_id}",
                disabled=not has_result(task),
                on_click=_get_result,
                args=(server, client, task),
            )
            cols[5].button(
                "Cancel",
                key=f"tools-task-cancel:{task.task_id}",
                disabled=task.finished or not can_cancel,
                on_click=_cancel,
                args=(server, client, task),
            )
        if len(tasks) > _SHOWN:
            st.caption(f"The {_SHOWN} newest of {len(tasks)} tasks.")
        _draw_fetched(server)


def _get_result(server: str, client: McpClient, task: McpTask) -> None:
    result: CallToolResult | None = None
    error: str | None = None
    try:
        result = fetch_result(client, task)
    except McpError as exc:
        error = f"Getting the result of task {task.task_id} failed: {describe_error(exc)}"
    TASK_RESULT.setdefault(dict)[server] = (task.task_id, result, error)


def _cancel(server: str, client: McpClient, task: McpTask) -> None:
    try:
        note = f"Task {task.task_id}: {status_words(client.cancel_task(task.task_id))}"
    except McpError as exc:
        note = f"Cancelling task {task.task_id} failed: {describe_error(exc)}"
    TASK_NOTE.setdefault(dict)[server] = note


def _draw_fetched(server: str) -> None:
    fetched = TASK_RESULT.get({}).get(server)
    if fetched is None:
        return
    task_id, result, error = fetched
    st.markdown(f"**Result of task** `{task_id}`")
    if error is not None:
        st.error(error)
    if result is not None:
        draw_result(result, None, key=f"task-result-{task_id}")
