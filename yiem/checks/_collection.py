"""A collection of saved tool calls as one readable JSON file, its format versioned."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from yiem.checks._assertions import Assertion
from yiem.errors import YiemError
from yiem.json_file import problems, read_json_file, refuse_newer

# The file's format; a file whose format is newer than this was written by a newer yiem.
COLLECTION_FORMAT = 1


class CheckFileError(YiemError, ValueError):
    """A collection file that cannot be read; the message says where and why."""


class CollectionTooNewError(CheckFileError):
    """A collection file written by a newer yiem, in a format this one does not know."""


class CheckSetupError(YiemError, ValueError):
    """A collection that cannot be run as given (a missing server, an assertion the tool cannot meet)."""


class SavedCall(BaseModel):
    """One tool call kept to run again: where, what, and what its result must satisfy."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    name: str = ""
    server: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0)
    assertions: list[Assertion] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """The name shown in reports: the given name, else server/tool."""
        return self.name or f"{self.server}/{self.tool}"


class Collection(BaseModel):
    """Saved calls and their assertions; `servers` may hold mcp.json entries, so the file stands alone."""

    model_config = ConfigDict(extra="forbid")

    format: int = COLLECTION_FORMAT
    name: str
    description: str = ""
    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    calls: list[SavedCall] = Field(default_factory=list)


def parse_collection(data: Any, source: str = "the collection") -> Collection:
    """A collection from parsed JSON; errors name the field and are `CheckFileError`s."""
    if not isinstance(data, dict):
        raise CheckFileError(f"{source} must be a JSON object with a name and calls.")
    refuse_newer(data, COLLECTION_FORMAT, source, "collection", CollectionTooNewError)
    try:
        return Collection.model_validate(data)
    except ValidationError as exc:
        raise CheckFileError(f"{source} is not a valid collection: {problems(exc)}") from None


def load_collection(path: str | Path) -> Collection:
    """Read a collection file."""
    return parse_collection(read_json_file(path, "collection", CheckFileError), str(path))


def collection_json(collection: Collection) -> str:
    """The collection as the file it is exported to."""
    return (
        json.dumps(collection.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False) + "\n"
    )


def collection_schema() -> dict[str, Any]:
    """The JSON Schema of the collection file, published as docs/collection.schema.json (a test keeps
    the two equal)."""
    return Collection.model_json_schema()
