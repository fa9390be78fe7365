"""The variants and scorers tabs: each variant's model, prompt and tools; each scorer's settings."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import streamlit as st

from ui import bootstrap
from ui.experiments.agent_settings import TRAJECTORY_FACTORIES, TRAJECTORY_KINDS, trajectory_fields
from ui.model_form import ModelLabels, model_fields, setup_form
from ui.state import EXPERIMENT_WIDGET_PREFIX, Key, experiment_widget, init_widget, widget
from yiem.experiments import ExperimentDraft, ScorerError, Variant, scorers
from yiem.experiments.scorers import AnyScorer
from yiem.model_setup import Preset
from yiem.store import StoreError

ANOTHER_MODEL = "Another model…"  # the judge picker's entry for a model no variant uses
SCORER_KINDS = {
    "contains": "Contains the expected text",
    "exact": "Exactly the expected text",
    "regex": "Matches a regular expression",
    "valid_json": "Is valid JSON",
    "json_schema": "Matches a JSON Schema",
    "numeric": "A number within a tolerance",
    "called_tool": "Called a tool",
    "cost_limit": "Cost at most",
    "latency_limit": "Took at most",
    "rubric": "Graded by a model (rubric)",
    **TRAJECTORY_KINDS,
}


def _uids(name: str, count: int) -> list[str]:
    """Stable widget ids for the entries of a list, kept in step with its length."""
    key = experiment_widget(f"{name}_uids")
    uids: list[str] = key.setdefault(list)
    while len(uids) < count:
        uids.append(uuid.uuid4().hex[:8])
    del uids[count:]
    return uids


def _remove_row(rows: list[Any], uids: list[str], index: int | None) -> None:
    """Drop the row whose Remove button was clicked, with its widget ids, and draw the page again."""
    if index is None:
        return
    del rows[index]
    del uids[index]
    st.rerun()


_VARIANT_LABELS = ModelLabels(prompt="System prompt (use {var} for an item's vars)")


def _widget_key(prefix: str) -> Callable[[str], str]:
    return lambda name: prefix + name


def draw_variants(draft: ExperimentDraft, tool_names: list[str]) -> None:
    """One expander per variant; the draft's variants are rebuilt from the widgets each run."""
    uids = _uids("variant", len(draft.variants))
    rebuilt: list[Variant] = []
    remove: int | None = None
    for index, (uid, variant) in enumerate(zip(uids, draft.variants, strict=True)):
        k = f"{EXPERIMENT_WIDGET_PREFIX}v_{uid}_"
        with st.expander(f"Variant {index + 1}: {variant.name}", expanded=len(draft.variants) <= 2):
            name = st.text_input("Name", key=init_widget(k + "name", variant.name))
            setup = setup_form(variant, _widget_key(k), tool_names, ask_key=False, labels=_VARIANT_LABELS)
            max_turns = st.columns(2)[0].number_input(
                "Max turns", 1, 100, key=init_widget(k + "turns", variant.max_turns)
            )
            if st.button("Remove this variant", key=k + "remove", icon=":material/delete:"):
                remove = index
        rebuilt.append(
            variant.model_copy(
                update={
                    **dict(setup),
                    "name": name.strip() or f"variant {index + 1}",
                    "max_turns": int(max_turns),
                }
            )
        )
    draft.variants = rebuilt
    _remove_row(draft.variants, uids, remove)
    if st.button("Add a variant", key=f"{EXPERIMENT_WIDGET_PREFIX}add_variant", icon=":material/add:"):
        template = draft.variants[-1] if draft.variants else Variant(name="")
        draft.variants.append(template.model_copy(update={"name": f"variant {len(draft.variants) + 1}"}))
        st.rerun()
    _variant_from_preset(draft)


def _add_preset(draft: ExperimentDraft, presets: dict[str, Preset], key: Key[Any]) -> None:
    chosen = presets.get(key.get() or "")
    if chosen is None:
        return
    taken = {variant.name for variant in draft.variants}
    name = next(n for n in (chosen.name, *(f"{chosen.name} {i}" for i in range(2, 100))) if n not in taken)
    draft.variants.append(Variant.named(name, chosen.setup))
    key.set(None)  # ready to add another


