"""The dataset tab: a table to edit items, CSV or JSONL upload with a column mapping, items from saved
conversations, JSONL export."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pandas as pd
import streamlit as st

from ui.experiments.conversation import draw_conversation_items, item_kind
from ui.experiments.item_images import draw_item_images
from ui.experiments.state import CONFIRM_CHATS
from ui.state import EDITOR_VERSION, EXPERIMENT_WIDGET_PREFIX, dataset_base, experiment_widget
from yiem.experiments import (
    Dataset,
    DatasetError,
    DatasetItem,
    ExperimentDraft,
    SimulatedUserError,
    simulated_user,
)
from yiem.store import Conversation, ConversationStore, StoreError

FIXED = ["id", "input", "expected", "tags", "images", "persona", "goal", "item type"]
# A template var named like a fixed column ("kind", "goal") gets a column of its own: the table's
# columns must be unique, or the data editor refuses the whole table and the page stops drawing.
_VAR_SUFFIX = " (var)"
# A file's columns that are never the input: what the library reads by name.
NOT_INPUT = {"messages", "user", "persona", "goal", "max_user_turns", "forbidden_tools", "vars", "id", "tags"}
NO_INPUT = "(none: the conversation or the simulated user opens)"


def _frame(dataset: Dataset) -> pd.DataFrame:
    var_names = sorted({name for item in dataset.items for name in item.vars})
    rows = [
        {
            "id": item.id,
            "input": item.input,
            "expected": item.expected or "",
            "tags": ", ".join(item.tags),
            "images": str(len(item.images)) if item.images else "",
            "persona": item.user.persona if item.user else "",
            "goal": item.user.goal if item.user else "",
            "item type": item_kind(item),
            **{_var_column(name): item.vars.get(name, "") for name in var_names},
        }
        for item in dataset.items
    ]
    return pd.DataFrame(rows, columns=FIXED + [_var_column(name) for name in var_names]).astype(str)


def _var_column(name: str) -> str:
    return f"{name}{_VAR_SUFFIX}" if name in FIXED else name


def _var_name(column: str) -> str:
    bare = column.removesuffix(_VAR_SUFFIX)
    return bare if bare in FIXED else column


def _items(frame: pd.DataFrame, before: Dataset) -> list[DatasetItem]:
    """The table's rows as items; what the table does not show (images, a conversation, turns) is kept
    by id. A persona with no goal raises `DatasetError` naming its row."""
    earlier = {item.id: item for item in before.items}
    items = []
    for number, record in enumerate(frame.fillna("").to_dict("records"), start=1):
        text = str(record.get("input", "")).strip()
        old = earlier.get(str(record.get("id", "")).strip())
        try:
            user = simulated_user(
                str(record.get("persona", "")),
                str(record.get("goal", "")),
                old.user.max_turns if old and old.user else None,
            )
        except SimulatedUserError as error:
            raise DatasetError(f"Row {number}: {error}.") from None
        if not text and user is None and not (old and old.messages):
            continue  # a row being typed, or emptied to delete it
        record_vars = {_var_name(k): str(v) for k, v in record.items() if k not in FIXED and str(v) != ""}
        fields: dict[str, Any] = {"input": text, "vars": record_vars}
        if str(record.get("id", "")).strip():
            fields["id"] = str(record["id"]).strip()
        expected = str(record.get("expected", ""))
        fields["expected"] = expected if expected else None
        fields["tags"] = [t.strip() for t in str(record.get("tags", "")).split(",") if t.strip()]
        item = DatasetItem(**fields, user=user)
        if old is not None:
            item.images, item.messages, item.forbidden_tools = old.images, old.messages, old.forbidden_tools
        items.append(item)
    return items


def _replace(draft: ExperimentDraft, dataset: Dataset) -> None:
    draft.dataset = dataset
    EDITOR_VERSION.set(EDITOR_VERSION.get(0) + 1)


def draw_dataset(draft: ExperimentDraft, chats: ConversationStore, *, shared: bool = False) -> None:
    """Edit the items in place; the table's base is kept until the dataset is replaced. `shared`: the
    experiment is shared with the team, who would see items added from conversations."""
    version = EDITOR_VERSION.get(0)
    base_key = dataset_base(version)
    if not base_key.present():
        base_key.set(_frame(draft.dataset))
    base: pd.DataFrame = base_key()
    new_var = st.text_input(
        "Add a column for a template var",
        key=f"{EXPERIMENT_WIDGET_PREFIX}new_var_{version}",
        placeholder="e.g. language (then use {language} in a system prompt)",
    )
    if new_var and new_var not in base.columns and new_var.isidentifier():
        base = base.assign(**{new_var: ""})
        base_key.set(base)
    edited = st.data_editor(
        base,
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        key=f"{EXPERIMENT_WIDGET_PREFIX}dataset_editor_{version}",
        column_config={
            "id": st.column_config.TextColumn("id", help="Left empty, one is made up"),
            "input": st.column_config.TextColumn("input", help="What the user says", width="large"),
            "expected": st.column_config.TextColumn("expected", help="The answer scorers compare with"),
            "tags": st.column_config.TextColumn("tags", help="Comma-separated"),
            "images": st.column_config.TextColumn(
                "images", disabled=True, help="How many; attach them under Images of an item"
            ),
            "persona": st.column_config.TextColumn(
                "persona", help="A simulated user: who plays the user (the Run tab chooses its model)"
            ),
            "goal": st.column_config.TextColumn(
                "goal", help="What the simulated user wants done; it ends the conversation once it is"
            ),
            "item type": st.column_config.TextColumn(
                "item type", disabled=True, help="A conversation or a simulated user"
            ),
        },
    )
    try:
        draft.dataset = Dataset(name=draft.dataset.name, items=_items(edited, draft.dataset))
    except DatasetError as error:
        st.error(f"{error} Nothing else in the table was changed.")
    except ValueError as error:
        st.error(f"An item cannot be used: {error}")
    st.caption(f"{len(draft.dataset.items)} items · version {draft.dataset.version[:8]}")
    draw_conversation_items(draft.dataset)
    draw_item_images(draft)
    left, right = st.columns(2)
    with left:
        _upload(draft)
        _from_conversations(draft, chats, shared)
    with right:
        st.download_button(
            "Export as JSONL",
            draft.dataset.to_jsonl(),
            file_name=f"{draft.name or 'dataset'}.jsonl",
            mime="application/jsonl",
            icon=":material/download:",
            disabled=not draft.dataset.items,
            key=f"{EXPERIMENT_WIDGET_PREFIX}export_jsonl",
        )


def _upload(draft: ExperimentDraft) -> None:
    uploaded = st.file_uploader(
        "Upload CSV or JSONL", type=["csv", "jsonl"], key=f"{EXPERIMENT_WIDGET_PREFIX}upload"
    )
    if uploaded is None:
        return
    text = uploaded.getvalue().decode("utf-8-sig", errors="replace")
    is_csv = uploaded.name.lower().endswith(".csv")
    try:
        columns = _columns(text, is_csv)
    except DatasetError as error:
        st.error(str(error))
        return
    inputs = [c for c in columns if c not in NOT_INPUT]
    if NOT_INPUT & {"messages", "user", "persona", "goal"} & set(columns) or not inputs:
        inputs.append(NO_INPUT)
    picked_input = st.selectbox(
        "Input column",
        inputs,
        index=inputs.index("input") if "input" in inputs else 0,
        key=f"{EXPERIMENT_WIDGET_PREFIX}map_input",
    )
    input_column = "input" if picked_input == NO_INPUT else picked_input
    rest = [c for c in columns if c != input_column and c not in NOT_INPUT]
    expected = _optional_column("Expected column", rest, "expected")
    others = [c for c in rest if c != expected]
    images = _optional_column(
        "Images column",
        others,
        "images",
        help="Each cell: data URLs (data:image/png;base64,…) or base64 of PNG, JPEG, GIF or WebP pictures, "
        "separated by spaces (in JSONL, a list)",
    )
    var_columns = st.multiselect(
        "Columns as template vars",
        [c for c in others if c not in (images, "tags", "id")],
        key=f"{EXPERIMENT_WIDGET_PREFIX}map_vars",
    )
    mapping: dict[str, Any] = {
        "input": input_column,
        "expected": expected,
        "images": images,
        "vars": var_columns,
        "tags": "tags" if "tags" in columns else None,
        "id": "id" if "id" in columns else None,
    }
    mode = st.radio(
        "Items",
        ["Add to the dataset", "Replace the dataset"],
        horizontal=True,
        key=f"{EXPERIMENT_WIDGET_PREFIX}map_mode",
    )
    if st.button("Import", key=f"{EXPERIMENT_WIDGET_PREFIX}import", icon=":material/upload:"):
        try:
            loaded = Dataset.from_csv(text, **mapping) if is_csv else Dataset.from_jsonl(text, **mapping)
        except DatasetError as error:
            st.error(str(error))
            return
        items = loaded.items if mode.startswith("Replace") else [*draft.dataset.items, *loaded.items]
        _replace(draft, Dataset(name=draft.dataset.name, items=items))
        st.rerun()


def _optional_column(label: str, columns: list[str], name: str, help: str | None = None) -> str | None:
    """A column picked for `name`, preselected when one is called so; None for "(none)"."""
    picked = st.selectbox(
        label,
        ["(none)", *columns],
        index=1 + columns.index(name) if name in columns else 0,
        key=f"{EXPERIMENT_WIDGET_PREFIX}map_{name}",
        help=help,
    )
    return None if picked == "(none)" else picked


def _chat_label(conversation: Conversation) -> str:
    return f"{conversation.title or '(untitled)'} · {conversation.updated:%Y-%m-%d %H:%M}"


def _from_conversations(draft: ExperimentDraft, chats: ConversationStore, shared: bool) -> None:
    with st.expander("Add from conversations", icon=":material/forum:"):
        saved = {conversation.id: conversation for conversation in chats.list_conversations()}
        picked = st.multiselect(
            "Conversations",
            list(saved),
            format_func=lambda key: _chat_label(saved[key]),
            key=f"{EXPERIMENT_WIDGET_PREFIX}chats",
            placeholder="Pick saved conversations" if saved else "No saved conversations yet",
            help=(
                "Each of your messages becomes an item: the conversation up to it, the message as the "
                "input and the reply that followed as the expected answer"
            ),
        )
        # Chats are private: in a shared experiment the team sees what is added, so the person says so.
        confirmed = not shared or _confirm_sharing_chats()
        if st.button(
            "Add from conversations",
            key=f"{EXPERIMENT_WIDGET_PREFIX}add_chats",
            icon=":material/add:",
            disabled=not picked or not confirmed,
        ):
            try:
                loaded = Dataset.from_conversations(chats, picked)
            except StoreError as error:  # deleted in another tab since the list was drawn
                st.error(str(error))
                return
            before = len(draft.dataset.items)
            _replace(draft, draft.add_from_conversations(loaded, chats.owner))
            experiment_widget("chats_added").set(len(draft.dataset.items) - before)
            st.rerun()
        added_count = experiment_widget("chats_added").pop()
        if added_count is not None:
            st.success(f"Added {added_count} items (turns already in the dataset are not added twice).")


def _confirm_sharing_chats() -> bool:
    st.warning(
        "This experiment is shared with the team: they will see the items you add from your "
        "conversations, each with the conversation before it, once it is saved."
    )
    return st.checkbox(
        "The team may see the items I add from my conversations",
        key=CONFIRM_CHATS.name,
    )


def _columns(text: str, is_csv: bool) -> list[str]:
    if is_csv:
        header = next(csv.reader(io.StringIO(text)), [])
        if not header:
            raise DatasetError("The CSV file is empty: it needs a header row naming the columns.")
        return header
    names: list[str] = []
    for line in text.splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetError(f"The file is not JSON Lines: {error.msg}.") from None
            if isinstance(record, dict):
                names += [k for k in record if k not in names]
    if not names:
        raise DatasetError("The file has no items.")
    return names
