"""A column's settings: from an Experiments variant, and in a blind vote's random order."""

from __future__ import annotations

import random

from yiem.compare import blind_order
from yiem.experiments import Variant
from yiem.model_setup import ModelSetup


def test_a_variant_s_settings_make_a_column() -> None:
    toy = Variant(name="toy", system_prompt="Be kind.", tools=["search"], max_turns=3, max_tokens=99)
    spec = toy.as_stored()
    assert spec == ModelSetup(provider="local", system_prompt="Be kind.", tools=["search"], max_tokens=99)
    remote = Variant(name="r", provider="groq", model_id="llama-3.1-8b-instant", base_url="http://h/v1")
    assert remote.as_stored().label == "groq/llama-3.1-8b-instant"


def test_a_variant_stored_before_the_one_setup_still_loads_and_reaches_the_local_model() -> None:
    # Runs stored their variants' settings with provider "" for the embedded model.
    stored = {"name": "old", "provider": "", "model_id": "smollm2", "max_turns": 4, "tools": []}
    old = Variant.model_validate(stored)
    assert (old.label, old.max_turns, old.loop_config().max_turns) == ("smollm2", 4, 4)
    assert old.settings_dict() == {**Variant(name="old").settings_dict(), **stored}


def test_blind_order_shuffles_the_columns() -> None:
    specs = [ModelSetup(model_id="pirate"), ModelSetup(model_id="formal")]
    orders = {tuple(s.model_id for s in blind_order(specs, random.Random(seed))) for seed in range(20)}
    assert orders == {("pirate", "formal"), ("formal", "pirate")}
    assert specs[0].model_id == "pirate"  # the settings' own list is left as it was
