"""Chat's library, each person's own: saved setups (presets) and saved prompts with `{{variables}}`."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import ColumnElement, Table, delete, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from yiem.chat._setup import stored_setup
from yiem.identity import LOCAL_OWNER_ID
from yiem.model_setup import ModelSetup, Preset, template_variables
from yiem.redaction import redact, redact_data
from yiem.store import StoreError, saved_prompts, setup_presets

MAX_NAME = 80


class LibraryError(StoreError):
    """A preset or prompt cannot be saved as given (no name, no text); the message says what to change."""


class SavedPrompt(BaseModel):
    """A named prompt; its `{{variables}}` are asked for before it is sent."""

    name: str
    text: str

    @property
    def variables(self) -> list[str]:
        """The variables it names, in the order they first appear."""
        return template_variables(self.text)


def _name(name: str, what: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise LibraryError(f"Give the {what} a name.")
    if len(cleaned) > MAX_NAME:
        raise LibraryError(f"A {what}'s name has at most {MAX_NAME} characters; this one has {len(cleaned)}.")
    return redact(cleaned)


class ChatLibrary:
    """One person's presets and prompts on the store's engine; every query is scoped to `owner`."""

    def __init__(self, engine: Engine, owner: str = LOCAL_OWNER_ID) -> None:
        self.engine = engine
        self.owner = owner

    # presets

    def presets(self) -> list[Preset]:
        """Every preset, by name; one that no longer validates is left out rather than break the list."""
        query = select(setup_presets.c.name, setup_presets.c.data).where(self._owned(setup_presets))
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(setup_presets.c.name)).all()
        found = ((row.name, stored_setup(_json(row.data))) for row in rows)
        return [Preset(name=name, setup=setup) for name, setup in found if setup is not None]

    def save_preset(self, name: str, setup: ModelSetup) -> Preset:
        """Save `setup` under `name` (replacing the preset of that name); its text is redacted."""
        cleaned = _name(name, "preset")
        # A ModelSetup never dumps its key; the system prompt and base URL are free text and may quote one.
        data = json.dumps(redact_data(setup.model_dump(mode="json")), ensure_ascii=False, sort_keys=True)
        self._upsert(setup_presets, cleaned, data=data)
        return Preset(name=cleaned, setup=ModelSetup.model_validate(json.loads(data)))

    def delete_preset(self, name: str) -> None:
        """Remove the preset of this name (nothing happens when there is none)."""
        self._delete(setup_presets, name)

    # prompts

    def prompts(self) -> list[SavedPrompt]:
        """Every saved prompt, by name."""
        query = select(saved_prompts.c.name, saved_prompts.c.text).where(self._owned(saved_prompts))
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(saved_prompts.c.name)).all()
        return [SavedPrompt(name=row.name, text=row.text) for row in rows]

    def save_prompt(self, name: str, text: str) -> SavedPrompt:
        """Save `text` under `name` (replacing the prompt of that name); it is redacted first."""
        cleaned = _name(name, "prompt")
        if not text.strip():
            raise LibraryError("Type the prompt's text before saving it.")
        self._upsert(saved_prompts, cleaned, text=redact(text))
        return SavedPrompt(name=cleaned, text=redact(text))

    def delete_prompt(self, name: str) -> None:
        """Remove the prompt of this name (nothing happens when there is none)."""
        self._delete(saved_prompts, name)

    # rows

    def _owned(self, table: Table) -> ColumnElement[bool]:
        return table.c.owner == self.owner

    def _upsert(self, table: Table, name: str, **values: Any) -> None:
        now = int(time.time() * 1000)
        mine = self._owned(table) & (table.c.name == name)
        try:
            with self.engine.begin() as conn:
                if not _updated(conn, update(table).where(mine).values(**values, updated_ms=now)):
                    row = {"id": str(uuid.uuid4()), "name": name, "owner": self.owner}
                    conn.execute(insert(table).values(**row, **values, created_ms=now, updated_ms=now))
        except IntegrityError as error:  # the same name saved at the same moment elsewhere
            raise StoreError(f"“{name}” was saved at the same moment elsewhere; save it again.") from error

    def _delete(self, table: Table, name: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(table).where(self._owned(table) & (table.c.name == name)))


def _updated(conn: Connection, statement: Any) -> bool:
    return bool(conn.execute(statement).rowcount)


def _json(data: str) -> dict[str, Any] | None:
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
