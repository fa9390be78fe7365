"""The Costs page's queries: each runs the SQL of yiem.costs._sql and returns result models."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Engine, Select, and_, exists, func, literal_column, select, true

from yiem.costs._models import (
    BreakdownRow,
    Counts,
    CubeRow,
    Dashboard,
    Headline,
    HeadlineChange,
    Summary,
    Totals,
)
from yiem.costs._periods import (
    DAY_MS,
    HOUR_MS,
    Granularity,
    UsageFilter,
    choose_granularity,
    offset_transitions,
)
from yiem.costs._sql import (
    counts_query,
    cube_query,
    per_conversation,
    read_counts,
    read_totals,
    rollup_conversations,
)
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import (
    COMPARE_SOURCE,
    SAMPLING_SOURCE,
    USAGE_SAMPLE_EVERY,
    conversations,
    experiments,
    usage,
    usage_per_conversation,
    visible_experiments,
)

# Above this many requests a median is read from an evenly spread sample of them (by id), so the
# page never pulls every latency out of the database; at or below it the median is exact.
MEDIAN_SAMPLE = 20_000
# `id % 16 = 0` as SQL with the number written out, so it matches ix_usage_sample's condition.
_IN_SAMPLE_INDEX = (usage.c.id % literal_column(str(USAGE_SAMPLE_EVERY))) == literal_column("0")


def data_range(engine: Engine, usage_filter: UsageFilter | None = None) -> tuple[int, int] | None:
    """Epoch ms of the first and just after the last usage row under `usage_filter` (default: the local
    user's), or None with none."""
    created = usage.c.created_ms
    # Two scalar subqueries: with no condition but the owner each is one seek on ix_usage_owner_created
    # (SQLite and PostgreSQL alike); min and max over a filtered range read the whole range.
    condition = (usage_filter or UsageFilter()).where()
    first, last = (select(agg(created)).where(condition).scalar_subquery() for agg in (func.min, func.max))
    with engine.connect() as conn:
        low, high = conn.execute(select(first, last)).one()
    return None if low is None else (int(low), int(high) + 1)


def summarize(
    engine: Engine, usage_filter: UsageFilter, tz: str, granularity: Granularity | None = None
) -> Summary:
    """The cube for `usage_filter`: counts per local hour or day, provider, model and stop reason."""
    start_ms, end_ms = usage_filter.start_ms, usage_filter.end_ms
    if start_ms is None or end_ms is None:
        found = data_range(engine, usage_filter)
        if found is None:
            return Summary(granularity=granularity or "day", tz=tz, rows=[])
        start_ms = found[0] if start_ms is None else start_ms
        end_ms = found[1] if end_ms is None else end_ms
    grain = granularity or choose_granularity(start_ms, end_ms)
    size = HOUR_MS if grain == "hour" else DAY_MS
    bounded = replace(usage_filter, start_ms=start_ms, end_ms=end_ms)
    query = cube_query(bounded, offset_transitions(tz, start_ms, end_ms), size)
    epoch = datetime(1970, 1, 1)
    with engine.connect() as conn:
        rows = [
            CubeRow(
                bucket=epoch + timedelta(milliseconds=int(r.bucket) * size),
                provider=r.provider,
                model=r.model,
                stop_reason=r.stop_reason,
                owner=r.owner,
                totals=read_counts(r._mapping),
            )
            for r in conn.execute(query)
        ]
    return Summary(granularity=grain, tz=tz, rows=rows)


def counts(engine: Engine, usage_filter: UsageFilter) -> Counts:
    """The `Counts` of `usage_filter` in one ungrouped query (from usage_hourly where the filter allows)."""
    with engine.connect() as conn:
        return read_counts(conn.execute(counts_query(usage_filter)).one()._mapping)


def totals(engine: Engine, usage_filter: UsageFilter) -> Totals:
    """The sums for `usage_filter` in one ungrouped query (from usage_hourly where the filter allows)."""
    with engine.connect() as conn:
        return read_totals(conn.execute(counts_query(usage_filter, full=True)).one()._mapping)


def medians(
    engine: Engine, usage_filter: UsageFilter, count: int | None = None
) -> tuple[float | None, float | None]:
    """Median latency and time to first token (ms) of `usage_filter`'s requests.

    Exact up to MEDIAN_SAMPLE requests; above, the median of every k-th row by id, so at most
    about MEDIAN_SAMPLE values leave the database whatever the number of rows. From k = 16 (over
    320,000 requests) k is a multiple of 16 (half to all of MEDIAN_SAMPLE values), so the rows
    are read from ix_usage_sample, which holds every 16th row: a sixteenth of the range, not all
    of it. Pass `count` (the number of rows `usage_filter` selects) when known, to save counting
    them again.
    """
    if count is None:
        count = counts(engine, usage_filter).requests
    with engine.connect() as conn:
        step = max(1, -(-int(count) // MEDIAN_SAMPLE))
        condition = usage_filter.where()
        if step >= USAGE_SAMPLE_EVERY:
            step = -(-step // USAGE_SAMPLE_EVERY) * USAGE_SAMPLE_EVERY
            condition = and_(condition, _IN_SAMPLE_INDEX, usage.c.id % step == 0)
        elif step > 1:
            condition = and_(condition, usage.c.id % step == 0)
        latencies: list[float] = []
        ttfts: list[float] = []
        for latency, ttft in conn.execute(select(usage.c.latency_ms, usage.c.ttft_ms).where(condition)):
            if latency is not None:
                latencies.append(float(latency))
            if ttft is not None:
                ttfts.append(float(ttft))
    return _median(latencies), _median(ttfts)


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    values.sort()
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def headline(engine: Engine, usage_filter: UsageFilter) -> HeadlineChange:
    """Headline figures for `usage_filter` and for the period of the same length before it."""
    now_totals = totals(engine, usage_filter)
    latency, ttft = medians(engine, usage_filter, now_totals.requests)
    now = Headline(totals=now_totals, median_latency_ms=latency, median_ttft_ms=ttft)
    before_filter = usage_filter.previous()
    if before_filter is None:
        return HeadlineChange(current=now)
    before_totals = totals(engine, before_filter)
    before_latency, before_ttft = medians(engine, before_filter, before_totals.requests)
    before = Headline(totals=before_totals, median_latency_ms=before_latency, median_ttft_ms=before_ttft)
    return HeadlineChange(current=now, previous=before)


# A range's top conversations are first looked for among the owner's most expensive conversations of
# all time (usage_per_conversation): this many times the number asked for (at least
# MIN_CANDIDATES), then ten times more; when neither settles it, among every conversation.
CANDIDATE_ROUNDS = (4, 40)
MIN_CANDIDATES = 200


def top_conversations(engine: Engine, usage_filter: UsageFilter, limit: int = 10) -> list[BreakdownRow]:
    """The `limit` most expensive conversations (then most requests), with their titles.

    Summing every conversation of a long range is most of the page's work at 10M requests (half a
    million conversations), so the top is first taken among the conversations that cost the most
    over all time (one person's, or the team's): no conversation can cost more in a range than in
    all time, so when the last of the top found there beats the next conversation of all time, no
    other can be in it.
    """
    if rollup_conversations(usage_filter) and _candidates_pay(engine, usage_filter):
        for factor in CANDIDATE_ROUNDS:
            found = _top_among_costliest(engine, usage_filter, limit, max(MIN_CANDIDATES, factor * limit))
            if found is not None:
                return found
    return _top(engine, usage_filter, limit)


def _candidates_pay(engine: Engine, usage_filter: UsageFilter) -> bool:
    """Whether looking among the costliest conversations first is likely faster than summing all.

    One person's costliest are a walk down an index. The team's are a sum over every conversation
    (at 10M requests 0.5 s, twice a round): faster than summing the range's conversations only when
    the range spans most of the time there is usage in, as "all time" does (3-4 s summed, 1 s so).
    """
    if usage_filter.owner is not None:
        return True
    assert usage_filter.start_ms is not None and usage_filter.end_ms is not None  # rollup_conversations
    found = data_range(engine, UsageFilter(owner=None))
    if found is None:
        return False
    first, end = found
    covered = min(usage_filter.end_ms, end) - max(usage_filter.start_ms, first)
    return 2 * covered >= end - first


def _top_among_costliest(
    engine: Engine, usage_filter: UsageFilter, limit: int, candidates: int
) -> list[BreakdownRow] | None:
    """The top among the `candidates` conversations of the owner (or the team) that cost the most over
    all time, or None when a conversation outside them might belong in it."""
    t = usage_per_conversation.c
    if usage_filter.owner is not None:  # read backwards off ix_usage_per_conversation_cost
        costliest = (
            select(t.conversation_id, t.cost_total, t.requests)
            .where(t.owner == usage_filter.owner)
            .order_by(t.cost_total.desc(), t.requests.desc())
        )
    else:  # the whole team: each conversation's dollars over everyone's requests in it
        cost, requests = func.sum(t.cost_total), func.sum(t.requests)
        costliest = (
            select(t.conversation_id, cost.label("cost_total"), requests.label("requests"))
            .group_by(t.conversation_id)
            .order_by(cost.desc(), requests.desc())
        )
    # The candidates are chosen inside the top's own statement (one snapshot), as a CTE: one read
    # of them, however many parts of the statement ask (the team's is a sum over every conversation).
    among = select(costliest.limit(candidates).cte("costliest").c.conversation_id)
    rows = _top(engine, usage_filter, limit, among)
    # Read after the top: totals only grow, so a conversation that grew in between raises the bound
    # (the first conversation left out) rather than slipping past it.
    with engine.connect() as conn:
        bound = conn.execute(costliest.offset(candidates).limit(1)).first()
    if bound is None:  # every conversation was a candidate
        return rows
    if len(rows) < limit:
        return None
    last = rows[-1].totals
    if bound.cost_total == 0:  # every conversation left out cost nothing at all: requests decide
        return rows if last.cost_total > 0 or last.requests > bound.requests else None
    # The same dollars summed in another order may differ in the last bits: keep a margin.
    return rows if last.cost_total > bound.cost_total * (1 + 1e-9) else None


def _top(
    engine: Engine, usage_filter: UsageFilter, limit: int, among: Select[Any] | None = None
) -> list[BreakdownRow]:
    sums = per_conversation(usage_filter, among)
    grouped = (
        select(sums)
        .order_by(sums.c.cost_total.desc(), sums.c.requests.desc(), sums.c.conversation_id)
        .limit(limit)
        .subquery()
    )
    joined = conversations.c.id == grouped.c.conversation_id
    if usage_filter.owner is not None:  # titles of the same person's conversations only
        joined = joined & (conversations.c.owner == usage_filter.owner)
    query = select(grouped, conversations.c.title).select_from(grouped.outerjoin(conversations, joined))
    rows = []
    with engine.connect() as conn:
        for r in conn.execute(query):
            cid = r.conversation_id
            title = r.title or ("(no conversation)" if cid is None else "(deleted conversation)")
            rows.append(
                BreakdownRow(
                    key=cid or "",
                    label=title,
                    conversation_id=cid,
                    last_ms=int(r.last_ms),
                    totals=read_counts(r._mapping),
                )
            )
    return sorted(rows, key=lambda r: (-r.totals.cost_total, -r.totals.requests, r.key))


def dashboard(
    engine: Engine,
    usage_filter: UsageFilter,
    tz: str,
    granularity: Granularity | None = None,
    top_filter: UsageFilter | None = None,
    top_limit: int = 50,
) -> Dashboard:
    """The cube, the headline and the top conversations (over `top_filter`, default `usage_filter`).

    This period's headline counts are the cube's own, so its rows are read once. The queries are
    independent and run side by side, each on its own pooled connection: the database works on
    two cores while Python waits (sqlite3 and psycopg release the GIL).
    """
    before_filter = usage_filter.previous()
    with ThreadPoolExecutor(max_workers=2) as pool:
        cube = pool.submit(summarize, engine, usage_filter, tz, granularity)
        top = pool.submit(top_conversations, engine, top_filter or usage_filter, top_limit)
        now_medians = pool.submit(medians, engine, usage_filter)
        before = pool.submit(_period_headline, engine, before_filter) if before_filter else None
        estimated = pool.submit(estimated_requests, engine, usage_filter)
        summary = cube.result()
        latency, ttft = now_medians.result()
        now = Headline(totals=summary.counts(), median_latency_ms=latency, median_ttft_ms=ttft)
        change = HeadlineChange(current=now, previous=before.result() if before else None)
        return Dashboard(
            summary=summary,
            headline=change,
            top_conversations=top.result(),
            estimated_requests=estimated.result(),
        )


def estimated_requests(engine: Engine, usage_filter: UsageFilter) -> int:
    """How many of the filter's requests have estimated tokens (replies stopped mid-stream).

    Read from the partial index ix_usage_estimated, which holds those rows only (the provider and
    model conditions are kept off their own index, which SQLite would otherwise walk instead).
    """
    condition = usage_filter.where(name_index=False)
    query = select(func.count()).select_from(usage).where(condition, usage.c.estimated == true())
    with engine.connect() as conn:
        return int(conn.execute(query).scalar() or 0)


def _period_headline(engine: Engine, usage_filter: UsageFilter) -> Headline:
    found = counts(engine, usage_filter)
    latency, ttft = medians(engine, usage_filter, found.requests)
    return Headline(totals=found, median_latency_ms=latency, median_ttft_ms=ttft)


def filter_options(engine: Engine, owner: str | None = LOCAL_OWNER_ID) -> list[tuple[str, str]]:
    """Every (provider, model) pair `owner` (None: anyone) has usage for, sorted.

    A skip scan over the (provider, model) index: a couple of seeks per distinct pair instead of
    reading one index entry per request. (A row-value `(provider, model) > (?, ?)` would seek on
    the provider only and then walk every request of it.)
    """
    c = usage.c
    first = select(c.provider, c.model).order_by(c.provider, c.model).limit(1)
    if owner is not None:  # the same skip scan on (owner, provider, model)
        first = first.where(c.owner == owner)
    found: list[tuple[str, str]] = []
    with engine.connect() as conn:
        row = conn.execute(first).first()
        while row is not None:
            found.append((row.provider, row.model))
            same_provider = first.where(c.provider == row.provider, c.model > row.model)
            row = (
                conn.execute(same_provider).first()
                or conn.execute(first.where(c.provider > row.provider)).first()
            )
    return found


def conversation_titles(
    engine: Engine, ids: Iterable[str], owner: str | None = LOCAL_OWNER_ID
) -> dict[str, str]:
    """Titles of the given conversations of `owner` (None: anyone's); others and missing ones are left out."""
    wanted = list(ids)
    if not wanted:
        return {}
    query = select(conversations.c.id, conversations.c.title).where(conversations.c.id.in_(wanted))
    if owner is not None:
        query = query.where(conversations.c.owner == owner)
    with engine.connect() as conn:
        return {r.id: r.title for r in conn.execute(query)}


def experiment_options(engine: Engine, owner: str | None = LOCAL_OWNER_ID) -> list[tuple[str, str]]:
    """The experiments that have usage rows of `owner` (None: anyone's) and that `owner` may see, as
    (id, name), the most recently edited first."""
    spent = exists().where(usage.c.experiment_id == experiments.c.id)  # a seek on ix_usage_experiment
    shown: ColumnElement[bool] = true()
    if owner is not None:
        spent = spent.where(usage.c.owner == owner)
        # Their usage of an experiment its owner later made private stays counted; its name is not theirs.
        shown = visible_experiments(owner)
    query = (
        select(experiments.c.id, experiments.c.name)
        .where(spent, shown)
        .order_by(experiments.c.updated_ms.desc(), experiments.c.id)
    )
    with engine.connect() as conn:
        return [(r.id, r.name) for r in conn.execute(query)]


def source_options(engine: Engine, owner: str | None = LOCAL_OWNER_ID) -> list[str]:
    """The pages other than Chat (usage.source) that made usage rows of `owner` (None: anyone's)."""
    found = []
    for source in (COMPARE_SOURCE, SAMPLING_SOURCE):
        spent = exists().where(usage.c.source == source)  # a seek on ix_usage_source
        if owner is not None:
            spent = spent.where(usage.c.owner == owner)
        with engine.connect() as conn:
            if conn.execute(select(spent)).scalar():
                found.append(source)
    return found
