"""Conversations and their messages: create, list, rename, append, load, delete."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, false, insert, or_, select, update
from sqlalchemy.engine import Engine

from yiem.redaction import redact, redact_data
from yiem.store._errors import StoreError, missing_conversation
from yiem.store._message_search import matching_conversations, search_words, snippets
from yiem.store._messages import MessageMethods, now_ms
from yiem.store._schema import OWNER_DEFAULT, conversations, fold_title, messages


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
    """What it was last sent with (a `yiem.model_setup.ModelSetup`); None if saved before setups were kept."""
    forked_from: str | None = None
    """The conversation this one was forked from ("New chat from here"), if any."""
    forked_from_message: int | None = None
    """The id of the message in `forked_from` its copied path ends at."""
    match: str = ""
    """From a search that found a message's text: a snippet of it (see `list_conversations`)."""


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
        forked_from=row.forked_from,
        forked_from_message=row.forked_from_message,
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class ConversationStore(MessageMethods):
    """One person's conversations: every query is scoped to `owner` in SQL; each write is one transaction.

    `source` tags the usage rows it writes with the page they come from (`usage.source`; None for Chat).
    """

    def __init__(self, engine: Engine, owner: str = OWNER_DEFAULT, source: str | None = None) -> None:
        self.engine = engine
        self.owner = owner
        self.source = source

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
        now = now_ms()
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
            raise missing_conversation(conversation_id)
        return _conversation(row)

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation with this id is stored."""
        with self.engine.connect() as conn:
            found = conn.execute(select(conversations.c.id).where(self._mine(conversation_id))).first()
        return found is not None

    def list_conversations(self, search: str = "", limit: int = 200) -> list[Conversation]:
        """Most recently updated first, hidden ones left out.

        `search` keeps those whose title contains it or with a message holding each of its words
        (as word prefixes); those found by a message carry its snippet in `match`, the matching
        words between `MATCH_START` and `MATCH_END`.
        """
        query = (
            select(conversations)
            .where(conversations.c.owner == self.owner, conversations.c.hidden == false())
            .order_by(conversations.c.updated_ms.desc())
            .limit(limit)
        )
        words = search_words(search)
        if search.strip():
            pattern = f"%{_escape_like(fold_title(search.strip()))}%"
            in_title = conversations.c.title_folded.like(pattern, escape="\\")
            if words:
                in_text = conversations.c.id.in_(matching_conversations(self.engine.dialect.name, words))
                query = query.where(or_(in_title, in_text))
            else:
                query = query.where(in_title)
        with self.engine.connect() as conn:
            found = [_conversation(row) for row in conn.execute(query)]
            # Only the owner's conversations reach here, so only their messages are quoted.
            matches = snippets(conn, words, [c.id for c in found])
        return [replace(c, match=matches[c.id]) if c.id in matches else c for c in found]

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

    def retitle(self, conversation_id: str, old: str, new: str) -> bool:
        """Set the title only if it is still `old` (a rename meanwhile wins); whether it was set."""
        with self.engine.begin() as conn:
            result = conn.execute(
                update(conversations)
                .where(self._mine(conversation_id), conversations.c.title == redact(old))
                .values(title=redact(new), title_folded=fold_title(redact(new)))
            )
        return bool(result.rowcount)

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
                update(conversations).where(self._mine(conversation_id)).values(**values, updated_ms=now_ms())
            )
        if result.rowcount == 0:
            raise missing_conversation(conversation_id)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation and its messages; its usage rows stay (money spent stays spent)."""
        with self.engine.begin() as conn:
            result = conn.execute(delete(conversations).where(self._mine(conversation_id)))
            if result.rowcount:  # only the owner's: messages of a conversation they do not own stay
                conn.execute(delete(messages).where(messages.c.conversation_id == conversation_id))
        if result.rowcount == 0:
            raise missing_conversation(conversation_id)

    def fork(self, conversation_id: str, message_id: int) -> Conversation:
        """A new conversation holding the chosen path up to this message, linked to its origin."""
        origin = self.get(conversation_id)
        path = self.load_path(conversation_id)
        if message_id not in path.ids:
            raise StoreError(
                "That message is no longer on this conversation's path (reload the page to see it as it is)."
            )
        fork = self.create(
            title=f"{origin.title} (fork)",
            provider=origin.provider,
            model=origin.model,
            system_prompt=origin.system_prompt,
            setup=origin.setup,
        )
        self.replace_messages(fork.id, path.messages[: path.ids.index(message_id) + 1])
        self._update(fork.id, forked_from=conversation_id, forked_from_message=message_id)
        return self.get(fork.id)
