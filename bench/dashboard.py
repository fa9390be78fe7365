"""The Costs page's aggregations: SQL pushdown (yiem.costs) against pandas over all rows, same run.

For each size (10k, 100k, 1M demo rows in a fresh SQLite file, `seed-demo`'s generator) and two
views (the page's default "last 30 days", and "all time"), both sides compute what the page
shows: the cube (per local day x provider x model x stop reason), the headline with the previous
period and medians, the top conversations with titles, and the filter choices. The pandas side
reads every row of the range (and of the previous period) with `pd.read_sql` and groups there.
Runs alternate (SQL, pandas, SQL, ...) so load from elsewhere on the machine hits both sides.
Reports medians of wall and CPU time, their ratios, and the peak of Python allocations (tracemalloc: the
database's own page cache is outside it, a few MB per connection by SQLite's default).

    .venv/bin/python bench/dashboard.py [--sizes 10000 100000 1000000] [--repeat 3] [--keep DIR]

`--keep DIR` keeps each size's database in DIR and reuses it on the next run (seeding 1M rows takes
minutes on a busy machine); the rows are the same either way, the generator being seeded.
`--database-url URL` measures one size in that database instead (PostgreSQL: a server of your own
on 127.0.0.1), seeding it when its usage table is empty and reusing it when it holds that size.
PostgreSQL is seeded with the same generator by COPY, usage's indexes built after the rows, then
vacuumed, and each rollup is checked against the rows (`_seed_postgres`: 10M rows in 5 minutes).
`--no-pandas` leaves the pandas side out (at 10M rows it would load every row of the range into
Python, several GB): the SQL side's figures are then checked against plain aggregates over the
usage rows instead (requests and priced cost of both periods, no rollup), and its columns read "-".
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402
from sqlalchemy import Engine, case, func, insert, select, text  # noqa: E402

from yiem import costs as usage  # noqa: E402
from yiem.store import (  # noqa: E402
    conversations,
    create_store_engine,
    generate,
    seed_demo,
    usage_conversation_hourly,
    usage_hourly,
    usage_per_conversation,
)
from yiem.store import usage as usage_table  # noqa: E402

TZ = "Europe/Paris"
END_MS = 1_796_000_000_000  # fixed, so every run sees the same rows: 2026-11-30
DAYS = 180


def sql_page(engine: Engine, usage_filter: usage.UsageFilter) -> dict[str, Any]:
    """What ui/pages/costs.py asks of yiem.costs for one view."""
    usage.data_range(engine)
    options = usage.filter_options(engine)
    data = usage.dashboard(engine, usage_filter, TZ)
    change = data.headline
    return {
        "requests": change.current.totals.requests,
        "cost": change.current.totals.cost_total,
        "previous_requests": change.previous.totals.requests if change.previous else 0,
        "median_latency": change.current.median_latency_ms,
        "cube_rows": len(data.summary.rows),
        "top": [r.conversation_id for r in data.top_conversations[:5]],
        "options": len(options),
    }


COLUMNS = [
    "id",
    "created_ms",
    "conversation_id",
    "provider",
    "model",
    "stop_reason",
    "price_known",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cost_total",
    "latency_ms",
    "ttft_ms",
]


def pandas_page(engine: Engine, usage_filter: usage.UsageFilter) -> dict[str, Any]:
    """The same figures from every row of the range loaded into pandas."""
    assert usage_filter.start_ms is not None and usage_filter.end_ms is not None
    length = usage_filter.end_ms - usage_filter.start_ms
    cols = [usage_table.c[name] for name in COLUMNS]
    with engine.connect() as conn:
        frame = pd.read_sql(
            select(*cols).where(
                usage_table.c.created_ms >= usage_filter.start_ms - length,
                usage_table.c.created_ms < usage_filter.end_ms,
            ),
            conn,
        )
        titles = pd.read_sql(select(conversations.c.id, conversations.c.title), conn)
    frame["priced_cost"] = frame["cost_total"].where(frame["price_known"].astype(bool), 0.0)
    frame["error"] = frame["stop_reason"] == "error"
    options = frame[["provider", "model"]].drop_duplicates()  # pandas has only what it loaded
    now = frame[frame["created_ms"] >= usage_filter.start_ms]
    before = frame[frame["created_ms"] < usage_filter.start_ms]
    local = pd.to_datetime(now["created_ms"], unit="ms", utc=True).dt.tz_convert(TZ)
    cube = now.groupby([local.dt.date.rename("day"), "provider", "model", "stop_reason"], observed=True).agg(
        requests=("id", "size"),
        errors=("error", "sum"),
        input_tokens=("input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        cache_read_tokens=("cache_read_tokens", "sum"),
        cache_write_tokens=("cache_write_tokens", "sum"),
        reasoning_tokens=("reasoning_tokens", "sum"),
        cost=("priced_cost", "sum"),
    )
    top = (
        now.groupby("conversation_id", dropna=False)
        .agg(cost=("priced_cost", "sum"), requests=("id", "size"), last_ms=("created_ms", "max"))
        .sort_values(["cost", "requests"], ascending=False)
        .head(50)
        .join(titles.set_index("id"), how="left")
    )
    return {
        "requests": len(now),
        "cost": float(cube["cost"].sum()),
        "previous_requests": len(before),
        "median_latency": float(now["latency_ms"].median()),
        "cube_rows": len(cube),
        "top": list(top.index[:5]),
        "options": len(options),
        "median_ttft": (now["ttft_ms"].median(), before["latency_ms"].median(), before["ttft_ms"].median()),
    }


def timed(runs: list[Callable[[], dict[str, Any]]], repeat: int) -> list[tuple[float, float, dict[str, Any]]]:
    """Median wall and CPU time and the last result of each run, taking turns so load on the
    machine hits all. CPU time counts every thread of this process (SQLite runs in-process), so
    it is what the work costs whatever else the shared cores are doing.
    """
    walls: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    results: list[dict[str, Any]] = [{} for _ in runs]
    for _ in range(repeat):
        for index, run in enumerate(runs):
            wall, cpu = time.perf_counter(), time.process_time()
            results[index] = run()
            walls[index].append(time.perf_counter() - wall)
            cpus[index].append(time.process_time() - cpu)
    return [
        (statistics.median(w), statistics.median(c), r) for w, c, r in zip(walls, cpus, results, strict=True)
    ]


def peak_mb(run: Callable[[], Any]) -> float:
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def plain_figures(engine: Engine, usage_filter: usage.UsageFilter) -> dict[str, Any]:
    """Requests and priced cost of the range, and requests of the period before, straight from the rows."""
    assert usage_filter.start_ms is not None and usage_filter.end_ms is not None
    length = usage_filter.end_ms - usage_filter.start_ms
    c = usage_table.c
    now = c.created_ms >= usage_filter.start_ms
    priced = func.sum(case((c.price_known, c.cost_total), else_=0.0))
    before = c.created_ms < usage_filter.start_ms
    query = select(func.count().filter(now), priced.filter(now), func.count().filter(before)).where(
        c.owner == usage_filter.owner,
        c.created_ms >= usage_filter.start_ms - length,
        c.created_ms < usage_filter.end_ms,
    )
    with engine.connect() as conn:
        requests, cost, previous = conn.execute(query).one()
    return {"requests": requests, "cost": float(cost or 0.0), "previous_requests": previous}


def measure_sql_only(engine: Engine, usage_filter: usage.UsageFilter, label: str, repeat: int) -> str:
    """One table row without pandas: the SQL side timed and checked against plain aggregates."""
    sql_run = partial(sql_page, engine, usage_filter)
    ((sql_time, sql_cpu, sql_result),) = timed([sql_run], repeat)
    plain = plain_figures(engine, usage_filter)
    assert sql_result["requests"] == plain["requests"], (sql_result, plain)
    assert sql_result["previous_requests"] == plain["previous_requests"], (sql_result, plain)
    assert abs(sql_result["cost"] - plain["cost"]) < 1e-6 * max(1.0, plain["cost"]), (sql_result, plain)
    sql_peak = peak_mb(sql_run)
    return (
        f"{label}| {sql_result['requests']:,} | {sql_time * 1000:,.0f} ms | - | - "
        f"| {sql_cpu * 1000:,.0f} ms | - | - | {sql_peak:.1f} | - |"
    )


def measure(engine: Engine, usage_filter: usage.UsageFilter, label: str, repeat: int) -> str:
    """One table row: both sides timed, checked to agree, and their allocation peaks."""
    sql_run = partial(sql_page, engine, usage_filter)
    pandas_run = partial(pandas_page, engine, usage_filter)
    (sql_time, sql_cpu, sql_result), (pd_time, pd_cpu, pd_result) = timed([sql_run, pandas_run], repeat)
    # Same work on both sides: the figures must agree before the times mean anything.
    assert sql_result["requests"] == pd_result["requests"], (sql_result, pd_result)
    assert sql_result["previous_requests"] == pd_result["previous_requests"]
    assert abs(sql_result["cost"] - pd_result["cost"]) < 1e-6 * max(1.0, pd_result["cost"])
    assert sql_result["cube_rows"] == pd_result["cube_rows"]
    assert sql_result["top"] == pd_result["top"]
    sql_peak, pd_peak = peak_mb(sql_run), peak_mb(pandas_run)
    return (
        f"{label}| {sql_result['requests']:,} | {sql_time * 1000:,.0f} ms | {pd_time * 1000:,.0f} ms "
        f"| {sql_time / pd_time:.3f} | {sql_cpu * 1000:,.0f} ms | {pd_cpu * 1000:,.0f} ms "
        f"| {sql_cpu / pd_cpu:.3f} | {sql_peak:.1f} | {pd_peak:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="reuse (or make) bench_SIZE.db in this folder")
    parser.add_argument("--database-url", help="one size in this database (e.g. PostgreSQL) instead")
    parser.add_argument(
        "--no-pandas", action="store_true", help="SQL side only, checked against plain aggregates (10M rows)"
    )
    args = parser.parse_args()
    if args.database_url and len(args.sizes) != 1:
        parser.error("--database-url measures one size: give one --sizes value")
    print(
        "| rows | view | rows in view | SQL wall | pandas wall | ratio | SQL CPU | pandas CPU | ratio "
        "| SQL peak MB | pandas peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        for size in args.sizes:
            engine = _engine(args.database_url, folder, size)
            found = usage.data_range(engine)
            assert found is not None
            start_30, end_30 = usage.period_range("30d", TZ, END_MS)
            views = {
                "last 30 days": usage.UsageFilter(start_ms=start_30, end_ms=end_30),
                "all time": usage.UsageFilter(start_ms=found[0], end_ms=found[1]),
            }
            run = measure_sql_only if args.no_pandas else measure
            for name, usage_filter in views.items():
                print(run(engine, usage_filter, f"| {size:,} | {name} ", args.repeat), flush=True)
            engine.dispose()


def _engine(url: str | None, folder: Path, size: int) -> Engine:
    """The size's database, seeded unless it already holds exactly those rows."""
    url = url or f"sqlite:///{folder / f'bench_{size}.db'}"
    engine = create_store_engine(url)  # migrates a kept one
    with engine.connect() as conn:
        held = conn.execute(select(func.count()).select_from(usage_table)).scalar_one()
    if held == 0 and engine.dialect.name == "postgresql":
        return _seed_postgres(engine, url, size)
    if held == 0:
        seed_demo(engine, size, days=DAYS, end_ms=END_MS)
    elif held != size:
        raise SystemExit(f"the database holds {held:,} usage rows, not {size:,}: give an empty one")
    return engine


