"""Conversations and their messages: create, list, rename, append, load, delete."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import ColumnElement, delete, false, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from yiem.redaction import redact, redact_data
from yiem.store._errors import ConversationNotFoundError, StoreError
from yiem.store._schema import OWNER_DEFAULT, conversations, fold_title, messages, usage
from yiem.store._usage_rows import usage_row
from yiem.types import AgentMessage, AssistantMessage, AssistantMessageToolCall, LlmModel

_MESSAGES: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


@dataclass(frozen=True)
class Conversation:
    """One conversation's header (its messages are loaded separately)."""

    id: str
    title: str
    provider: str
    model: str
    system_prompt: str
    created: datetime
    updated: datetime
    hidden: bool = False
    setup: dict[str, Any] | None = None
    """What it was last sent with (see `yiem.chat.ChatSetup`); None when saved before setups were kept."""


def _setup_json(setup: dict[str, Any]) -> str:
    # The setup holds no key by construction; the system prompt is free text and may quote one.
    return json.dumps(redact_data(setup), ensure_ascii=False, sort_keys=True)


def _loaded_setup(data: str | None) -> dict[str, Any] | None:
    if not data:
        return None
    try:
        found = json.loads(data)
    except ValueError:
        return None  # a damaged setup must not stop the conversation from opening
    return found if isinstance(found, dict) else None


def _conversation(row: Any) -> Conversation:
    return Conversation(
        id=row.id,
        title=row.title,
        provider=row.provider,
        model=row.model,
        system_prompt=row.system_prompt,
        created=_to_datetime(row.created_ms),
        updated=_to_datetime(row.updated_ms),
        hidden=bool(row.hidden),
        setup=_loaded_setup(row.setup),
    )


