"""A conversation's messages as a tree: append, the chosen path, alternatives, whole trees for import."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import ColumnElement, bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from yiem.redaction import redact
from yiem.store._errors import StoreError, missing_conversation
from yiem.store._migrations import chain_flat_messages
from yiem.store._schema import conversations, messages, usage
from yiem.store._usage_rows import usage_row
from yiem.types import AgentMessage, AssistantMessage, AssistantMessageToolCall, LlmModel

_MESSAGES: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)

LEAF: Literal["leaf"] = "leaf"
"""`add_message(parent_id=LEAF)`: after the last message of the chosen path."""


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class StoredMessage:
    """Where `add_message` put a message: its id (to follow it) and its position (order of writing)."""

    id: int
    position: int


@dataclass(frozen=True)
class MessagePath:
    """A conversation's chosen path: its messages, their ids, and each one's alternatives."""

    messages: list[AgentMessage]
    ids: list[int]
    siblings: list[tuple[int, ...]]
    """Per message, the ids of the messages with its parent (itself included), oldest first."""


@dataclass(frozen=True)
class MessageTree:
    """Every message of a conversation in order of writing, each with its parent's index in the list."""

    messages: list[AgentMessage]
    parents: list[int | None]
    current: int | None
    """The index of the chosen path's last message (None when there are no messages)."""


def _parse(conversation_id: str, row: Any) -> AgentMessage:
    try:
        return _MESSAGES.validate_json(row.data)
    except ValidationError as error:
        raise StoreError(
            f"Message {row.position} of conversation {conversation_id!r} is not a valid "
            f"message: {error.errors()[0]['msg']}"
        ) from error


def _linked(rows: Sequence[Any], leaf: int | None) -> tuple[dict[int, int | None], int | None]:
    # Each message's parent; a conversation written flat (no chosen path) reads as one chain.
    if leaf is None and rows:
        return {row.id: (rows[i - 1].id if i else None) for i, row in enumerate(rows)}, rows[-1].id
    return {row.id: row.parent_id for row in rows}, leaf


def _children(parents: dict[int, int | None]) -> dict[int | None, list[int]]:
    found: dict[int | None, list[int]] = {}
    for child, parent in parents.items():  # rows come in position order, so children do too
        found.setdefault(parent, []).append(child)
    return found


def _path_to(parents: dict[int, int | None], last: int | None) -> list[int]:
    path: list[int] = []
    while last is not None and last in parents and len(path) <= len(parents):
        path.append(last)
        last = parents[last]
    return path[::-1]


