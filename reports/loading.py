"""Read one ISO week's report data from the warehouse (or its published read-only copy).

Week semantics: the report for week W treats, per provider, the newest snapshot dated at or
before W's Sunday as "current"; "this week's changes" are price changes dated inside W.
Scraped or replayed snapshots (source ``scrape``/``archive``) win over imported public reports,
which only count as current for a provider that has nothing else by then.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

from gpuprice.errors import BadInput
from gpuprice.reports.data import (
    GpuCheapest,
    GpuPriceHistory,
    PriceChange,
    PricedOffer,
    PriceSeries,
    ProviderFreshness,
    RankedOffer,
    SourceSnapshot,
)
from gpuprice.reports.formatting import series_label
from gpuprice.reports.memory_verdict import GpuCapacity, MemoryFitRow
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import PROVIDERS

# The one staleness rule (warehouse/staleness.py), measured from the date of each page.
from gpuprice.warehouse.queries import provider_freshness_as_of
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, STALE_AFTER_DAYS, age_days, is_current, is_stale

__all__ = ["STALE_AFTER_DAYS"]

HISTORY_WEEKS = 13  # a quarter of daily prices: long enough for a trend, short enough to see a week


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | dict[str, Any] = ()
) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params if isinstance(params, dict) else list(params))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    row = con.execute(sql, list(params)).fetchone()
    return row[0] if row else None


# ---------------------------------------------------------------------------- which week


def newest_snapshot_date(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    return _scalar(con, sql("reports/newest_snapshot_date"))


def default_week(con: duckdb.DuckDBPyConnection) -> IsoWeek:
    """The ISO week of the newest snapshot in the warehouse."""
    newest = newest_snapshot_date(con)
    if newest is None:
        raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
    return IsoWeek.of(newest)


def as_of_date(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> dt.date:
    """Newest snapshot date at or before the week's end; BadInput if the week predates all data."""
    found = _scalar(con, sql("reports/as_of_date"), [week.end])
    if found is None:
        bounds = con.execute(sql("reports/covered_range")).fetchone()
        first, last = bounds if bounds else (None, None)
        if first is None:
            raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
        raise BadInput(
            f"no price snapshots at or before week {week}; the warehouse covers "
            f"{IsoWeek.of(first)} ({first}) to {IsoWeek.of(last)} ({last})"
        )
    return found


# ---------------------------------------------------------------------------- current prices

# Per provider, the snapshot that counts as current at the week's end (scraped beats imported).
_CURRENT_SNAPSHOTS = sql("reports/current_snapshots")

# Offers of those snapshots with the price in force at the week's end: a scheduled price
# ("Effective October 1") replaces the plain one once its date has come, and not before.
_CURRENT_OFFERS = sql("reports/current_offers")


