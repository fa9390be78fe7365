"""Datasets: named lists of items (input, optional images and expected answer, vars, tags).

Import from CSV or JSONL with a column mapping, export as JSONL. A dataset's `version` is a hash of
its items, so a run records exactly which items it used and a later edit never changes a past run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from yiem.errors import YiemError
from yiem.experiments._cell_images import CellImageError, cell_images
from yiem.experiments._simulated_user import SimulatedUser
from yiem.store import ConversationStore
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    ToolResultMessage,
    UserMessage,
    replace_lone_surrogates,
)

_MESSAGES: TypeAdapter[list[AgentMessage]] = TypeAdapter(list[AgentMessage])


class DatasetError(YiemError):
    """A dataset file or column mapping cannot be read; the message says which line or column."""


def _item_id() -> str:
    return uuid.uuid4().hex[:12]


class DatasetItem(BaseModel):
    """One task: the user's `input` (and images), the `expected` answer if any, template vars, tags.

    `messages` is the conversation before `input` (the spec's message types, tool calls and results
    included): the model replies to all of it. `input` may be empty when `messages` ends with the user.
    """

    id: str = Field(default_factory=_item_id)
    input: str = ""
    messages: list[AgentMessage] = Field(default_factory=list)
    images: list[ImageContent] = Field(default_factory=list)
    expected: str | None = None
    vars: dict[str, str] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    # Tools this item must not call: the `forbidden_tools` scorer fails an outcome that did.
    forbidden_tools: list[str] = Field(default_factory=list)
    # Instead of (or after) a fixed input: a model plays this user until its goal is met.
    user: SimulatedUser | None = None


class Dataset(BaseModel):
    """A named list of items; `version` changes whenever any item does."""

    name: str = "dataset"
    items: list[DatasetItem] = Field(default_factory=list)

    @property
    def version(self) -> str:
        """A short hash of the items (ids, inputs, images, expected, vars, tags), stable across runs."""
        items = replace_lone_surrogates([item.model_dump(mode="json") for item in self.items])
        payload = json.dumps(items, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def frozen(self) -> Dataset:
        """A deep copy: what a run keeps, so editing this dataset later leaves the run as it was."""
        # Container by container (strings are immutable): a generic deepcopy took ~100 µs an item.
        items = [
            item.model_copy(
                update={
                    "images": [image.model_copy() for image in item.images],
                    "vars": dict(item.vars),
                    "tags": list(item.tags),
                }
            )
            for item in self.items
        ]
        return self.model_copy(update={"items": items})

    def __len__(self) -> int:
        return len(self.items)

    def with_images(self, item_id: str, images: Sequence[ImageContent]) -> Dataset:
        """A copy in which the item `item_id` carries `images` (sent after its input text)."""
        if all(item.id != item_id for item in self.items):
            raise DatasetError(f"The dataset has no item {item_id!r} (deleted meanwhile?).")
        items = [
            item.model_copy(update={"images": list(images)}) if item.id == item_id else item
            for item in self.items
        ]
        return self.model_copy(update={"items": items})

    # --- import ----------------------------------------------------------------------------

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        name: str = "dataset",
        input: str = "input",
        expected: str | None = "expected",
        vars: Sequence[str] | None = None,
        tags: str | None = "tags",
        id: str | None = "id",
        images: str | None = "images",
        rows: Sequence[str] | None = None,
    ) -> Dataset:
        """Items from dicts: `input` names the input column, `expected`, `tags`, `images` theirs (None: none).

        `vars` lists the columns that become template vars; None takes every column not otherwise
        used. Tags may be a list or a comma-separated string; images are data URLs or base64 (a list,
        or separated by whitespace), each checked to be a picture before it is taken. `rows` names
        each record in errors ("Line 7" of a file); by default "Row 1", "Row 2"….
        """
        items = []
        for number, record in enumerate(records, start=1):
            row = rows[number - 1] if rows is not None else f"Row {number}"
            conversation = _conversation(record.get("messages"), row)
            user = _simulated_user(record, row)
            if record.get(input) in (None, "") and user is None:
                if not conversation:
                    raise DatasetError(f"{row} has no value in the input column {input!r}.")
                if not isinstance(conversation[-1], UserMessage | ToolResultMessage):
                    raise DatasetError(
                        f"{row}: the conversation ends with the assistant's reply; give the user's "
                        f"next turn in the {input!r} column or end 'messages' with a user message."
                    )
            used = {input, expected, tags, id, images, "images", "vars", "forbidden_tools", "messages"}
            used |= {"user", "persona", "goal", "max_user_turns"}
            names = [key for key in record if key not in used] if vars is None else list(vars)
            missing = [column for column in names if column not in record]
            if missing:
                raise DatasetError(f"{row} has no column {missing[0]!r} (chosen as a var).")
            row_vars = {column: _text(record[column]) for column in names if record[column] is not None}
            if isinstance(record.get("vars"), Mapping):
                row_vars = {**{k: _text(v) for k, v in record["vars"].items()}, **row_vars}
            raw_expected = record.get(expected) if expected else None
            try:
                row_images = cell_images(record.get(images)) if images else []
            except CellImageError as error:
                raise DatasetError(f"{row} has {error}.") from None
            try:
                items.append(
                    DatasetItem(
                        id=_text(record[id]) if id and record.get(id) not in (None, "") else _item_id(),
                        input=_text(record.get(input) or ""),
                        messages=conversation,
                        user=user,
                        images=row_images,
                        expected=None if raw_expected in (None, "") else _text(raw_expected),
                        vars=row_vars,
                        tags=_tags(record.get(tags) if tags else None),
                        forbidden_tools=_tags(record.get("forbidden_tools")),
                    )
                )
            except ValidationError as error:
                raise DatasetError(f"{row} is not a valid item: {error.errors()[0]['msg']}") from None
        return cls(name=name, items=items)

    @classmethod
    def from_csv(cls, source: str | Path | io.TextIOBase, **mapping: Any) -> Dataset:
        """Items from CSV text, a path or an open file (header row first); `mapping` as `from_records`."""
        text = _read(source)
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames:
            raise DatasetError("The CSV file is empty: it needs a header row naming the columns.")
        return cls.from_records(list(reader), **mapping)

    @classmethod
    def from_jsonl(cls, source: str | Path | io.TextIOBase, **mapping: Any) -> Dataset:
        """Items from JSON Lines (one object per line); `mapping` as `from_records`."""
        records, rows = [], []
        for number, line in enumerate(_read(source).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetError(f"Line {number} is not valid JSON: {error.msg}.") from None
            if not isinstance(record, dict):
                raise DatasetError(f"Line {number} is not a JSON object.")
            records.append(record)
            rows.append(f"Line {number}")
        return cls.from_records(records, rows=rows, **mapping)

    @classmethod
    def from_conversations(
        cls, store: ConversationStore, conversation_ids: Iterable[str], *, name: str = "dataset"
    ) -> Dataset:
        """An item per user turn of each saved conversation, up to that turn, its final reply as `expected`.

        Only the store owner's conversations are read: another person's raises
        `ConversationNotFoundError` as a deleted one does. Item ids name the conversation and turn,
        so adding the same conversation twice gives the same ids.
        """
        items: list[DatasetItem] = []
        for conversation_id in conversation_ids:
            store.get(conversation_id)  # not theirs, or deleted: say so rather than add nothing
            items += turn_items(conversation_id, store.load_messages(conversation_id))
        return cls(name=name, items=items)

    # --- export ----------------------------------------------------------------------------

    def to_jsonl(self) -> str:
        """One JSON object per item; `from_jsonl` reads it back unchanged."""
        records = replace_lone_surrogates([item.model_dump(mode="json") for item in self.items])
        lines = [json.dumps(record, ensure_ascii=False) for record in records]
        return "\n".join(lines) + ("\n" if lines else "")


def turn_items(conversation_id: str, messages: Sequence[AgentMessage]) -> list[DatasetItem]:
    """Each user turn with text as "this conversation up to here": all before it as `messages`, the
    turn as `input`, the last text reply before the next turn as `expected` (None if none came)."""
    turns: list[tuple[int, UserMessage, str | None]] = []
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            turns.append((index, message, None))
        elif isinstance(message, AssistantMessage) and turns and message.text and not message.error_message:
            # After tool calls the turn's answer is its last plain reply, not the first words.
            turns[-1] = (*turns[-1][:2], message.text)
    return [
        DatasetItem(
            id=f"{conversation_id[:8]}-{number}",
            input=user.text,
            images=[block for block in user.content if isinstance(block, ImageContent)],
            # A later turn ("And of Italy?") means nothing replayed without what came before it.
            messages=list(messages[:index]),
            expected=reply,
        )
        for number, (index, user, reply) in enumerate(turns, start=1)
        if user.text.strip()
    ]


def conversation_up_to(conversation_id: str, messages: Sequence[AgentMessage], turn: int) -> DatasetItem:
    """The conversation before user turn `turn` (1-based) as `messages`, that turn as `input`, and the
    last text reply to it as `expected`: replayed, the model answers that turn knowing all before it."""
    users = [index for index, message in enumerate(messages) if isinstance(message, UserMessage)]
    if not 1 <= turn <= len(users):
        raise DatasetError(f"The conversation has {len(users)} user turn(s); there is no turn {turn}.")
    start = users[turn - 1]
    end = users[turn] if turn < len(users) else len(messages)
    user = messages[start]
    assert isinstance(user, UserMessage)
    replies = [m.text for m in messages[start:end] if isinstance(m, AssistantMessage) and m.text]
    return DatasetItem(
        id=f"{conversation_id[:8]}-{turn}-up-to-here",
        input=user.text,
        images=[block for block in user.content if isinstance(block, ImageContent)],
        messages=list(messages[:start]),
        expected=replies[-1] if replies else None,
    )


def _simulated_user(record: Mapping[str, Any], row: str) -> SimulatedUser | None:
    """A record's simulated user: a `user` object, or `persona` / `goal` / `max_user_turns` columns."""
    given = record.get("user")
    if not isinstance(given, Mapping):
        given = {"persona": record.get("persona"), "goal": record.get("goal")}
        if record.get("max_user_turns") not in (None, ""):
            given["max_turns"] = record["max_user_turns"]
    if all(given.get(key) in (None, "") for key in ("persona", "goal")):
        return None
    try:
        return SimulatedUser.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as error:
        first = error.errors()[0]
        words = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "missing" and first["loc"] == ("goal",):
            words = "a simulated user needs a goal: say what the user wants done"
        raise DatasetError(f"{row}: {words} (field {'.'.join(map(str, first['loc']))}).") from None