def _missing(conversation_id: str, consequence: str = "") -> ConversationNotFoundError:
    # One sentence for every path, as a person who deleted it in another tab would understand it.
    # Another person's conversation reads the same: its owner's rows are never read to tell them apart.
    return ConversationNotFoundError(
        "This conversation no longer exists or is not yours (it was deleted, perhaps in another tab "
        f"or window, or it belongs to someone else; id {conversation_id})." + consequence
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class ConversationStore:
    """One person's conversations: every query is scoped to `owner` in SQL; each write is one transaction.

    `source` tags the usage rows it writes with the page they come from (`usage.source`; None for Chat).
    """

    def __init__(self, engine: Engine, owner: str = OWNER_DEFAULT, source: str | None = None) -> None:
        self.engine = engine
        self.owner = owner
        self.source = source

    def _mine(self, conversation_id: str) -> ColumnElement[bool]:
        return (conversations.c.id == conversation_id) & (conversations.c.owner == self.owner)

    def _owned_ids(self) -> Any:
        # Messages carry no owner of their own: they are reached through an owned conversation.
        return select(conversations.c.id).where(conversations.c.owner == self.owner)

    # conversations

    def create(
        self,
        title: str = "",
        provider: str = "",
        model: str = "",
        system_prompt: str = "",
        setup: dict[str, Any] | None = None,
        hidden: bool = False,
    ) -> Conversation:
        """A new, empty conversation (`hidden`: kept out of Chat's list until opened there)."""
        now = _now_ms()
        row: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "title": redact(title),
            "provider": provider,
            "model": model,
            "system_prompt": redact(system_prompt),
            "created_ms": now,
            "updated_ms": now,
            "setup": None if setup is None else _setup_json(setup),
            "hidden": hidden,
            "owner": self.owner,
        }
        with self.engine.begin() as conn:
            conn.execute(insert(conversations).values(**row))
        return self.get(str(row["id"]))

    def get(self, conversation_id: str) -> Conversation:
        """The conversation with this id, or `ConversationNotFoundError`."""
        with self.engine.connect() as conn:
            row = conn.execute(select(conversations).where(self._mine(conversation_id))).first()
        if row is None:
            raise _missing(conversation_id)
        return _conversation(row)

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation with this id is stored."""
        with self.engine.connect() as conn:
            found = conn.execute(select(conversations.c.id).where(self._mine(conversation_id))).first()
        return found is not None

    def list_conversations(self, search: str = "", limit: int = 200) -> list[Conversation]:
        """Most recently updated first, hidden ones left out; `search` keeps titles that contain it."""
        query = (
            select(conversations)
            .where(conversations.c.owner == self.owner, conversations.c.hidden == false())
            .order_by(conversations.c.updated_ms.desc())
            .limit(limit)
        )
        if search.strip():
            pattern = f"%{_escape_like(fold_title(search.strip()))}%"
            query = query.where(conversations.c.title_folded.like(pattern, escape="\\"))
        with self.engine.connect() as conn:
            return [_conversation(row) for row in conn.execute(query)]

    def last_setup(self) -> dict[str, Any] | None:
        """The setup of the conversation sent to most recently (hidden ones left out), if any has one."""
        query = (
            select(conversations.c.setup)
            .where(
                conversations.c.owner == self.owner,
                conversations.c.hidden == false(),
                conversations.c.setup.is_not(None),
            )
            .order_by(conversations.c.updated_ms.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            return _loaded_setup(conn.execute(query).scalar())

    def reveal(self, conversation_id: str) -> None:
        """Put a hidden conversation (an experiment item's transcript) in Chat's list, at the top."""
        self._update(conversation_id, hidden=False)

    def rename(self, conversation_id: str, title: str) -> None:
        """Set the title."""
        self._update(conversation_id, title=redact(title))

    def update_settings(
        self,
        conversation_id: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        setup: dict[str, Any] | None = None,
    ) -> None:
        """Record the provider, model, system prompt or whole setup the conversation now uses."""
        prompt = None if system_prompt is None else redact(system_prompt)
        values = {
            "provider": provider,
            "model": model,
            "system_prompt": prompt,
            "setup": None if setup is None else _setup_json(setup),
        }
        self._update(conversation_id, **{key: value for key, value in values.items() if value is not None})

    def _update(self, conversation_id: str, **values: Any) -> None:
        if "title" in values:
            values["title_folded"] = fold_title(values["title"])
        with self.engine.begin() as conn:
            result = conn.execute(
                update(conversations)
                .where(self._mine(conversation_id))
                .values(**values, updated_ms=_now_ms())
            )
        if result.rowcount == 0:
            raise _missing(conversation_id)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation and its messages; its usage rows stay (money spent stays spent)."""
        with self.engine.begin() as conn:
            result = conn.execute(delete(conversations).where(self._mine(conversation_id)))
            if result.rowcount:  # only the owner's: messages of a conversation they do not own stay
                conn.execute(delete(messages).where(messages.c.conversation_id == conversation_id))
        if result.rowcount == 0:
            raise _missing(conversation_id)

    # messages

    def append_message(
        self,
        conversation_id: str,
        message: AgentMessage,
        model: LlmModel | None = None,
        *,
        usage_estimated: bool = False,
    ) -> int:
        """Save one finished message at the end (with its usage row if it is an assistant reply).

        `usage_estimated` marks the reply's tokens as an estimate (a reply stopped mid-stream).

        Returns its position. The message, its usage and the conversation's `updated` time are one
        transaction: after a crash either all of them are there or none.
        """
        # No secret the server knows is ever written (a provider may echo a key in its error).
        data = redact(message.to_json())
        for _attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    now = _now_ms()
                    touched = conn.execute(
                        update(conversations).where(self._mine(conversation_id)).values(updated_ms=now)
                    )
                    if touched.rowcount == 0:
                        raise _missing(conversation_id, " The message was not saved.")
                    last = conn.execute(
                        select(func.max(messages.c.position)).where(
                            messages.c.conversation_id == conversation_id
                        )
                    ).scalar()
                    position = 0 if last is None else int(last) + 1
                    conn.execute(
                        insert(messages).values(
                            conversation_id=conversation_id,
                            position=position,
                            role=message.role,
                            data=data,
                            created_ms=now,
                        )
                    )
                    if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                        conn.execute(
                            insert(usage).values(
                                **usage_row(message, model, conversation_id, usage_estimated),
                                owner=self.owner,
                                source=self.source,
                            )
                        )
                return position
            except IntegrityError:
                # Another writer (a second replica) took the same position; count again.
                continue
        raise StoreError(f"Could not append to conversation {conversation_id!r}: concurrent writers.")

    def load_messages(self, conversation_id: str) -> list[AgentMessage]:
        """The conversation's messages in order, as typed messages."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(messages.c.position, messages.c.data)
                .where(
                    messages.c.conversation_id == conversation_id,
                    messages.c.conversation_id.in_(self._owned_ids()),
                )
                .order_by(messages.c.position)
            ).all()
        loaded: list[AgentMessage] = []
        for row in rows:
            try:
                loaded.append(_MESSAGES.validate_json(row.data))
            except ValidationError as error:
                raise StoreError(
                    f"Message {row.position} of conversation {conversation_id!r} is not a valid "
                    f"message: {error.errors()[0]['msg']}"
                ) from error
        return loaded

    def truncate(self, conversation_id: str, keep: int) -> None:
        """Keep only the first `keep` messages (to regenerate or resend from an earlier point)."""
        with self.engine.begin() as conn:
            touched = conn.execute(
                update(conversations).where(self._mine(conversation_id)).values(updated_ms=_now_ms())
            )
            if touched.rowcount == 0:
                raise _missing(conversation_id)
            conn.execute(
                delete(messages).where(
                    messages.c.conversation_id == conversation_id, messages.c.position >= keep
                )
            )

    def replace_messages(self, conversation_id: str, new_messages: Sequence[AgentMessage]) -> None:
        """Store these messages as the whole conversation, without usage rows (used by import)."""
        now = _now_ms()
        with self.engine.begin() as conn:
            touched = conn.execute(
                update(conversations).where(self._mine(conversation_id)).values(updated_ms=now)
            )
            if touched.rowcount == 0:
                raise _missing(conversation_id)
            conn.execute(delete(messages).where(messages.c.conversation_id == conversation_id))
            if new_messages:
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