def _variant_from_preset(draft: ExperimentDraft) -> None:
    """One choice adds a variant doing what a setup saved in Chat does."""
    try:
        presets = {preset.name: preset for preset in bootstrap.library().presets()}
    except StoreError as error:
        st.caption(f"The setups saved in Chat could not be read: {error}")
        return
    if not presets:
        return
    key = experiment_widget("add_preset")
    st.selectbox(
        "Add a variant from a setup saved in Chat",
        list(presets),
        index=None,
        placeholder="Choose a saved setup",
        key=key.name,
        on_change=_add_preset,
        args=(draft, presets, key),
    )


def _scorer_fields(kind: str, k: str, old: dict[str, Any], variant_names: list[str]) -> dict[str, Any]:
    """The widgets of one scorer kind; returns the arguments of its factory."""
    if kind == "contains":
        text = st.text_input(
            "Texts (one per line; empty: the item's expected)",
            key=init_widget(k + "values", "\n".join(old.get("values", []))),
        )
        return {"values": [line for line in text.splitlines() if line.strip()]}
    if kind == "exact":
        return {
            "value": st.text_input(
                "Text (empty: the item's expected)", key=init_widget(k + "value", old.get("value") or "")
            )
            or None
        }
    if kind == "regex":
        return {
            "pattern": st.text_input(
                "Pattern (RE2 syntax)", key=init_widget(k + "pattern", old.get("pattern", ""))
            )
        }
    if kind == "json_schema":
        own = old.get("schema")
        raw = st.text_area(
            "JSON Schema (empty: each variant's response schema)",
            key=init_widget(k + "schema", json.dumps(own, indent=2) if own is not None else ""),
        )
        if not raw.strip():
            return {"schema": None}
        try:
            return {"schema": json.loads(raw)}
        except json.JSONDecodeError as error:
            raise ScorerError(f"The JSON Schema is not valid JSON: {error.msg}") from None
    if kind == "numeric":
        a, b = st.columns(2)
        tolerance = a.number_input(
            "Tolerance", 0.0, key=init_widget(k + "tolerance", float(old.get("tolerance", 0.0)))
        )
        relative = b.checkbox(
            "Relative (a fraction of the expected)",
            key=init_widget(k + "relative", bool(old.get("relative"))),
        )
        return {"tolerance": tolerance, "relative": relative}
    if kind == "called_tool":
        tool = st.text_input("Tool name", key=init_widget(k + "tool", old.get("tool", "")))
        raw = st.text_input(
            'With arguments (JSON, optional), e.g. {"timezone": "UTC"}',
            key=init_widget(k + "args", json.dumps(old["arguments"]) if old.get("arguments") else ""),
        )
        try:
            return {"tool": tool, "arguments": json.loads(raw) if raw.strip() else None}
        except json.JSONDecodeError as error:
            raise ScorerError(f"The arguments are not valid JSON: {error.msg}") from None
    if kind == "cost_limit":
        return {
            "max_usd": st.number_input(
                "Dollars per item",
                0.0,
                step=0.001,
                format="%.4f",
                key=init_widget(k + "usd", float(old.get("max_usd", 0.01))),
            )
        }
    if kind == "latency_limit":
        return {
            "max_ms": st.number_input(
                "Milliseconds per item", 1.0, key=init_widget(k + "ms", float(old.get("max_ms", 10_000)))
            )
        }
    if kind in TRAJECTORY_KINDS:
        return trajectory_fields(kind, k, old)
    if kind == "rubric":
        text = st.text_area(
            "Rubric",
            key=init_widget(k + "rubric", old.get("rubric", "")),
            placeholder="Is the answer correct and polite?",
        )
        return {"text": text, "judge": _judge_field(k, old.get("judge"), variant_names)}
    return {}