def _seed_postgres(engine: Engine, url: str, size: int) -> Engine:
    """Seed a server database with `seed-demo`'s generator (the same rows), faster and as a database
    that has lived would be.

    `seed_demo` into PostgreSQL ran at 2-3k rows/s on this busy machine (an hour for 10M), and left
    the rollups 50 times their size: it inserts one row per statement, in one transaction, so the
    statement triggers upsert once per row and no old row version can be cleared before the end
    (usage_hourly: 1.7 GB for 183k rows; the page read 1.76 GB of it). Here usage's secondary
    indexes are dropped first and made again afterwards by the store's own migration
    (`create_store_engine` creates any index of the schema that is missing) from sorted rows; each
    generator batch (20,000 rows, in time order) is one COPY in its own transaction, which fires the
    rollups' statement triggers once for the batch as an INSERT of those rows would. Rollups get the
    same sums either way. Then VACUUM ANALYZE, as autovacuum would have done: statistics and the
    visibility map for index-only scans.
    """
    with engine.begin() as conn:
        for index in usage_table.indexes:
            conn.execute(text(f"DROP INDEX IF EXISTS {index.name}"))
    started = time.perf_counter()
    conversation_rows, batches = generate(size, days=DAYS, end_ms=END_MS)
    with engine.begin() as conn:
        conn.execute(insert(conversations), conversation_rows)
    written = 0
    for batch in batches:
        _copy_usage(engine, batch)
        written += len(batch)
        if written % 500_000 == 0 or written == size:
            print(f"seeded {written:,} rows in {time.perf_counter() - started:,.0f} s", file=sys.stderr)
    engine.dispose()
    engine = create_store_engine(url)  # builds the dropped indexes
    print(f"indexes built at {time.perf_counter() - started:,.0f} s", file=sys.stderr)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        rollups = (usage_hourly, usage_conversation_hourly, usage_per_conversation)
        for table in (usage_table, *rollups, conversations):
            conn.execute(text(f"VACUUM ANALYZE {table.name}"))
    print(f"vacuumed at {time.perf_counter() - started:,.0f} s", file=sys.stderr, flush=True)
    _check_rollups(engine)
    return engine