def _conversation(value: Any, row: str) -> list[AgentMessage]:
    """A record's `messages`: the spec's message types (a plain string content is taken as its text)."""
    if value in (None, "", []):
        return []
    if not isinstance(value, list) or not all(isinstance(message, dict) for message in value):
        raise DatasetError(f"{row}: 'messages' must be a list of messages, each a JSON object.")
    records = [
        {**message, "content": [{"type": "text", "text": message["content"]}]}
        if isinstance(message.get("content"), str)
        else message
        for message in value
    ]
    try:
        conversation = _MESSAGES.validate_python(records)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][:1])
        raise DatasetError(
            f"{row}: message {int(where) + 1 if where.isdigit() else where} is not a conversation "
            f"message ({first['msg']}); each needs a role (user, assistant or toolResult) and content."
        ) from None
    calls = {c.id for m in conversation if isinstance(m, AssistantMessageToolCall) for c in m.tool_calls}
    results = [m for m in conversation if isinstance(m, ToolResultMessage)]
    orphan = next((m for m in results if m.tool_call_id not in calls), None)
    if orphan is not None:
        raise DatasetError(
            f"{row}: the tool result for {orphan.tool_call_id!r} answers no tool call before it."
        )
    return conversation


def _read(source: str | Path | io.TextIOBase) -> str:
    if isinstance(source, Path):
        try:
            return source.read_text(encoding="utf-8-sig")
        except OSError as error:
            raise DatasetError(f"Cannot read {source}: {error.strerror}.") from None
    if isinstance(source, io.TextIOBase):
        return source.read()
    return source.removeprefix("\ufeff")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _tags(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, list):
        return [str(tag) for tag in value]
    return [tag.strip() for tag in str(value).split(",") if tag.strip()]
