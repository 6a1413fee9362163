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
    GpuCapacity,
    GpuCheapest,
    GpuPriceHistory,
    MemoryFitRow,
    PriceChange,
    PricedOffer,
    PriceSeries,
    ProviderFreshness,
    RankedOffer,
    SourceSnapshot,
)
from gpuprice.reports.weeks import IsoWeek
from gpuprice.scrapers.offer import PROVIDERS
from gpuprice.sources import SCRAPED_SOURCES, sql_values

# Same rule as analytics.provider_freshness: stale when the newest successful snapshot is more
# than STALE_AFTER_DAYS behind the newest run.
from gpuprice.warehouse.views import STALE_AFTER_DAYS

_SCRAPED = sql_values(SCRAPED_SOURCES)
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
    return _scalar(con, "SELECT max(snapshot_date) FROM price_snapshots")


def default_week(con: duckdb.DuckDBPyConnection) -> IsoWeek:
    """The ISO week of the newest snapshot in the warehouse."""
    newest = newest_snapshot_date(con)
    if newest is None:
        raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
    return IsoWeek.of(newest)


def as_of_date(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> dt.date:
    """Newest snapshot date at or before the week's end; BadInput if the week predates all data."""
    found = _scalar(
        con, "SELECT max(snapshot_date) FROM price_snapshots WHERE snapshot_date <= ?", [week.end]
    )
    if found is None:
        first, last = con.execute(
            "SELECT min(snapshot_date), max(snapshot_date) FROM price_snapshots"
        ).fetchone()
        if first is None:
            raise BadInput("the warehouse holds no price snapshots yet; run `gpuprice run` first")
        raise BadInput(
            f"no price snapshots at or before week {week}; the warehouse covers "
            f"{IsoWeek.of(first)} ({first}) to {IsoWeek.of(last)} ({last})"
        )
    return found


# ---------------------------------------------------------------------------- current prices

# Per provider, the snapshot that counts as current at the week's end (scraped beats imported).
_CURRENT_SNAPSHOTS = f"""
    SELECT provider, snapshot_date, scraped FROM (
        SELECT provider, snapshot_date, scraped,
            row_number() OVER (PARTITION BY provider ORDER BY scraped DESC, snapshot_date DESC) AS pick
        FROM (
            SELECT DISTINCT provider, snapshot_date, source IN {_SCRAPED} AS scraped
            FROM price_snapshots WHERE snapshot_date <= $end
        )
    ) WHERE pick = 1
"""

# Offers of those snapshots with the price in force at the week's end: a scheduled price
# ("Effective October 1") replaces the plain one once its date has come, and not before.
_CURRENT_OFFERS = f"""
    WITH current AS ({_CURRENT_SNAPSHOTS})
    SELECT p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier, p.community,
        p.commitment_months, p.region, p.price_basis, CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
        p.source
    FROM price_snapshots p JOIN current c USING (provider, snapshot_date)
    WHERE (p.source IN {_SCRAPED}) = c.scraped  -- a public report dated that day is history only
      AND coalesce(p.effective_from, p.snapshot_date) <= $end
    QUALIFY row_number() OVER (
        PARTITION BY p.provider, p.sku, p.gpu_count, p.tier, p.community, p.commitment_months, p.region, p.price_basis
        ORDER BY coalesce(p.effective_from, p.snapshot_date) DESC
    ) = 1
"""


def current_offers(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[dict[str, Any]]:
    return _rows(con, _CURRENT_OFFERS, {"end": week.end})


def cheapest_by_gpu(offers: Iterable[dict[str, Any]]) -> list[GpuCheapest]:
    """Per known GPU type, the cheapest current offer of each tier; dearest on-demand GPU first.

    Unknown GPUs are left out: "unknown" is not one GPU type (the overview counts them instead).
    """
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for offer in offers:
        if offer["gpu"] != "unknown":
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
        """
        SELECT provider, snapshot_date, list(DISTINCT source ORDER BY source) AS sources, count(*) AS offers
        FROM price_snapshots WHERE snapshot_date BETWEEN ? AND ?
        GROUP BY provider, snapshot_date ORDER BY provider, snapshot_date
        """,
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


def _provider_order(provider: str) -> tuple[int, str]:
    return (PROVIDERS.index(provider) if provider in PROVIDERS else len(PROVIDERS), provider)


# ---------------------------------------------------------------------------- freshness


def freshness(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[ProviderFreshness]:
    """Per provider, as of the week's end: last success, last attempt, and whether data is stale.

    Runs come from provider_runs; a provider whose prices arrived without a recorded run (an
    imported warehouse) counts its newest scraped snapshot as its last success.
    """
    runs = {
        r["provider"]: r
        for r in _rows(
            con,
            """
            SELECT provider,
                max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
                max(snapshot_date) AS last_attempt_date,
                arg_max(status, snapshot_date) AS last_status,
                arg_max(error, snapshot_date) AS last_error,
                arg_max(parse_strategy, snapshot_date) AS parse_strategy,
                arg_max(rejected, snapshot_date) AS rejected
            FROM provider_runs WHERE snapshot_date <= ? GROUP BY provider
            """,
            [week.end],
        )
    }
    scraped = {
        r["provider"]: r
        for r in _rows(
            con,
            f"""
            SELECT provider, max(snapshot_date) AS last_date,
                count(*) FILTER (WHERE snapshot_date = last_date_inner) AS offers
            FROM (
                SELECT provider, snapshot_date,
                    max(snapshot_date) OVER (PARTITION BY provider) AS last_date_inner
                FROM price_snapshots WHERE snapshot_date <= ? AND source IN {_SCRAPED}
            ) GROUP BY provider
            """,
            [week.end],
        )
    }
    reference_dates = [d for r in runs.values() for d in (r["last_attempt_date"],) if d] + [
        r["last_date"] for r in scraped.values()
    ]
    reference = max(reference_dates, default=None)
    result = []
    for provider in sorted(set(PROVIDERS) | set(runs) | set(scraped), key=_provider_order):
        run = runs.get(provider, {})
        snap = scraped.get(provider, {})
        last_success = max(
            (d for d in (run.get("last_success_date"), snap.get("last_date")) if d is not None), default=None
        )
        last_attempt = max(
            (d for d in (run.get("last_attempt_date"), snap.get("last_date")) if d is not None), default=None
        )
        status = run.get("last_status") or ("success" if snap else None)
        if (
            run.get("last_attempt_date")
            and snap.get("last_date")
            and snap["last_date"] > run["last_attempt_date"]
        ):
            status = "success"  # a later snapshot without a run record (imported) still succeeded
        behind = (reference - last_success).days if (reference and last_success) else None
        stale = (
            last_success is None or status != "success" or (behind is not None and behind > STALE_AFTER_DAYS)
        )
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


def week_changes(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[PriceChange]:
    """Price changes dated inside the week, biggest relative move first."""
    rows = _rows(
        con,
        """
        SELECT snapshot_date, previous_snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
            commitment_months, region, price_basis,
            CAST(old_usd_per_gpu_hour AS DOUBLE) AS old_usd_per_gpu_hour,
            CAST(new_usd_per_gpu_hour AS DOUBLE) AS new_usd_per_gpu_hour
        FROM analytics.price_changes
        WHERE snapshot_date BETWEEN ? AND ? AND old_usd_per_gpu_hour <> new_usd_per_gpu_hour
        """,
        [week.start, week.end],
    )
    changes = [PriceChange(**row) for row in rows]
    changes.sort(key=lambda c: (-abs(c.change), c.provider, c.gpu, c.sku))
    return changes


# ---------------------------------------------------------------------------- workloads


def workload_names(con: duckdb.DuckDBPyConnection, week: IsoWeek) -> list[str]:
    """Workloads with model output (rankings up to the week's end or a memory-fit sweep)."""
    rows = con.execute(
        """
        SELECT DISTINCT workload FROM workload_rankings WHERE snapshot_date <= ?
        UNION SELECT DISTINCT workload FROM memory_fit
        """,
        [week.end],
    ).fetchall()
    return sorted(r[0] for r in rows)


def rankings_date(con: duckdb.DuckDBPyConnection, workload: str, week: IsoWeek) -> dt.date | None:
    return _scalar(
        con,
        "SELECT max(snapshot_date) FROM workload_rankings WHERE workload = ? AND snapshot_date <= ?",
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
        """
        SELECT rank, provider, sku, gpu, gpu_count, nodes, tier, community, commitment_months, price_basis,
            usd_per_gpu_hour, sharding, per_gpu_gb, tokens_per_sec_per_gpu, mfu, hours, run_cost_usd,
            total_cost_usd, cost_per_checkpoint_usd, CAST(cost_terms AS VARCHAR) AS cost_terms, warnings,
            price_snapshot_date, observed_on
        FROM workload_rankings WHERE workload = ? AND snapshot_date = ?
        ORDER BY rank, cost_per_checkpoint_usd
        """,
        [workload, snapshot_date],
    )
    return [
        RankedOffer(
            **{**row, "cost_terms": _json_object(row["cost_terms"]), "warnings": list(row["warnings"] or [])}
        )
        for row in rows
    ]


def memory_fit(
    con: duckdb.DuckDBPyConnection, workload: str
) -> tuple[list[MemoryFitRow], dt.datetime | None]:
    """The workload's memory-fit sweep (newest row per configuration) and when it was computed."""
    rows = _rows(
        con,
        """
        SELECT gpu, gpu_count, sharding, per_gpu_gb, planning_gb, gpu_memory_gb, fits, headroom_gb,
            least_complex, computed_at
        FROM memory_fit WHERE workload = ?
        QUALIFY row_number() OVER (PARTITION BY gpu, gpu_count, sharding ORDER BY computed_at DESC) = 1
        ORDER BY gpu_memory_gb, gpu, gpu_count, sharding
        """,
        [workload],
    )
    computed = max((r["computed_at"] for r in rows), default=None)
    return [MemoryFitRow(**{k: v for k, v in r.items() if k != "computed_at"}) for r in rows], computed


def gpu_capacities(con: duckdb.DuckDBPyConnection, gpus: Iterable[str]) -> list[GpuCapacity]:
    wanted = sorted(set(gpus))
    if not wanted:
        return []
    rows = _rows(
        con,
        "SELECT slug AS gpu, memory_gb FROM dim_gpu WHERE list_contains(?, slug) ORDER BY memory_gb, slug",
        [wanted],
    )
    return [GpuCapacity(**r) for r in rows]


# ---------------------------------------------------------------------------- price history


def _series_label(provider: str, community: bool, price_basis: str | None) -> str:
    label = provider
    if community:
        label += " community"
    if price_basis == "lowest_now":
        label += " (lowest now)"
    return label


def price_history(
    con: duckdb.DuckDBPyConnection, gpus: Sequence[str], week: IsoWeek, changes: Sequence[PriceChange]
) -> list[GpuPriceHistory]:
    """Daily cheapest on-demand price per GPU type and provider over the weeks up to ``week``.

    Read from the snapshots themselves (one point per snapshot date) so a chart shows exactly
    what was observed; the price in force before the window starts anchors each line's left end.
    """
    if not gpus:
        return []
    start = week.end - dt.timedelta(weeks=HISTORY_WEEKS) + dt.timedelta(days=1)
    rows = _rows(
        con,
        """
        WITH daily AS (
            SELECT gpu, provider, community, price_basis, snapshot_date,
                min(CAST(usd_per_gpu_hour AS DOUBLE)) AS price
            FROM price_snapshots
            WHERE list_contains(?, gpu) AND tier = 'on_demand' AND snapshot_date <= ?
              AND coalesce(effective_from, snapshot_date) <= snapshot_date
            GROUP BY ALL
        )
        SELECT * FROM daily
        WHERE snapshot_date >= ?
           OR snapshot_date = (SELECT max(d.snapshot_date) FROM daily d
                               WHERE d.gpu = daily.gpu AND d.provider = daily.provider
                                 AND d.community = daily.community
                                 AND d.price_basis IS NOT DISTINCT FROM daily.price_basis
                                 AND d.snapshot_date < ?)
        ORDER BY gpu, provider, community, price_basis, snapshot_date
        """,
        [list(gpus), week.end, start, start],
    )
    points: dict[tuple[str, str, bool, str | None], list[tuple[dt.date, float]]] = defaultdict(list)
    for row in rows:
        day = max(row["snapshot_date"], start)
        points[(row["gpu"], row["provider"], row["community"], row["price_basis"])].append(
            (day, row["price"])
        )
    result = []
    for gpu in gpus:
        series = [
            PriceSeries(
                gpu=gpu, provider=provider, label=_series_label(provider, community, basis), points=pts
            )
            for (g, provider, community, basis), pts in sorted(
                points.items(), key=lambda kv: _series_sort(kv[0])
            )
            if g == gpu
        ]
        week_changes_for_gpu = [c for c in changes if c.gpu == gpu]
        if series or week_changes_for_gpu:
            result.append(GpuPriceHistory(gpu=gpu, series=series, changes=week_changes_for_gpu))
    return result


def _series_sort(key: tuple[str, str, bool, str | None]) -> tuple:
    gpu, provider, community, basis = key
    return (gpu, _provider_order(provider), community, basis or "")