def _check_rollups(engine: Engine) -> None:
    """Each rollup holds the usage rows' requests and priced dollars per its key, no more, no less."""
    raw_key = {"hour": "created_ms / 3600000", "conversation_id": "coalesce(conversation_id, '')"}
    for table in (usage_hourly, usage_conversation_hourly, usage_per_conversation):
        keys = [column.name for column in table.primary_key.columns]
        grouped = (
            f"SELECT {', '.join(f'{raw_key.get(k, k)} AS {k}' for k in keys)}, count(*) AS requests, "
            "sum(CASE WHEN price_known THEN cost_total ELSE 0 END) AS cost_total FROM usage "
            f"GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}"
        )
        compared = (
            f"SELECT count(*), count(*) FILTER (WHERE raw.requests IS DISTINCT FROM kept.requests OR "
            "abs(raw.cost_total - kept.cost_total) > 1e-9 * greatest(1, raw.cost_total)) "
            f"FROM ({grouped}) AS raw FULL JOIN {table.name} AS kept USING ({', '.join(keys)})"
        )
        with engine.connect() as conn:
            keys_seen, differing = conn.execute(text(compared)).one()
        if differing:
            raise SystemExit(f"{table.name}: {differing:,} of {keys_seen:,} keys differ from the usage rows")
        print(f"{table.name}: {keys_seen:,} keys, each equal to the usage rows' sums", file=sys.stderr)


def _copy_usage(engine: Engine, rows: list[dict[str, Any]]) -> None:
    """One COPY of `rows` into usage, in a transaction of its own."""
    with engine.begin() as conn:
        driver = conn.connection.driver_connection
        assert driver is not None  # an open connection's psycopg connection, for COPY
        cursor = driver.cursor()
        with cursor.copy(f"COPY usage ({', '.join(rows[0])}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(tuple(row.values()))


if __name__ == "__main__":
    main()
