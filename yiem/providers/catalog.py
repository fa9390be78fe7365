"""The model catalogue: `LlmModel`s with prices from `genai-prices` (offline) and a user's models file.

Local and unknown models cost 0 and are marked `price_known=False`: a price is never guessed.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from genai_prices import data_snapshot
from genai_prices.types import TieredPrices
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from yiem.errors import YiemError
from yiem.providers.presets import PRESETS
from yiem.types import AgentMessage, Api, LlmModel, ModelCost, UsageCost

MODELS_FILE_ENV = "YIEM_MODELS_FILE"
GENAI_PRICES_VERSION = version("genai-prices")

# Families documented as taking image input; genai-prices does not record modalities.
_IMAGE_MODELS = re.compile(
    r"(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|o1(?!-mini)|o3|o4|claude-3|claude-(sonnet|opus|haiku)-4|gemini|"
    r"llava|vision|-vl\b|-vl-|pixtral|llama-4)",
    re.IGNORECASE,
)


class ModelsFileError(YiemError, ValueError):
    """The models file cannot be read; the message names the file and the problem."""


class ModelOverride(BaseModel):
    """One entry of the models file; every field left out keeps the catalogue's value."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    provider: str
    id: str
    name: str | None = None
    base_url: str | None = None
    api: Api | None = None
    cost: ModelCost | None = None
    context_window: int | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=0)
    input: list[str] | None = None
    reasoning: bool | None = None


def _mtok(value: Any) -> tuple[float | None, bool]:
    """Dollars per 1M tokens from a genai-prices price, and whether it is tiered."""
    if value is None:
        return None, False
    if isinstance(value, TieredPrices):
        return float(value.base), True
    if isinstance(value, Decimal | int | float):
        return float(value), False
    return None, False


def catalog_price(
    provider: str, model_id: str, base_url: str | None = None
) -> tuple[ModelCost, int, str] | None:
    """Prices, context window and a source note from genai-prices, or None when it has no price.

    Only providers whose prices genai-prices records are looked up (by preset or by base URL):
    the same model id behind another server may cost something else, or nothing.
    """
    preset = PRESETS.get(provider)
    prices_provider = preset.prices_provider if preset else None
    snapshot = data_snapshot.get_snapshot()
    try:
        if prices_provider:
            found_provider, info = snapshot.find_provider_model(model_id, None, prices_provider, None)
        elif base_url and not (preset and preset.local):
            found_provider, info = snapshot.find_provider_model(model_id, None, None, base_url)
        else:
            return None
    except LookupError:
        return None
    prices = info.get_prices(datetime.now(UTC))
    values = prices.__dict__
    input_price, tiered_in = _mtok(values.get("input_mtok"))
    output_price, tiered_out = _mtok(values.get("output_mtok"))
    if input_price is None or output_price is None:
        return None  # priced by something other than tokens (e.g. per request)
    cache_read, _ = _mtok(values.get("cache_read_mtok"))
    cache_write, _ = _mtok(values.get("cache_write_mtok"))
    # Without a separate cache price, cached tokens are billed as plain input.
    cost = ModelCost(
        input=input_price,
        output=output_price,
        cache_read=input_price if cache_read is None else cache_read,
        cache_write=input_price if cache_write is None else cache_write,
    )
    source = f"genai-prices {GENAI_PRICES_VERSION} ({found_provider.id}/{info.id})"
    if tiered_in or tiered_out:
        source += "; base tier shown, long prompts cost more"
    return cost, info.context_window or 0, source


def models_file_path(cwd: Path | None = None) -> Path | None:
    """`YIEM_MODELS_FILE`, else `models.toml` or `models.json` in the working directory, if present."""
    override = os.environ.get(MODELS_FILE_ENV)
    if override:
        return Path(override)
    folder = cwd or Path.cwd()
    for name in ("models.toml", "models.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def load_models_file(path: Path) -> list[ModelOverride]:
    """Read a models file: `[[models]]` tables in TOML, or `{"models": [...]}` / a list in JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ModelsFileError(f"Cannot read models file {path}: {error.strerror or error}") from None
    try:
        data: Any = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise ModelsFileError(f"Models file {path} is not valid {path.suffix[1:].upper()}: {error}") from None
    entries = data.get("models") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ModelsFileError(f'Models file {path} needs a "models" list of tables.')
    overrides: list[ModelOverride] = []
    for number, entry in enumerate(entries, start=1):
        try:
            overrides.append(ModelOverride.model_validate(entry))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in problem['loc']) or 'entry'}: {problem['msg']}"
                for problem in error.errors()
            )
            raise ModelsFileError(f"Models file {path}, model #{number}: {problems}") from None
    return overrides


@cache
def _overrides_cached(path: Path, mtime_ns: int) -> dict[tuple[str, str], ModelOverride]:
    return {(entry.provider, entry.id): entry for entry in load_models_file(path)}


def user_overrides(path: Path | None = None) -> tuple[dict[tuple[str, str], ModelOverride], Path | None]:
    """The models file's entries by (provider, id), re-read whenever the file changes."""
    path = path or models_file_path()
    if path is None:
        return {}, None
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as error:
        raise ModelsFileError(f"Cannot read models file {path}: {error.strerror or error}") from None
    return _overrides_cached(path, mtime), path


def get_model(
    provider: str,
    model_id: str,
    *,
    base_url: str | None = None,
    models_file: Path | None = None,
) -> LlmModel:
    """The catalogue's `LlmModel`: preset, then genai-prices, then the user's models file on top."""
    preset = PRESETS.get(provider)
    url = base_url or (preset.base_url if preset else "")
    model = LlmModel(
        id=model_id,
        name=model_id,
        provider=provider,
        base_url=url,
        api=preset.api if preset else "openai-completions",
        input=["text", "image"] if _IMAGE_MODELS.search(model_id) else ["text"],
        price_known=False,
        price_source="local model: no price" if preset and preset.local else "price unknown",
    )
    found = catalog_price(provider, model_id, url or None)
    if found is not None:
        cost, context_window, source = found
        model = model.model_copy(
            update={
                "cost": cost,
                "context_window": context_window,
                "price_known": True,
                "price_source": source,
            }
        )
    overrides, path = user_overrides(models_file)
    entry = overrides.get((provider, model_id))
    if entry is not None:
        update = entry.model_dump(exclude_none=True, exclude={"provider", "id"})
        if entry.cost is not None:
            update.update(cost=entry.cost, price_known=True, price_source=f"models file {path}")
        model = model.model_copy(update=update)
    return model


def known_model_ids(provider: str, models_file: Path | None = None) -> list[str]:
    """Model ids the catalogue knows for a provider (genai-prices and the models file), for pickers."""
    ids: list[str] = []
    preset = PRESETS.get(provider)
    if preset and preset.prices_provider:
        snapshot = data_snapshot.get_snapshot()
        for entry in snapshot.providers:
            if entry.id == preset.prices_provider:
                ids += [info.id for info in entry.models if not info.deprecated]
    overrides, _ = user_overrides(models_file)
    ids += [model_id for (name, model_id) in overrides if name == provider and model_id not in ids]
    return ids


def conversation_cost(messages: Iterable[AgentMessage]) -> UsageCost:
    """The sum of the costs recorded on a conversation's assistant messages."""
    total = UsageCost()
    for message in messages:
        cost = getattr(message, "cost", None)
        if isinstance(cost, UsageCost):
            total = total + cost
    return total
