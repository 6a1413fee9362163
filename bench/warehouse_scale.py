"""Figure 3: the warehouse at one and at five years of daily history (~4 M rows).

Two warehouses are generated (``bench.synthetic_history``), both opened with
``warehouse.connection.connect_writer`` so they carry the product's schema and views. Each
measurement alternates between them, so the five-year figure and its one-year baseline see the
same machine load. Queries are timed until their rows are in a pandas frame (as
``warehouse.queries`` reads them), after one warm-up run.

Appending a day: one new snapshot per provider, written through
``warehouse.writes.replace_snapshot_partition`` (what ``gpuprice run`` does), timed over the
six providers, then removed again (untimed) so every repetition appends to the same history.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from bench.figures import Bound, Figure
from bench.sql_files import bench_sql, standard_query_params
from bench.synthetic_history import DEFAULT_END, DEFAULT_OFFERS_PER_PROVIDER, generate_history
from gpuprice.scrapers.offer import PROVIDERS, Offer
from gpuprice.warehouse import partition_fingerprints, publish
from gpuprice.warehouse.connection import WAREHOUSE_MEMORY_LIMIT, connect_reader, connect_writer
from gpuprice.warehouse.publish import publish_analytics_copy
from gpuprice.warehouse.tables import SNAPSHOT_COLUMNS
from gpuprice.warehouse.writes import replace_snapshot_partition

QUERY_TARGET_MS = 100.0
APPEND_RATIO_TARGET = 1.5
PUBLISH_TARGET_S = 10.0  # append + publish one day (issue 38)
PUBLISH_DAYS = 3  # days appended and published in a row (the median is the figure)
PEAK_RSS_TARGET_MB = 2000.0

# The snapshot columns an offer carries (both from their one definition).
_OFFER_FIELDS = tuple(c for c in SNAPSHOT_COLUMNS if c in Offer.model_fields)


def one_day_of_offers(con: duckdb.DuckDBPyConnection, day: dt.date) -> dict[str, list[Offer]]:
    """The snapshot of ``day`` as validated offers per provider (what parsers hand the writer)."""
    result = con.execute(bench_sql("day_snapshot"), {"day": day})
    names = [d[0] for d in result.description or ()]
    offers: dict[str, list[Offer]] = {}
    for row in result.fetchall():
        values = dict(zip(names, row))
        offer = Offer(
            **{
                k: (float(values[k]) if k.startswith("usd_") and values[k] is not None else values[k])
                for k in _OFFER_FIELDS
            }
        )
        offers.setdefault(offer.provider, []).append(offer)
    return offers


def append_day(con: duckdb.DuckDBPyConnection, day: dt.date, offers: dict[str, list[Offer]]) -> int:
    """Write one day for every provider, as the daily run does."""
    written = 0
    for provider, provider_offers in offers.items():
        written += replace_snapshot_partition(
            con,
            provider=provider,
            snapshot_date=day,
            offers=provider_offers,
            source="archive",
            raw_sha256="0" * 64,
            parser_version=f"{provider}/bench",
        )
    return written


def _remove_day(con: duckdb.DuckDBPyConnection, day: dt.date) -> None:
    con.execute(bench_sql("remove_day_snapshots"), {"day": day})
    con.execute(bench_sql("remove_day_runs"), {"day": day})
    partition_fingerprints.refresh(
        con, [(provider, day) for provider in PROVIDERS]
    )  # removed here, not by a write


class _Warehouse:
    """One generated warehouse and how long it took to build."""

    def __init__(self, path: Path, days: int, end: dt.date, offers_per_provider: int) -> None:
        self.path = path
        self.con = connect_writer(path)
        self.con.execute(bench_sql("quiet"))
        start = time.perf_counter()
        self.rows = generate_history(self.con, days=days, end=end, offers_per_provider=offers_per_provider)
        self.generate_s = time.perf_counter() - start
        self.days = days
        # Analysts query the published copy (price_history precomputed there), as in production.
        start = time.perf_counter()
        copy = publish_analytics_copy(self.con, path, path.with_suffix(".analytics.duckdb"))
        self.publish_s = time.perf_counter() - start
        self.reader = connect_reader(copy)


def _time_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _paired_medians(
    short: _Warehouse, long: _Warehouse, run: Callable[[_Warehouse], object], repeats: int
) -> tuple[float, float]:
    """Median ms on each warehouse, alternating between them (one warm-up each first)."""
    run(short)
    run(long)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        times[0].append(_time_ms(lambda: run(short)))
        times[1].append(_time_ms(lambda: run(long)))
    return statistics.median(times[0]), statistics.median(times[1])


def measure(
    repeats: int = 7,
    *,
    short_days: int = 365,
    long_days: int = 1826,
    offers_per_provider: int = DEFAULT_OFFERS_PER_PROVIDER,
    end: dt.date = DEFAULT_END,
    workdir: Path | None = None,
) -> list[Figure]:
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    with tempfile.TemporaryDirectory(prefix="gpuprice-bench-", dir=workdir) as tmp:
        short = _Warehouse(Path(tmp) / "one_year.duckdb", short_days, end, offers_per_provider)
        long = _Warehouse(Path(tmp) / "five_years.duckdb", long_days, end, offers_per_provider)
        try:
            return _measure(short, long, repeats, end)
        finally:
            for w in (short, long):
                w.reader.close()
                w.con.close()


def _measure(short: _Warehouse, long: _Warehouse, repeats: int, end: dt.date) -> list[Figure]:
    queries = {
        name: (bench_sql(f"standard/{name}"), params) for name, params in standard_query_params(end).items()
    }
    scale = {
        "rows": {"short": short.rows, "long": long.rows},
        "days": {"short": short.days, "long": long.days},
        "generate_s": {"short": round(short.generate_s, 2), "long": round(long.generate_s, 2)},
        "publish_s": {"short": round(short.publish_s, 2), "long": round(long.publish_s, 2)},
        "repeats": repeats,
    }
    figures = []
    for name, (sql, params) in queries.items():
        result_rows = {
            label: len(w.reader.execute(sql, params).fetchdf())
            for label, w in (("short", short), ("long", long))
        }
        short_ms, long_ms = _paired_medians(
            short, long, lambda w, sql=sql, params=params: w.reader.execute(sql, params).fetchdf(), repeats
        )
        figures.append(
            Figure(
                name=f"warehouse.{name}_ms",
                value=long_ms,
                unit="ms",
                baseline=f"same query at {short.days} days",
                baseline_value=short_ms,
                ratio_meaning=f"{long.days}-day / {short.days}-day time",
                target=(Bound(on="value", op="<=", limit=QUERY_TARGET_MS),),
                details={**scale, "sql": sql, "params": [str(p) for p in params], "result_rows": result_rows},
            )
        )

    new_day = end + dt.timedelta(days=1)
    offers = one_day_of_offers(long.con, end)
    appended = sum(len(v) for v in offers.values())

    times: tuple[list[float], list[float]] = ([], [])
    for repetition in range(repeats + 1):  # the first round warms up and is not counted
        for slot, w in enumerate((short, long)):
            elapsed = _time_ms(lambda w=w: append_day(w.con, new_day, offers))
            _remove_day(w.con, new_day)
            if repetition:
                times[slot].append(elapsed)
    figures.append(
        Figure(
            name="warehouse.append_one_day_ms",
            value=statistics.median(times[1]),
            unit="ms",
            baseline=f"same append at {short.days} days",
            baseline_value=statistics.median(times[0]),
            ratio_meaning=f"{long.days}-day / {short.days}-day time",
            target=(Bound(on="ratio", op="<=", limit=APPEND_RATIO_TARGET),),
            details={**scale, "offers_appended": appended, "providers": len(offers)},
        )
    )
    # Append one day, then publish the analysts' copy: three days in a row on each history, each
    # an update of the copy published the day before (``publish_delta``), then removed again.
    publish_s: dict[str, list[float]] = {"short": [], "long": []}
    deltas: dict[str, list[dict[str, int]]] = {"short": [], "long": []}
    for step in range(PUBLISH_DAYS):
        day = new_day + dt.timedelta(days=step)
        for label, w in (("short", short), ("long", long)):
            start = time.perf_counter()
            append_day(w.con, day, offers)
            publish_analytics_copy(w.con, w.path, w.path.with_suffix(".analytics.duckdb"))
            publish_s[label].append(time.perf_counter() - start)
            delta = publish.last_delta
            deltas[label].append(dataclasses.asdict(delta) if delta is not None else {"built_whole": 1})
    for w in (short, long):
        for step in range(PUBLISH_DAYS):
            _remove_day(w.con, new_day + dt.timedelta(days=step))
    figures.append(
        Figure(
            name="warehouse.append_and_publish_one_day_s",
            value=statistics.median(publish_s["long"]),
            unit="s",
            baseline=f"same at {short.days} days",
            baseline_value=statistics.median(publish_s["short"]),
            ratio_meaning=f"{long.days}-day / {short.days}-day time",
            target=(
                Bound(on="value", op="<=", limit=PUBLISH_TARGET_S),
                Bound(on="ratio", op="<=", limit=APPEND_RATIO_TARGET),
            ),
            details={
                **scale,
                "offers_appended": appended,
                "days": PUBLISH_DAYS,
                "seconds": {k: [round(v, 2) for v in vs] for k, vs in publish_s.items()},
                "copy_mb": {
                    label: round(w.path.with_suffix(".analytics.duckdb").stat().st_size / 1e6, 1)
                    for label, w in (("short", short), ("long", long))
                },
                "delta": deltas,
            },
        )
    )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures.append(
        Figure(
            name="warehouse.peak_rss_mb",
            value=peak_mb,
            unit="MB",
            baseline="the warehouse memory cap (per connection)",
            baseline_value=float(WAREHOUSE_MEMORY_LIMIT.removesuffix("MB")),
            ratio_meaning="peak RSS of the whole bench process / one connection's cap",
            target=(Bound(on="value", op="<=", limit=PEAK_RSS_TARGET_MB),),
            details={**scale, "memory_limit": WAREHOUSE_MEMORY_LIMIT},
        )
    )
    return figures
