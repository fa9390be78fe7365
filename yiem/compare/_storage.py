"""Saved comparisons: each column's transcript a hidden conversation, its usage tagged "compare".

The transcripts are stored as an experiment item's are (`conversations.hidden`): out of Chat's list
until "Continue in Chat" opens one there. The comparison's own row keeps the prompts and the
columns' settings (never a key) with their conversation ids, so it can be reopened by `?cmp=ID`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import ColumnElement, insert, select, update
from sqlalchemy.engine import Engine

from yiem.identity import LOCAL_OWNER_ID
from yiem.model_setup import ModelSetup
from yiem.redaction import redact, redact_data
from yiem.store import COMPARE_SOURCE, ConversationStore, StoreError, compare_runs
from yiem.types import AgentMessage, LlmModel


class ComparisonNotFoundError(StoreError):
    """No saved comparison of yours has this id (deleted, someone else's, or a stale link)."""


class SavedColumn(BaseModel):
    """One column of a saved comparison: its settings and the conversation holding its transcript."""

    spec: ModelSetup
    conversation_id: str


class ComparisonRecord(BaseModel):
    """A saved comparison: the prompts sent (oldest first) and its columns."""

    id: str
    title: str
    prompts: list[str]
    columns: list[SavedColumn]
    blind: bool = False
    created: datetime
    updated: datetime


def _now_ms() -> int:
    return int(time.time() * 1000)


def _title(prompt: str) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= 60 else line[:59] + "…"


class ComparisonStore:
    """One person's saved comparisons on the store's engine; every query is scoped to `owner`."""

    def __init__(self, engine: Engine, owner: str = LOCAL_OWNER_ID) -> None:
        self.engine = engine
        self.owner = owner
        self.conversations = ConversationStore(engine, owner, source=COMPARE_SOURCE)

    def create(self, specs: Sequence[ModelSetup], prompt: str, blind: bool = False) -> ComparisonRecord:
        """Save a new comparison with one hidden conversation per column and its first prompt."""
        title = _title(prompt)
        columns = []
        for spec in specs:
            conversation = self.conversations.create(
                title=f"{title} · {spec.label}",
                provider=spec.provider,
                model=spec.model_id,
                system_prompt=spec.system_prompt,
                setup=spec.model_dump(),
                hidden=True,
            )
            columns.append(SavedColumn(spec=spec, conversation_id=conversation.id))
        now = _now_ms()
        record_id = uuid.uuid4().hex
        data = {"prompts": [], "columns": [c.model_dump() for c in columns], "blind": blind}
        with self.engine.begin() as conn:
            conn.execute(
                insert(compare_runs).values(
                    id=record_id,
                    title=redact(title),
                    data=self._json(data),
                    created_ms=now,
                    updated_ms=now,
                    owner=self.owner,
                )
            )
        self.add_prompt(record_id, prompt)
        return self.get(record_id)

    def add_prompt(self, record_id: str, prompt: str) -> None:
        """Record a prompt sent to every column (the first one or a follow-up)."""
        with self.engine.begin() as conn:
            row = conn.execute(select(compare_runs.c.data).where(self._mine(record_id))).first()
            if row is None:
                raise self._missing(record_id)
            data = json.loads(row.data)
            data["prompts"] = [*data.get("prompts", []), prompt]
            conn.execute(
                update(compare_runs)
                .where(self._mine(record_id))
                .values(data=self._json(data), updated_ms=_now_ms())
            )

    def append(
        self, conversation_id: str, new_messages: Sequence[AgentMessage], model: LlmModel | None
    ) -> None:
        """Save a column's new messages; each reply also writes its usage row, tagged "compare"."""
        for message in new_messages:
            self.conversations.append_message(conversation_id, message, model)

    def transcript(self, conversation_id: str) -> list[AgentMessage]:
        """A column's whole conversation, tool calls and all."""
        return self.conversations.load_messages(conversation_id)

    def get(self, record_id: str) -> ComparisonRecord:
        """The saved comparison with this id, or `ComparisonNotFoundError`."""
        with self.engine.connect() as conn:
            row = conn.execute(select(compare_runs).where(self._mine(record_id))).first()
        if row is None:
            raise self._missing(record_id)
        return _record(row)

    def list_comparisons(self, limit: int = 50) -> list[ComparisonRecord]:
        """The most recently sent to first."""
        query = (
            select(compare_runs)
            .where(compare_runs.c.owner == self.owner)
            .order_by(compare_runs.c.updated_ms.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [_record(row) for row in conn.execute(query)]

    def _mine(self, record_id: str) -> ColumnElement[bool]:
        return (compare_runs.c.id == record_id) & (compare_runs.c.owner == self.owner)

    @staticmethod
    def _json(data: dict[str, Any]) -> str:
        # Prompts and system prompts are free text and may quote a key; a spec's key is never dumped.
        return json.dumps(redact_data(data), ensure_ascii=False)

    @staticmethod
    def _missing(record_id: str) -> ComparisonNotFoundError:
        return ComparisonNotFoundError(
            "This comparison no longer exists or is not yours (it was deleted, or the link is "
            f"someone else's; id {record_id})."
        )


def _record(row: Any) -> ComparisonRecord:
    data = json.loads(row.data)
    return ComparisonRecord(
        id=row.id,
        title=row.title,
        prompts=data.get("prompts", []),
        columns=[SavedColumn.model_validate(c) for c in data.get("columns", [])],
        blind=bool(data.get("blind", False)),
        created=datetime.fromtimestamp(row.created_ms / 1000, UTC),
        updated=datetime.fromtimestamp(row.updated_ms / 1000, UTC),
    )
