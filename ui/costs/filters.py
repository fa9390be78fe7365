"""The Costs page's filters: period, time zone, provider, model, experiment, page and conversation, all
kept in the URL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import streamlit as st
from sqlalchemy import Engine

from ui.bootstrap import store_engine
from ui.state import costs_pick
from yiem import costs

ZONES = ["UTC", "Europe/London", "Europe/Paris", "America/New_York", "America/Los_Angeles", "Asia/Tokyo"]


@dataclass(frozen=True)
class CostsView:
    """What the URL asks for: the filter without a conversation (with the experiment), the time zone,
    the picked conversation."""

    base: costs.UsageFilter
    tz: str
    conversation: str | None
    conversation_slot: Any  # the column the conversation filter is drawn in, once its choices are known


@st.cache_data(ttl=30, show_spinner=False)
def provider_models(url: str, owner: str | None) -> list[tuple[str, str]]:
    """The filter's choices: every provider/model `owner` (None: anyone) has usage for (cached briefly:
    they rarely change)."""
    return costs.filter_options(store_engine(url), owner)


@st.cache_data(ttl=30, show_spinner=False)
def experiment_names(url: str, owner: str | None) -> dict[str, str]:
    """The experiment filter's choices: id -> name of each experiment with `owner`'s usage (cached)."""
    return dict(costs.experiment_options(store_engine(url), owner))


@st.cache_data(ttl=30, show_spinner=False)
def source_names(url: str, owner: str | None) -> list[str]:
    """The page filter's choices: the pages other than Chat that made `owner`'s usage (cached)."""
    return costs.source_options(store_engine(url), owner)


_SOURCE_LABELS = {None: "Every page", "compare": "Compare page", "mcp-sampling": "MCP servers' sampling"}


def _url_pick(
    slot: Any,
    label: str,
    param: str,
    options: list[str | None],
    current: str | None,
    clears: tuple[str, ...] = (),
    **shown: Any,
) -> str | None:
    """A select box kept in the URL (`?param=`) by the page's run, not by a handler: Streamlit stops a
    handler at its first state access when another rerun is queued, and the pick would stay in the box
    while the page kept showing the URL's. A new pick goes to the URL (`clears` leave it) and the page
    runs again, drawing the box anew for it."""
    picked: str | None = slot.selectbox(
        label, options, index=options.index(current), key=costs_pick(param, current).name, **shown
    )
    if picked != current:
        for name in clears:
            st.query_params.pop(name, None)
        if picked is None:
            st.query_params.pop(param, None)
        else:
            st.query_params[param] = picked
        st.rerun()
    return current


def _choose_source(slot: Any, names: list[str], current: str | None) -> str | None:
    """The page filter, kept in the URL like the experiment filter."""
    options: list[str | None] = [None, *names]
    if current not in options:
        options.append(current)
    return _url_pick(
        slot,
        "Page",
        "source",
        options,
        current,
        clears=("conversation",),  # a conversation of another experiment or page would show nothing
        format_func=lambda name: _SOURCE_LABELS.get(name, str(name)),
        help="The usage made on one page other than Chat, e.g. the Compare page's columns",
    )


def _choose_experiment(slot: Any, names: dict[str, str], current: str | None) -> str | None:
    """The experiment filter, kept in the URL: its choices are ids shown by name."""
    options: list[str | None] = [None, *names]
    if current not in options:
        options.append(current)  # a link to an experiment since deleted: its rows may remain
    return _url_pick(
        slot,
        "Experiment",
        "experiment",
        options,
        current,
        clears=("conversation",),
        format_func=lambda eid: "All usage" if eid is None else names.get(eid, eid),
        help="The usage of one experiment's runs: its items' replies and its rubric judges",
    )


def read_view(url: str, stored: tuple[int, int], now_ms: int, owner: str | None) -> CostsView:
    """Draws the filters bound to the URL and returns the view of `owner`'s usage (None: the whole
    team's) they ask for (stops the page on bad dates)."""
    zone_default = st.context.timezone or "UTC"
    zones = ZONES if zone_default in ZONES else [zone_default, *ZONES]
    pairs = provider_models(url, owner)

    top_row = st.columns([2, 2, 2])
    # The URL keeps the label (?period=Last+7+days): bound widgets store their displayed option.
    period_label = top_row[0].selectbox(
        "Period", list(costs.PERIODS.values()), index=2, key="period", bind="query-params"
    )
    period = next(key for key, label in costs.PERIODS.items() if label == period_label)
    tz = top_row[1].selectbox(
        "Time zone", zones, index=zones.index(zone_default), key="tz", bind="query-params"
    )
    dates = _custom_dates(top_row[2], tz, now_ms) if period == "custom" else None

    # The experiment filter shows once some experiment has usage (or a link names one).
    names = experiment_names(url, owner)
    wanted = st.query_params.get("experiment") or None
    with_experiments = bool(names) or wanted is not None
    sources = source_names(url, owner)
    wanted_source = st.query_params.get("source") or None
    with_sources = bool(sources) or wanted_source is not None
    filters = st.columns([2, 2] + [2] * (with_experiments + with_sources) + [3])
    providers = filters[0].multiselect(
        "Provider",
        sorted({p for p, _ in pairs}),
        key="provider",
        bind="query-params",
        placeholder="All providers",
    )
    models = filters[1].multiselect(
        "Model",
        sorted({m for p, m in pairs if not providers or p in providers}),
        key="model",
        bind="query-params",
        placeholder="All models",
    )
    experiment = _choose_experiment(filters[2], names, wanted) if with_experiments else None
    source = _choose_source(filters[-2], sources, wanted_source) if with_sources else None
    try:
        start_ms, end_ms = stored if period == "all" else costs.period_range(period, tz, now_ms, dates)
        base = costs.UsageFilter(
            start_ms=start_ms,
            end_ms=end_ms,
            providers=tuple(providers),
            models=tuple(models),
            experiment_id=experiment,
            source=source,
            owner=owner,
        )
    except costs.UsageFilterError as error:
        st.error(str(error))
        st.stop()
    conversation = st.query_params.get("conversation") or None
    return CostsView(base=base, tz=tz, conversation=conversation, conversation_slot=filters[-1])


def _custom_dates(slot: Any, tz: str, now_ms: int) -> tuple[date, date]:
    today = datetime.fromtimestamp(now_ms / 1000, tz=ZoneInfo(tz)).date()
    picked = slot.date_input(
        "Dates", (today - timedelta(days=29), today), key="dates", bind="query-params", format="YYYY-MM-DD"
    )
    if isinstance(picked, tuple) and len(picked) == 2:
        return (picked[0], picked[1])
    st.info("Pick the last day of the range too.")
    st.stop()


def choose_conversation(engine: Engine, view: CostsView, top: list[costs.BreakdownRow]) -> None:
    """The conversation filter, bound to the URL by hand: its choices change with the period."""
    current = view.conversation
    options: list[str | None] = [None, *(r.conversation_id for r in top if r.conversation_id)]
    if current not in options:
        options.insert(1, current)
    titles = {r.conversation_id: r.label for r in top if r.conversation_id}
    if current and current not in titles:  # a shared link to a conversation outside the top 50
        titles.update(costs.conversation_titles(engine, [current], view.base.owner))
    _url_pick(
        view.conversation_slot,
        "Conversation",
        "conversation",
        options,
        current,
        format_func=lambda cid: "All conversations" if cid is None else titles.get(cid, cid),
        help="The 50 most expensive conversations in the period",
    )
