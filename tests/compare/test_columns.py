"""A column's settings: from an Experiments variant, and in a blind vote's random order."""

from __future__ import annotations

import random

from yiem.compare import ColumnSpec, blind_order
from yiem.experiments import Variant


def test_a_variant_s_settings_make_a_column() -> None:
    toy = Variant(name="toy", system_prompt="Be kind.", tools=["search"], max_turns=3, max_tokens=99)
    spec = ColumnSpec.from_variant(toy.settings_dict())
    assert spec == ColumnSpec(provider="local", system_prompt="Be kind.", tools=["search"], max_tokens=99)
    remote = Variant(name="r", provider="groq", model_id="llama-3.1-8b-instant", base_url="http://h/v1")
    assert ColumnSpec.from_variant(remote.settings_dict()).label == "groq/llama-3.1-8b-instant"


def test_blind_order_shuffles_the_columns() -> None:
    specs = [ColumnSpec(model_id="pirate"), ColumnSpec(model_id="formal")]
    orders = {tuple(s.model_id for s in blind_order(specs, random.Random(seed))) for seed in range(20)}
    assert orders == {("pirate", "formal"), ("formal", "pirate")}
    assert specs[0].model_id == "pirate"  # the settings' own list is left as it was
