"""Chat's library (schema version 16): saved setups (presets) and saved prompts, each person's own."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table, Text

from yiem.store._schema import metadata, owner_column

# A named setup (yiem.model_setup.ModelSetup as JSON: provider, model, base URL, system prompt, sampling,
# tools, tool mode); never a key. Saving under a name one already has replaces it.
setup_presets = Table(
    "setup_presets",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Index("ix_setup_presets_owner_name", "owner", "name", unique=True),
)

# A named prompt whose `{{variables}}` are asked for before it is sent.
saved_prompts = Table(
    "saved_prompts",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Index("ix_saved_prompts_owner_name", "owner", "name", unique=True),
)