def current_offers(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[dict[str, Any]]:
    return _rows(con, _CURRENT_OFFERS, {"end": week.end})


def split_by_age(
    offers: Iterable[dict[str, Any]], as_of: dt.date
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(current, older): the one rule of warehouse/staleness.py, each price's page against ``as_of``."""
    current: list[dict[str, Any]] = []
    older: list[dict[str, Any]] = []
    for offer in offers:
        seen = _date(offer.get("observed_on")) or _date(offer.get("snapshot_date"))
        (current if is_current(seen, as_of) else older).append(offer)
    return current, older


def cheapest_by_gpu(offers: Iterable[dict[str, Any]]) -> list[GpuCheapest]:
    """Per known GPU type, the cheapest current list price of each tier; dearest on-demand GPU first.

    Unknown GPUs are left out: "unknown" is not one GPU type (the overview counts them instead);
    so are floors ("from $x") and Runpod's cheapest-machine-now prices: a headline is a list price.
    """
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for offer in offers:
        if offer["gpu"] != "unknown" and offer.get("price_basis", "list") == "list":
            grouped[offer["gpu"]][offer["tier"]].append(offer)
    result = []
    for gpu, tiers in grouped.items():
        best: dict[str, PricedOffer] = {}
        for tier, rows in tiers.items():
            row = min(rows, key=lambda r: (r["usd_per_gpu_hour"], r["provider"], r["sku"], r["gpu_count"]))
            best[tier] = PricedOffer(
                **{k: v for k, v in row.items() if k in PricedOffer.model_fields},
                offers_for_gpu=len(rows),
                providers_for_gpu=len({r["provider"] for r in rows}),
            )
        providers = {r["provider"] for rows in tiers.values() for r in rows}
        result.append(
            GpuCheapest(
                gpu=gpu,
                providers=len(providers),
                **{t: best.get(t) for t in ("on_demand", "spot", "reserved")},
            )
        )
    return sorted(result, key=_cheapest_order)


def _cheapest_order(item: GpuCheapest) -> tuple:
    anchor = item.on_demand or item.spot or item.reserved
    return (-(anchor.usd_per_gpu_hour if anchor else 0.0), item.gpu)


def sources_used(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[SourceSnapshot]:
    """Per provider: the current snapshot, the snapshot dates inside the week, and their sources."""
    current = {r["provider"]: r["snapshot_date"] for r in _rows(con, _CURRENT_SNAPSHOTS, {"end": week.end})}
    earliest = min([week.start, *current.values()])
    rows = _rows(
        con,
        sql("reports/sources_used"),
        [earliest, week.end],
    )
    rows = [
        r
        for r in rows
        if week.contains(r["snapshot_date"]) or current.get(r["provider"]) == r["snapshot_date"]
    ]
    by_provider: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_provider[row["provider"]].append(row)
    result = []
    for provider in sorted(set(by_provider) | set(current), key=_provider_order):
        days = by_provider.get(provider, [])
        current_day = current.get(provider)
        result.append(
            SourceSnapshot(
                provider=provider,
                current_snapshot_date=current_day,
                week_snapshot_dates=[d["snapshot_date"] for d in days if week.contains(d["snapshot_date"])],
                sources=sorted({s for d in days for s in d["sources"]}),
                offers=sum(d["offers"] for d in days if d["snapshot_date"] == current_day),
            )
        )
    return result


def _date(value: Any) -> dt.date | None:
    """A date from a query cell (pandas gives Timestamps and NaT)."""
    if value is None or value != value:  # NaT and NaN are not equal to themselves
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def _provider_order(provider: str) -> tuple[int, str]:
    return (PROVIDERS.index(provider) if provider in PROVIDERS else len(PROVIDERS), provider)


# ---------------------------------------------------------------------------- freshness


def freshness(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[ProviderFreshness]:
    """Per provider, as of the week's end: last success, last attempt, and whether data is stale.

    Runs come from provider_runs; a provider whose prices arrived without a recorded run (an
    imported warehouse) counts its newest scraped snapshot as its last success.
    """
    reference_day = _scalar(con, sql("reports/reference_day"), [week.end])
    runs = {
        r["provider"]: r for r in provider_freshness_as_of(con, reference_day or week.end).to_dict("records")
    }
    scraped = {
        r["provider"]: r
        for r in _rows(
            con,
            sql("reports/scraped_freshness"),
            [week.end],
        )
    }
    reference = reference_day
    result = []
    for provider in sorted(set(PROVIDERS) | set(runs) | set(scraped), key=_provider_order):
        run = runs.get(provider, {})
        snap = scraped.get(provider, {})
        last_success = max(
            (d for d in (_date(run.get("last_success_date")), snap.get("last_date")) if d is not None),
            default=None,
        )
        last_attempt = max(
            (d for d in (_date(run.get("last_attempt_date")), snap.get("last_date")) if d is not None),
            default=None,
        )
        observed = max(
            (d for d in (run.get("last_observed_on"), snap.get("last_observed_on")) if d is not None),
            default=None,
        )
        status = run.get("last_status") or ("success" if snap else None)
        if (
            run.get("last_attempt_date") is not None
            and snap.get("last_date")
            and snap["last_date"] > _date(run["last_attempt_date"])
        ):
            status = "success"  # a later snapshot without a run record (imported) still succeeded
        behind = age_days(observed, reference) if reference else None
        stale = is_stale(observed, reference or week.end, last_status=status)
        result.append(
            ProviderFreshness(
                provider=provider,
                last_success_date=last_success,
                last_attempt_date=last_attempt,
                last_status=status,
                last_error=run.get("last_error") if status != "success" else None,
                offers=snap.get("offers"),
                stale=stale,
                days_since_success=behind,
                parse_strategy=run.get("parse_strategy"),
                rejected=run.get("rejected"),
            )
        )
    return result


# ---------------------------------------------------------------------------- changes


def has_scraped_data(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> bool:
    """Whether any scraped (or replayed) snapshot is dated at or before the week's end."""
    first = first_scraped_date(con)
    return first is not None and first <= week.end


def first_scraped_date(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    return _date(_scalar(con, sql("reports/first_scraped_date")))


# ---------------------------------------------------------------------------- workloads


def workload_names(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[str]:
    """Workloads with model output (rankings up to the week's end or a memory-fit sweep)."""
    rows = con.execute(
        sql("reports/workload_names"),
        [week.end],
    ).fetchall()
    return sorted(r[0] for r in rows)


def rankings_date(con: duckdb.DuckDBPyConnection, workload: str, week: IsoWeek) -> dt.date | None:
    return _scalar(
        con,
        sql("reports/rankings_date"),
        [workload, week.end],
    )


def _json_object(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {"terms": value}
    return value if isinstance(value, dict) else {"terms": value}


def rankings(con: duckdb.DuckDBPyConnection, workload: str, snapshot_date: dt.date) -> list[RankedOffer]:
    rows = _rows(
        con,
        sql("reports/rankings"),
        [workload, snapshot_date],
    )
    return [
        RankedOffer(
            **{**row, "cost_terms": _json_object(row["cost_terms"]), "warnings": list(row["warnings"] or [])}
        )
        for row in rows
    ]


MemoryFit = tuple[list[MemoryFitRow], dt.datetime | None]


def memory_fits(con: duckdb.DuckDBPyConnection, workloads: Iterable[str]) -> dict[str, MemoryFit]:
    """Each workload's memory-fit sweep (newest row per configuration) and when it was computed,
    read in one query for all of them (a workload without a sweep gets no rows)."""
    wanted = sorted(set(workloads))
    grouped: dict[str, list[MemoryFitRow]] = {name: [] for name in wanted}
    computed: dict[str, dt.datetime] = {}
    if wanted:
        for row in _rows(con, sql("reports/memory_fit"), [wanted]):
            grouped[row.pop("workload")].append(MemoryFitRow(**row))
        computed = dict(con.execute(sql("reports/memory_fit_computed"), [wanted]).fetchall())
    return {name: (rows, computed.get(name)) for name, rows in grouped.items()}


def gpu_capacities(con: duckdb.DuckDBPyConnection, gpus: Iterable[str]) -> list[GpuCapacity]:
    wanted = sorted(set(gpus))
    if not wanted:
        return []
    rows = _rows(
        con,
        sql("reports/gpu_capacities"),
        [wanted],
    )
    return [GpuCapacity(**r) for r in rows]


# ---------------------------------------------------------------------------- price history


def price_history(
    con: duckdb.DuckDBPyConnection, gpus: Sequence[str], week: IsoWeek, changes: Sequence[PriceChange]
) -> list[GpuPriceHistory]:
    """Daily cheapest current on-demand price per GPU type and provider over the weeks up to ``week``.

    The daily series of `gpuprice history` (last observation carried forward while its page is at
    most MAX_PRICE_AGE_DAYS old): a day without a current price is a gap in the line (a NaN
    point), never a price carried on from an old page.
    """
    if not gpus:
        return []
    start = week.end - dt.timedelta(weeks=HISTORY_WEEKS) + dt.timedelta(days=1)
    rows = _rows(
        con,
        sql("reports/price_history"),
        {"gpus": list(gpus), "start": start, "end": week.end, "max_age": MAX_PRICE_AGE_DAYS},
    )
    points: dict[tuple[str, str, bool, str | None, bool], list[tuple[dt.date, float]]] = defaultdict(list)
    for row in rows:
        line = points[(row["gpu"], row["provider"], row["community"], row["price_basis"], row["catalog"])]
        day = _date(row["snapshot_date"])
        assert day is not None
        if line and (day - line[-1][0]).days > 1:  # no current price in between: break the line
            line.append((line[-1][0] + dt.timedelta(days=1), float("nan")))
        line.append((day, float(row["price"])))
    result = []
    for gpu in gpus:
        series = [
            PriceSeries(
                gpu=gpu,
                provider=provider,
                label=series_label(provider, community, basis, catalog=catalog),
                points=pts,
            )
            for (g, provider, community, basis, catalog), pts in sorted(
                points.items(), key=lambda kv: _series_sort(kv[0])
            )
            if g == gpu
        ]
        week_changes_for_gpu = [c for c in changes if c.gpu == gpu]
        if series or week_changes_for_gpu:
            result.append(GpuPriceHistory(gpu=gpu, series=series, changes=week_changes_for_gpu))
    return result


def _series_sort(key: tuple[str, str, bool, str | None, bool]) -> tuple:
    gpu, provider, community, basis, catalog = key
    return (gpu, _provider_order(provider), community, basis or "", catalog)
