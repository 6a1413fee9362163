"""Read queries shared by assets and commands. User values are always bound parameters."""

from __future__ import annotations

import bisect
import datetime as dt
from pathlib import Path

import duckdb
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import connect_reader
from gpuprice.warehouse.sql_files import sql
from gpuprice.warehouse.staleness import MAX_PRICE_AGE_DAYS, age_days, is_current, is_stale

# What rankings and headlines use unless the user asks for more (``--price-basis``).
DEFAULT_PRICE_BASES: tuple[str, ...] = ("list",)


def open_analytics(path: Path) -> duckdb.DuckDBPyConnection:
    """Read-only connection to the published analytics copy (a clear error when there is none)."""
    if not path.exists():
        raise BadInput(
            f"no published warehouse at {path}; run `gpuprice run` first (GPUPRICE_HOME={path.parent})"
        )
    return connect_reader(path)


def newest_snapshot_date(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The one notion of "now" for rank, report, history and freshness: the newest snapshot date."""
    row = con.execute(sql("queries/newest_snapshot_date")).fetchone()
    return row[0] if row else None


def offers_as_of(
    con: duckdb.DuckDBPyConnection, day: dt.date, price_bases: tuple[str, ...] | None = DEFAULT_PRICE_BASES
) -> pd.DataFrame:
    """Per provider, the offers of its newest snapshot at or before ``day`` whose rows are in
    force, as priced on ``day``, each offer once at its cheapest region (what ``rank`` and the
    rankings read).

    Which rows count is the rule of the best-offer views (``main.v_snapshots_in_force``): the
    product's own scrape wins its day, and imported prices (a cited public report, catalog history)
    count for a provider and date without a scrape, so a cited report dated after a provider's last
    scrape is ranked as the views show it. A scheduled price whose date has come
    (``effective_from <= day``) replaces the offer's current price; one still in the future is left
    out. Only ``price_bases`` are returned (None: every basis); rows keep ``observed_on``, the date
    of their page. A hyperscaler states one price per region and a job runs in one of them: of an
    offer's regions only the cheapest is returned (the first of equal ones by region, region-less
    first), the rule analytics.cheapest_region shows (warehouse/sql_files.py, REGION_PEERS and
    CHEAPEST_REGION_ORDER). The columns are the ranking's (queries/offers_as_of_range).
    """
    return offers_as_of_range(con, day, day, price_bases)[day]


def offers_as_of_range(
    con: duckdb.DuckDBPyConnection,
    first: dt.date,
    last: dt.date,
    price_bases: tuple[str, ...] | None = DEFAULT_PRICE_BASES,
) -> dict[dt.date, pd.DataFrame]:
    """``offers_as_of`` for every date from ``first`` to ``last`` in one query (a backfill's batch)."""
    bases = list(price_bases) if price_bases is not None else None
    start = con.execute(sql("queries/offers_as_of_start"), {"first": first, "last": last}).fetchone()
    frame = con.execute(
        sql("queries/offers_as_of_range"),
        {"first": first, "last": last, "bases": bases, "start": (start and start[0]) or first},
    ).fetchdf()
    if first == last:  # one date (rank, the bench): no grouping to do
        return {first: frame.drop(columns="_as_of")}
    days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
    empty = frame.iloc[0:0].drop(columns="_as_of")
    result = {day: empty for day in days}
    if not frame.empty:
        keys = pd.to_datetime(frame["_as_of"]).dt.date
        for day, rows in frame.groupby(keys, sort=False):
            result[day] = rows.drop(columns="_as_of").reset_index(drop=True)
    return result


def provider_freshness_as_of(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    """Per provider, as of ``day``: its newest success, the date of that page, the latest attempt.

    ``last_error`` is the latest attempt's error (NULL when it succeeded: an old failure never
    shows against a healthy provider); ``age_days`` and ``stale`` follow warehouse/staleness.py.
    """
    frame = con.execute(sql("queries/provider_freshness_as_of"), {"day": day}).fetchdf()
    observed = [None if pd.isna(v) else pd.Timestamp(v).date() for v in frame["last_observed_on"]]
    frame["last_observed_on"] = observed
    frame["age_days"] = [None if o is None else (day - o).days for o in observed]
    frame["stale"] = [
        is_stale(o, day, last_status=status) for o, status in zip(observed, frame["last_status"], strict=True)
    ]
    return frame


def stale_providers(con: duckdb.DuckDBPyConnection, day: dt.date) -> set[str]:
    """Providers stale on ``day`` by the one rule (warehouse/staleness.py), measured from observed_on."""
    frame = provider_freshness_as_of(con, day)
    return set(frame.loc[frame["stale"], "provider"])


def stale_providers_range(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date
) -> dict[dt.date, set[str]]:
    """``stale_providers`` for every date from ``first`` to ``last`` (one read of provider_runs).

    The same rule as provider_freshness_as_of: the newest successful observation up to each date
    (its page's observed_on) and the status of the latest attempt at or before it.
    """
    rows = con.execute(sql("queries/provider_runs_until"), {"last": last}).fetchall()
    # Per provider: run dates, their status and the newest successful observation up to each run.
    runs: dict[str, tuple[list[dt.date], list[str], list[dt.date | None]]] = {}
    for provider, snapshot_date, status, observed_on in rows:
        dates, statuses, newest_seen = runs.setdefault(provider, ([], [], []))
        previous = newest_seen[-1] if newest_seen else None
        if status == "success" and (previous is None or observed_on > previous):
            previous = observed_on
        dates.append(snapshot_date)
        statuses.append(status)
        newest_seen.append(previous)
    result: dict[dt.date, set[str]] = {}
    for n in range((last - first).days + 1):
        day = first + dt.timedelta(days=n)
        stale = set()
        for provider, (dates, statuses, newest_seen) in runs.items():
            upto = bisect.bisect_right(dates, day)
            if upto == 0:
                continue  # no run yet on that date: the provider is not known on that day
            if is_stale(newest_seen[upto - 1], day, last_status=statuses[upto - 1]):
                stale.add(provider)
        result[day] = stale
    return result


def price_history_series(
    con: duckdb.DuckDBPyConnection,
    gpu: str,
    tier: str,
    since: dt.date,
    until: dt.date,
    max_age_days: int = MAX_PRICE_AGE_DAYS,
) -> pd.DataFrame:
    """Per day and provider, the provider's cheapest in-force list price for the GPU (``gpuprice history``).

    Last observation carried forward (analytics.daily_prices), kept while its page is at most
    ``max_age_days`` old; ``cheapest`` marks the cheapest provider of each day (ties: provider name);
    ``source`` says where the point came from (scrape, archive, public_report, catalog_history).
    """
    return con.execute(
        sql("queries/price_history_series"),
        {"gpu": gpu, "tier": tier, "since": since, "until": until, "max_age_days": max_age_days},
    ).fetchdf()


def headline_offers(
    con: duckdb.DuckDBPyConnection, gpus: tuple[str, ...], day: dt.date | None = None
) -> list[tuple]:
    """Cheapest current on-demand list price of each GPU on ``day`` (default: the newest snapshot
    date): analytics.cheapest_by_gpu's row, so `run`, the view and `history` name the same offer."""
    return con.execute(sql("queries/headline_offers"), {"gpus": list(gpus), "day": day}).fetchall()


def offers_missing_from_catalog(
    con: duckdb.DuckDBPyConnection, day: dt.date, last: dt.date | None = None
) -> pd.DataFrame:
    """Offers of ``day`` (or of every date from ``day`` to ``last``) whose GPU is not in dim_gpu."""
    return con.execute(
        sql("queries/offers_missing_from_catalog"), {"first": day, "last": last or day}
    ).fetchdf()


def catalog_size(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(sql("queries/catalog_size")).fetchone()
    return int(row[0]) if row else 0


def offers_with_specs_summary(
    con: duckdb.DuckDBPyConnection, first: dt.date, day: dt.date
) -> tuple[int, pd.DataFrame]:
    """offers_with_specs rows from ``first`` to ``day``, and ``day``'s five best list prices per PFLOP-hour."""
    row = con.execute(sql("queries/offers_with_specs_count"), {"first": first, "last": day}).fetchone()
    top = con.execute(sql("queries/best_pflop_offers"), {"day": day}).fetchdf()
    return (int(row[0]) if row else 0), top


def snapshot_row_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(sql("queries/snapshot_row_count")).fetchone()
    return int(row[0]) if row else 0


def latest_prices_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(sql("queries/latest_prices_count")).fetchone()
    return int(row[0]) if row else 0


def provider_runs_between(
    con: duckdb.DuckDBPyConnection, provider: str, first: dt.date, last: dt.date
) -> list[tuple]:
    """The provider's runs from ``first`` to ``last``: (date, status, offers, offers the parser saw)."""
    return con.execute(
        sql("queries/provider_runs_between"), {"provider": provider, "first": first, "last": last}
    ).fetchall()


def provider_runs_of_run(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """What one Dagster run recorded per provider and date, oldest date first: provider,
    snapshot_date, status, offers, rejected, unknown_gpus, error, parse_strategy, observed_on."""
    return con.execute(sql("queries/provider_runs_of_run"), {"run_id": run_id}).fetchdf()


def cheapest_list_offer(
    con: duckdb.DuckDBPyConnection,
    gpu: str,
    gpus: int,
    day: dt.date,
    tiers: tuple[str, ...] = ("on_demand",),
    max_age_days: int = MAX_PRICE_AGE_DAYS,
) -> dict | None:
    """The cheapest current list price for ``gpus`` x ``gpu`` in each provider's newest snapshot
    at or before ``day``: an offer of exactly that many GPUs, or for a multiple of 8 whole 8-GPU
    nodes (``nodes`` > 1). ``from``/``lowest_now`` prices are floors, not prices one can rent at.
    Current: the page at most ``max_age_days`` before ``day`` (warehouse/staleness.py); when no
    price is current the cheapest older one comes back with ``current`` false (never to be used
    as the market price, only named). None when no provider lists one."""
    offers = offers_as_of(con, day)
    if offers.empty:
        return None
    basis = (
        offers["price_basis"] if "price_basis" in offers.columns else pd.Series("list", index=offers.index)
    )
    usable = offers[
        (offers["gpu"] == gpu)
        & (basis.fillna("list") == "list")
        & offers["tier"].isin(tiers)
        & (offers["usd_per_gpu_hour"] > 0)
    ]
    exact = usable[usable["gpu_count"] == gpus]
    per_node = 8
    if exact.empty and gpus % per_node == 0:
        exact = usable[usable["gpu_count"] == per_node]
    if exact.empty:
        return None
    pages = exact["observed_on"] if "observed_on" in exact.columns else exact["snapshot_date"]
    seen = pd.to_datetime(pages.where(pages.notna(), exact["snapshot_date"])).dt.date
    ages = seen.map(lambda d: max(age_days(d, day) or 0, 0))
    fresh = seen.map(lambda d: is_current(d, day, max_age_days)).astype(bool)
    current = bool(fresh.any())
    exact = exact.assign(_age=ages)
    if current:
        exact = exact[fresh]
    best = exact.sort_values(["usd_per_gpu_hour", "provider", "sku"], kind="stable").iloc[0]
    observed = best["observed_on"] if "observed_on" in best.index and pd.notna(best["observed_on"]) else None
    snapshot = pd.Timestamp(best["snapshot_date"]).date()
    return {
        "provider": str(best["provider"]),
        "sku": str(best["sku"]),
        "tier": str(best["tier"]),
        "community": bool(best["community"]),
        "gpu_count": int(best["gpu_count"]),
        "nodes": gpus // int(best["gpu_count"]),
        "usd_per_gpu_hour": round(float(best["usd_per_gpu_hour"]), 4),
        "price_basis": "list",
        "observed_on": (pd.Timestamp(observed).date() if observed is not None else snapshot).isoformat(),
        "snapshot_date": snapshot.isoformat(),
        "price_age_days": int(best["_age"]),
        "current": current,
    }


def newest_snapshot(con: duckdb.DuckDBPyConnection, provider: str) -> tuple[dt.date | None, list[dict]]:
    """The provider's newest scraped/replayed snapshot: its date and its offers (none: None, [])."""
    row = con.execute(sql("queries/newest_scraped_date"), {"provider": provider}).fetchone()
    day = row[0] if row else None
    if day is None:
        return None, []
    cursor = con.execute(sql("queries/snapshot_offers"), {"provider": provider, "day": day})
    names = [d[0] for d in cursor.description]
    return day, [dict(zip(names, row)) for row in cursor.fetchall()]


def raw_pages_to_reparse(
    con: duckdb.DuckDBPyConnection, provider: str, first: dt.date, last: dt.date
) -> dict[dt.date, dict]:
    """Per date of the range, the raw_pages row to parse again: the page the date's snapshot came
    from when there is one, else the newest page fetched for the date."""
    frame = con.execute(
        sql("queries/raw_pages_to_reparse"), {"provider": provider, "first": first, "last": last}
    ).fetchdf()
    rows = {}
    for record in frame.to_dict("records"):
        record = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
        record["snapshot_date"] = pd.Timestamp(record["snapshot_date"]).date()
        record["fetched_at"] = pd.Timestamp(record["fetched_at"]).to_pydatetime()
        if record.get("page_date") is not None:
            record["page_date"] = pd.Timestamp(record["page_date"]).date()
        if record.get("http_status") is not None:
            record["http_status"] = int(record["http_status"])
        rows[record["snapshot_date"]] = record
    return rows


def first_stored_page(con: duckdb.DuckDBPyConnection, providers: list[str]) -> dt.date | None:
    """The earliest date the raw_pages manifest holds a page for, among ``providers``."""
    row = con.execute(sql("queries/first_stored_page"), {"providers": providers}).fetchone()
    return row[0] if row else None
