"""The dataset tab: a table to edit items, CSV or JSONL upload with a column mapping, items from saved
conversations, JSONL export."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pandas as pd
import streamlit as st

from ui.experiments.item_images import draw_item_images
from ui.state import EDITOR_VERSION, EXPERIMENT_WIDGET_PREFIX, dataset_base, experiment_widget
from yiem.experiments import Dataset, DatasetError, DatasetItem, ExperimentDraft
from yiem.store import Conversation, ConversationStore, StoreError

FIXED = ["id", "input", "expected", "tags", "images"]


def _frame(dataset: Dataset) -> pd.DataFrame:
    var_names = sorted({name for item in dataset.items for name in item.vars})
    rows = [
        {
            "id": item.id,
            "input": item.input,
            "expected": item.expected or "",
            "tags": ", ".join(item.tags),
            "images": str(len(item.images)) if item.images else "",
            **{name: item.vars.get(name, "") for name in var_names},
        }
        for item in dataset.items
    ]
    return pd.DataFrame(rows, columns=FIXED + var_names).astype(str)


def _items(frame: pd.DataFrame, before: Dataset) -> list[DatasetItem]:
    images = {item.id: item.images for item in before.items}
    items = []
    for record in frame.fillna("").to_dict("records"):
        text = str(record.get("input", "")).strip()
        if not text:
            continue  # a row being typed, or emptied to delete it
        record_vars = {k: str(v) for k, v in record.items() if k not in FIXED and str(v) != ""}
        fields: dict[str, Any] = {"input": text, "vars": record_vars}
        if str(record.get("id", "")).strip():
            fields["id"] = str(record["id"]).strip()
        expected = str(record.get("expected", ""))
        fields["expected"] = expected if expected else None
        fields["tags"] = [t.strip() for t in str(record.get("tags", "")).split(",") if t.strip()]
        item = DatasetItem(**fields)
        item.images = images.get(item.id, [])
        items.append(item)
    return items


def _replace(draft: ExperimentDraft, dataset: Dataset) -> None:
    draft.dataset = dataset
    EDITOR_VERSION.set(EDITOR_VERSION.get(0) + 1)


def draw_dataset(draft: ExperimentDraft, chats: ConversationStore) -> None:
    """Edit the items in place; the table's base is kept until the dataset is replaced."""
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
        },
    )
    try:
        draft.dataset = Dataset(name=draft.dataset.name, items=_items(edited, draft.dataset))
    except ValueError as error:
        st.error(f"An item cannot be used: {error}")
    st.caption(f"{len(draft.dataset.items)} items · version {draft.dataset.version[:8]}")
    draw_item_images(draft)
    left, right = st.columns(2)
    with left:
        _upload(draft)
        _from_conversations(draft, chats)
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
    input_column = st.selectbox("Input column", columns, key=f"{EXPERIMENT_WIDGET_PREFIX}map_input")
    rest = [c for c in columns if c != input_column]
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


def _from_conversations(draft: ExperimentDraft, chats: ConversationStore) -> None:
    with st.expander("Add from conversations", icon=":material/forum:"):
        saved = {conversation.id: conversation for conversation in chats.list_conversations()}
        picked = st.multiselect(
            "Conversations",
            list(saved),
            format_func=lambda key: _chat_label(saved[key]),
            key=f"{EXPERIMENT_WIDGET_PREFIX}chats",
            placeholder="Pick saved conversations" if saved else "No saved conversations yet",
            help="Each of your messages becomes an input, the reply that followed its expected answer",
        )
        if st.button(
            "Add from conversations",
            key=f"{EXPERIMENT_WIDGET_PREFIX}add_chats",
            icon=":material/add:",
            disabled=not picked,
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
