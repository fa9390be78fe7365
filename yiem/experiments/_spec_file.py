"""An experiment's run spec as one JSON file: what the Experiments page exports and
`python -m yiem experiments run` reads, its format versioned and its schema published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticOmit, core_schema

from yiem.experiments._draft import ExperimentDraft
from yiem.experiments._spec import DEFAULT_CONCURRENCY, ExperimentError, RunFields, RunSpec
from yiem.experiments.scorers import Code
from yiem.json_file import problems, read_json_file, refuse_newer

# The file's format; a file whose format is newer than this was written by a newer yiem.
SPEC_FORMAT = 1


class SpecFileError(ExperimentError, ValueError):
    """A spec file that cannot be read; the message says where and why."""


class SpecTooNewError(SpecFileError):
    """A spec file written by a newer yiem, in a format this one does not know."""


class SpecFile(RunFields):
    """RunSpec's fields but its run id (each run of the file is a new run), and where it came from."""

    model_config = ConfigDict(extra="forbid")

    format: int = SPEC_FORMAT
    # The experiment it was exported from: a run of the file goes there when this store has it.
    experiment_id: str | None = None

    @classmethod
    def of(cls, spec: RunSpec, experiment_id: str | None = None) -> SpecFile:
        """The file of a run spec (keys are never in it: a variant's key is not serialized)."""
        fields = spec.model_dump(mode="json", exclude={"run_id"})
        return cls.model_validate({**fields, "experiment_id": experiment_id})

    def run_spec(self, budget_usd: float | None = None) -> RunSpec:
        """A new run of the file; `budget_usd` replaces the file's budget when given."""
        return RunSpec.build(
            self.dataset,
            self.variants,
            self.scorers,
            name=self.experiment,
            repeats=self.repeats,
            concurrency=self.concurrency or DEFAULT_CONCURRENCY,
            budget_usd=budget_usd if budget_usd is not None else self.budget_usd,
            user_model=self.user_model,
        )

    def code_from(self, folder: Path) -> SpecFile:
        """The spec with each code scorer's relative file taken from `folder` (made absolute), so
        the run, its stored spec and the page's draft find it wherever they run from."""
        scorers = [
            scorer.model_copy(update={"path": str((folder / scorer.path).absolute())})
            if isinstance(scorer, Code) and not Path(scorer.path).is_absolute()
            else scorer
            for scorer in self.scorers
        ]
        return self.model_copy(update={"scorers": scorers})

    def draft_data(self) -> dict[str, Any]:
        """The page's draft of this spec, for an experiment the run creates (the page opens it)."""
        draft = ExperimentDraft(
            name=self.experiment or "Untitled experiment",
            dataset=self.dataset,
            variants=self.variants,
            scorers=self.scorers,
            repeats=self.repeats,
            concurrency=self.concurrency.get("*", DEFAULT_CONCURRENCY),
            budget_usd=self.budget_usd,
        )
        return draft.model_dump(mode="json", exclude={"name"})


def spec_file_json(spec: RunSpec, experiment_id: str | None = None) -> str:
    """The text of the file the page exports for `spec`."""
    data = SpecFile.of(spec, experiment_id).model_dump(mode="json", exclude_none=True)
    # The format first, as a reader of the file looks for it before anything else.
    return json.dumps({"format": data["format"], **data}, indent=2, ensure_ascii=False) + "\n"


def parse_spec_file(data: Any, source: str = "the spec file") -> SpecFile:
    """A spec from parsed JSON; errors name the field and are `SpecFileError`s."""
    if not isinstance(data, dict):
        raise SpecFileError(f"{source} must be a JSON object with a dataset and variants.")
    refuse_newer(data, SPEC_FORMAT, source, "experiment spec", SpecTooNewError)
    try:
        return SpecFile.model_validate(data)
    except ValidationError as exc:
        raise SpecFileError(f"{source} is not a valid experiment spec: {problems(exc)}") from None


def load_spec_file(path: str | Path) -> SpecFile:
    """Read a spec file exported from the Experiments page. A code scorer's relative file is taken from
    the spec file's folder (the two travel together), not from whatever folder the command runs in."""
    written = parse_spec_file(read_json_file(path, "spec", SpecFileError), str(path))
    spec = written.code_from(Path(path).parent)
    for before, after in zip(written.scorers, spec.scorers, strict=True):
        # Said once here, not once per cell of the run.
        if isinstance(before, Code) and isinstance(after, Code) and not Path(after.path).is_file():
            raise SpecFileError(
                f"{path}: the code scorer {after.name!r} names the file {before.path!r}, and there is no "
                f"{after.path} (a relative path is taken from the spec file's folder)."
            )
    return spec


class _FileFields(GenerateJsonSchema):
    # A variant's client object (Python only, never in a file) has no JSON Schema: left out.
    def handle_invalid_for_json_schema(
        self, schema: core_schema.CoreSchema, error_info: str
    ) -> JsonSchemaValue:
        raise PydanticOmit


def spec_schema() -> dict[str, Any]:
    """The published JSON Schema of the spec file (docs/experiment-spec.schema.json)."""
    return SpecFile.model_json_schema(schema_generator=_FileFields)
