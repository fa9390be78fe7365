"""The Experiments page's session state: the open experiment's draft, its id, and the live run."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.bootstrap import owner, store_engine
from ui.state import SETTINGS
from yiem.experiments import BackgroundRun, ExperimentDraft, ExperimentStore, Variant
from yiem.providers import PRESETS
from yiem.store import database_url

DRAFT = "exp_draft"
EXPERIMENT_ID = "exp_id"
RUN = "exp_live_run"
EDITOR_VERSION = "exp_editor_version"  # bumped when the dataset is replaced (upload, another experiment)
WIDGET_PREFIX = "exp_w_"  # every editing widget's key starts with it, so opening another one clears them


def experiment_store() -> ExperimentStore:
    person = owner()
    return ExperimentStore(store_engine(database_url()), person.id, admin=person.is_admin)


def draft() -> ExperimentDraft:
    state: Any = st.session_state
    if DRAFT not in state:
        state[DRAFT] = ExperimentDraft()
        state[EDITOR_VERSION] = 0
    found: ExperimentDraft = state[DRAFT]
    return found


def open_experiment(experiment_id: str | None) -> None:
    """Load a saved experiment's draft (None: a new one) and forget the widgets of the last one."""
    state: Any = st.session_state
    store = experiment_store()
    if experiment_id is None:
        state[DRAFT] = ExperimentDraft()
    else:
        record = store.get_experiment(experiment_id)
        state[DRAFT] = ExperimentDraft.model_validate({"name": record.name, **record.data})
    state[EXPERIMENT_ID] = experiment_id
    state[EDITOR_VERSION] = state.get(EDITOR_VERSION, 0) + 1
    for key in [key for key in state if str(key).startswith(WIDGET_PREFIX)]:
        del state[key]


def save(current: ExperimentDraft) -> str:
    """Store the draft (no keys are in it); returns the experiment's id."""
    state: Any = st.session_state
    data = current.model_dump(mode="json", exclude={"name"})
    experiment_id = experiment_store().save_experiment(current.name, data, state.get(EXPERIMENT_ID))
    state[EXPERIMENT_ID] = experiment_id
    return experiment_id


def live_run() -> BackgroundRun | None:
    found: BackgroundRun | None = st.session_state.get(RUN)
    return found


def with_session_keys(variants: list[Variant]) -> list[Variant]:
    """The variants with the key typed in this session's chat settings, for the provider it was typed for."""
    settings = SETTINGS.get()
    if settings is None or not settings.api_key:
        return variants
    keyed = []
    for variant in variants:
        same = variant.provider == settings.provider and variant.provider in PRESETS
        keyed.append(variant.model_copy(update={"api_key": settings.api_key}) if same else variant)
    return keyed
