"""The Experiments page's session state: the open experiment's draft, its id, and the live run."""

from __future__ import annotations

from ui.bootstrap import owner, store_engine
from ui.state import (
    EDITOR_VERSION,
    EXPERIMENT_DRAFT,
    EXPERIMENT_ID,
    EXPERIMENT_RUN,
    EXPERIMENT_WIDGET_PREFIX,
    SETTINGS,
    experiment_widget,
    forget,
)
from yiem.experiments import BackgroundRun, ExperimentDraft, ExperimentStore, Variant
from yiem.providers import PRESETS
from yiem.store import database_url

NAME_FIELD = experiment_widget("name")
REPEATS_FIELD = experiment_widget("repeats")
CONCURRENCY_FIELD = experiment_widget("concurrency")
BUDGET_FIELD = experiment_widget("budget")
CONFIRM_CHATS = experiment_widget("confirm_chats")
"""The person's word, in "Add from conversations" of a shared experiment, that the team may see the
items they add from their conversations; every save of the open draft passes it on."""


def experiment_store() -> ExperimentStore:
    person = owner()
    return ExperimentStore(store_engine(database_url()), person.id, admin=person.is_admin)


def draft() -> ExperimentDraft:
    if not EXPERIMENT_DRAFT.present():
        EXPERIMENT_DRAFT.set(ExperimentDraft())
        EDITOR_VERSION.set(0)
    return EXPERIMENT_DRAFT()


def open_experiment(experiment_id: str | None) -> None:
    """Load a saved experiment's draft (None: a new one) and show it."""
    store = experiment_store()
    if experiment_id is None:
        opened = ExperimentDraft()
    else:
        record = store.get_experiment(experiment_id)
        opened = ExperimentDraft.model_validate({"name": record.name, **record.data})
    show_draft(opened, experiment_id)


def show_draft(opened: ExperimentDraft, experiment_id: str | None = None) -> None:
    """Make `opened` the open draft and show it in the widgets, not the last one's."""
    EXPERIMENT_DRAFT.set(opened)
    EXPERIMENT_ID.set(experiment_id)
    EDITOR_VERSION.set(EDITOR_VERSION.get(0) + 1)
    forget(EXPERIMENT_WIDGET_PREFIX)
    # The fixed-key widgets are set, not only forgotten: the browser sends back what it last showed,
    # which would put the previous experiment's name and run settings into this one.
    NAME_FIELD.set(opened.name)
    REPEATS_FIELD.set(opened.repeats)
    CONCURRENCY_FIELD.set(opened.concurrency)
    BUDGET_FIELD.set(opened.budget_usd or 0.0)


def save(current: ExperimentDraft) -> str:
    """Store the draft (no keys are in it); returns the experiment's id."""
    data = current.model_dump(mode="json", exclude={"name"})
    experiment_id = experiment_store().save_experiment(
        current.name, data, EXPERIMENT_ID.get(), confirm_chat_items=bool(CONFIRM_CHATS.get(False))
    )
    EXPERIMENT_ID.set(experiment_id)
    return experiment_id


def live_run() -> BackgroundRun | None:
    found: BackgroundRun | None = EXPERIMENT_RUN.get()
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