class MessageMethods:
    """The message half of `ConversationStore` (which gives the engine, the owner and `_mine`)."""

    engine: Engine
    owner: str
    source: str | None

    def _mine(self, conversation_id: str) -> ColumnElement[bool]:
        return (conversations.c.id == conversation_id) & (conversations.c.owner == self.owner)

    def _rows(self, conn: Connection, conversation_id: str, *, data: bool) -> tuple[list[Any], int | None]:
        leaf = conn.execute(
            select(conversations.c.current_leaf_id).where(self._mine(conversation_id))
        ).first()
        if leaf is None:
            return [], None  # gone or someone else's: their messages are never read
        columns = [messages.c.id, messages.c.parent_id, messages.c.position]
        rows = conn.execute(
            select(*columns, *([messages.c.data] if data else []))
            .where(messages.c.conversation_id == conversation_id)
            .order_by(messages.c.position)
        ).all()
        return list(rows), leaf[0]

    def add_message(
        self,
        conversation_id: str,
        message: AgentMessage,
        model: LlmModel | None = None,
        *,
        parent_id: int | Literal["leaf"] | None = LEAF,
        usage_estimated: bool = False,
        tool: str | None = None,
    ) -> StoredMessage:
        """Save one finished message after `parent_id` (with a usage row if it is a reply); it ends the path.

        A sibling of an existing message is an alternative (regenerate, edit). `usage_estimated`
        marks the reply's tokens as an estimate (a reply stopped mid-stream); `tool` charges its
        usage to an MCP tool or server (`usage.tool`). The message, its usage and the conversation's
        `updated` time are one transaction.
        """
        # No secret the server knows is ever written (a provider may echo a key in its error).
        data = redact(message.to_json())
        for _attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    now = now_ms()
                    touched = conn.execute(
                        update(conversations).where(self._mine(conversation_id)).values(updated_ms=now)
                    )
                    if touched.rowcount == 0:
                        raise missing_conversation(conversation_id, " The message was not saved.")
                    leaf = conn.execute(
                        select(conversations.c.current_leaf_id).where(conversations.c.id == conversation_id)
                    ).scalar()
                    if leaf is None and parent_id is not None:
                        chain_flat_messages(
                            conn, conversation_id
                        )  # written flat: its messages become a chain
                        leaf = conn.execute(
                            select(conversations.c.current_leaf_id).where(
                                conversations.c.id == conversation_id
                            )
                        ).scalar()
                    last = conn.execute(
                        select(func.max(messages.c.position)).where(
                            messages.c.conversation_id == conversation_id
                        )
                    ).scalar()
                    position = 0 if last is None else int(last) + 1
                    new_id = conn.execute(
                        insert(messages)
                        .values(
                            conversation_id=conversation_id,
                            position=position,
                            role=message.role,
                            data=data,
                            created_ms=now,
                            parent_id=leaf if parent_id == LEAF else parent_id,
                        )
                        .returning(messages.c.id)
                    ).scalar_one()
                    conn.execute(
                        update(conversations)
                        .where(conversations.c.id == conversation_id)
                        .values(current_leaf_id=new_id)
                    )
                    if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                        conn.execute(
                            insert(usage).values(
                                **usage_row(message, model, conversation_id, usage_estimated),
                                owner=self.owner,
                                source=self.source,
                                tool=tool,
                            )
                        )
                return StoredMessage(id=new_id, position=position)
            except IntegrityError:
                # Another writer (a second replica) took the same position; count again.
                continue
        raise StoreError(f"Could not append to conversation {conversation_id!r}: concurrent writers.")

    def record_usage(
        self,
        message: AssistantMessage | AssistantMessageToolCall,
        model: LlmModel | None,
        conversation_id: str | None = None,
        *,
        usage_estimated: bool = False,
        tool: str | None = None,
    ) -> None:
        """Save the usage row of a reply that is not stored as a message (a temporary chat's, a title's)."""
        with self.engine.begin() as conn:
            conn.execute(
                insert(usage).values(
                    **usage_row(message, model, conversation_id, usage_estimated),
                    owner=self.owner,
                    source=self.source,
                    tool=tool,
                )
            )

    def append_message(
        self,
        conversation_id: str,
        message: AgentMessage,
        model: LlmModel | None = None,
        *,
        usage_estimated: bool = False,
        tool: str | None = None,
    ) -> int:
        """Save one finished message at the end of the chosen path (`add_message`); returns its position."""
        return self.add_message(
            conversation_id, message, model, usage_estimated=usage_estimated, tool=tool
        ).position

    def load_path(self, conversation_id: str) -> MessagePath:
        """The chosen path, as typed messages with their ids and alternatives (only the path is parsed)."""
        with self.engine.connect() as conn:
            rows, leaf = self._rows(conn, conversation_id, data=True)
        parents, leaf = _linked(rows, leaf)
        children = _children(parents)
        by_id = {row.id: row for row in rows}
        ids = _path_to(parents, leaf)
        return MessagePath(
            messages=[_parse(conversation_id, by_id[i]) for i in ids],
            ids=ids,
            siblings=[tuple(children[parents[i]]) for i in ids],
        )

    def load_messages(self, conversation_id: str) -> list[AgentMessage]:
        """The chosen path's messages in order, as typed messages (what the agent is sent)."""
        return self.load_path(conversation_id).messages

    def load_tree(self, conversation_id: str) -> MessageTree:
        """Every message (alternatives included) in order of writing, for export."""
        with self.engine.connect() as conn:
            rows, leaf = self._rows(conn, conversation_id, data=True)
        parents, leaf = _linked(rows, leaf)
        index = {row.id: i for i, row in enumerate(rows)}
        return MessageTree(
            messages=[_parse(conversation_id, row) for row in rows],
            parents=[index.get(parent) if (parent := parents[row.id]) is not None else None for row in rows],
            current=index.get(leaf) if leaf is not None else None,
        )

    def choose(self, conversation_id: str, message_id: int) -> None:
        """Make the path go through this message, then down its latest replies."""
        with self.engine.begin() as conn:
            rows, leaf = self._rows(conn, conversation_id, data=False)
            parents, _leaf = _linked(rows, leaf)
            if (
                not rows
                and conn.execute(select(conversations.c.id).where(self._mine(conversation_id))).first()
                is None
            ):
                raise missing_conversation(conversation_id)
            if message_id not in parents:
                raise StoreError(
                    "That alternative is no longer in this conversation (reload the page to see it as it is)."
                )
            children = _children(parents)
            while children.get(message_id):
                message_id = children[message_id][-1]
            conn.execute(
                update(conversations).where(self._mine(conversation_id)).values(current_leaf_id=message_id)
            )

    def discard_leaf(self, conversation_id: str, message_id: int) -> None:
        """Delete the message ending the path if it has no replies (a prompt refused before it was
        sent); the path then ends at its parent. Any other message stays: nothing answered is lost."""
        with self.engine.begin() as conn:
            leaf = conn.execute(
                select(conversations.c.current_leaf_id).where(self._mine(conversation_id))
            ).first()
            if leaf is None or leaf[0] != message_id:
                return
            answered = conn.execute(select(messages.c.id).where(messages.c.parent_id == message_id)).first()
            if answered is not None:
                return
            parent = conn.execute(select(messages.c.parent_id).where(messages.c.id == message_id)).scalar()
            conn.execute(delete(messages).where(messages.c.id == message_id))
            conn.execute(
                update(conversations).where(self._mine(conversation_id)).values(current_leaf_id=parent)
            )

    def replace_messages(
        self,
        conversation_id: str,
        new_messages: Sequence[AgentMessage],
        parents: Sequence[int | None] | None = None,
        current: int | None = None,
    ) -> None:
        """Store these messages as the whole conversation, without usage rows (import, fork).

        `parents` gives each message's parent as an index into `new_messages` (None: one chain);
        `current` the chosen path's last message (None: the last one)."""
        now = now_ms()
        with self.engine.begin() as conn:
            touched = conn.execute(
                update(conversations).where(self._mine(conversation_id)).values(updated_ms=now)
            )
            if touched.rowcount == 0:
                raise missing_conversation(conversation_id)
            conn.execute(messages.delete().where(messages.c.conversation_id == conversation_id))
            conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(current_leaf_id=None)
            )
            if not new_messages:
                return
            conn.execute(
                insert(messages),
                [
                    {
                        "conversation_id": conversation_id,
                        "position": position,
                        "role": message.role,
                        "data": redact(message.to_json()),
                        "created_ms": now,
                    }
                    for position, message in enumerate(new_messages)
                ],
            )
            ids = list(
                conn.execute(
                    select(messages.c.id)
                    .where(messages.c.conversation_id == conversation_id)
                    .order_by(messages.c.position)
                ).scalars()
            )
            links = parents if parents is not None else [None, *range(len(ids) - 1)]
            linked = [
                {"row_id": row_id, "parent": ids[link]}
                for row_id, link in zip(ids, links, strict=True)
                if link is not None
            ]
            if linked:
                conn.execute(
                    update(messages)
                    .where(messages.c.id == bindparam("row_id"))
                    .values(parent_id=bindparam("parent")),
                    linked,
                )
            chosen = ids[-1] if current is None else ids[current]
            conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(current_leaf_id=chosen)
            )