def _judge_field(k: str, old: dict[str, Any] | None, variant_names: list[str]) -> Variant | str:
    """A variant's name (its model judges) or, for "Another model", the judge picked like a variant."""
    before = Variant.model_validate(old["variant"]) if old else Variant(name="judge")
    named = before.name.removeprefix("judge (").removesuffix(")")
    initial = named if named in variant_names else (ANOTHER_MODEL if old or not variant_names else None)
    choices = [*variant_names, ANOTHER_MODEL]
    if widget(k + "judge").get(choices[0]) not in choices:
        widget(k + "judge").pop()  # the variant it named was renamed or removed
    choice = st.selectbox("Judge", choices, key=init_widget(k + "judge", initial or choices[0]))
    if choice != ANOTHER_MODEL:
        return str(choice)
    judge = model_fields(before, _widget_key(k + "judge_"), ask_key=False)
    return Variant.model_validate(
        {**judge.model_dump(), "name": f"judge ({judge.model_id or judge.provider})"}
    )


FACTORIES: dict[str, Callable[..., AnyScorer]] = {
    "contains": lambda values, **kw: scorers.contains(*values, **kw),
    "exact": scorers.exact,
    "regex": scorers.regex,
    "valid_json": scorers.valid_json,
    "json_schema": scorers.json_schema,
    "numeric": scorers.numeric,
    "called_tool": scorers.called_tool,
    "cost_limit": scorers.cost_limit,
    "latency_limit": scorers.latency_limit,
    **TRAJECTORY_FACTORIES,
}


def draw_scorers(draft: ExperimentDraft) -> None:
    """One expander per scorer; a scorer set up wrongly is shown with its error and left out."""
    uids = _uids("scorer", len(draft.scorers))
    kept: list[AnyScorer] = []
    variants = {variant.name: variant for variant in draft.variants}
    remove: int | None = None
    for index, (uid, scorer) in enumerate(zip(uids, draft.scorers, strict=True)):
        k = f"{EXPERIMENT_WIDGET_PREFIX}s_{uid}_"
        old = scorer.model_dump(by_alias=True)
        if isinstance(scorer, scorers.Code):
            # Code runs on the server, so only a script names it (the spec); the page shows, never edits it.
            st.caption(
                f"Scorer {index + 1}: {scorer.name}, Python code in {scorer.path} ({scorer.function}), "
                f"at most {scorer.timeout_s:g} s and {scorer.memory_mb} MB; set in a script, not here."
            )
            kept.append(scorer)
            continue
        with st.expander(f"Scorer {index + 1}: {SCORER_KINDS[scorer.kind]}", expanded=True):
            kind = st.selectbox(
                "Kind",
                list(SCORER_KINDS),
                format_func=SCORER_KINDS.__getitem__,
                key=init_widget(k + "kind", scorer.kind),
            )
            a, b = st.columns(2)
            name = a.text_input(
                "Name", key=init_widget(k + "name", scorer.name if scorer.kind == kind else kind)
            )
            threshold = b.slider(
                "Pass at score ≥",
                0.0,
                1.0,
                step=0.05,
                key=init_widget(k + "threshold", float(scorer.threshold)),
            )
            try:
                fields = _scorer_fields(kind, k, old if scorer.kind == kind else {}, list(variants))
                if kind == "rubric":
                    judge = fields["judge"]
                    if not isinstance(judge, Variant):
                        judge = variants[judge].model_copy(
                            update={"system_prompt": "", "tools": [], "name": f"judge ({judge})"}
                        )
                    built: AnyScorer = scorers.rubric(fields["text"], judge, threshold=threshold, name=name)
                else:
                    built = FACTORIES[kind](**fields, name=name)
                    built = built.model_copy(update={"threshold": threshold})
                kept.append(built)
            except ScorerError as error:
                st.error(str(error))
                kept.append(scorer)
            if st.button("Remove this scorer", key=k + "remove", icon=":material/delete:"):
                remove = index
    draft.scorers = kept
    _remove_row(draft.scorers, uids, remove)
    if st.button("Add a scorer", key=f"{EXPERIMENT_WIDGET_PREFIX}add_scorer", icon=":material/add:"):
        draft.scorers.append(
            scorers.contains(name=f"contains {len(draft.scorers) + 1}" if draft.scorers else "")
        )
        st.rerun()
