"""Read queries shared by assets and commands. User values are always bound parameters."""

from __future__ import annotations

import bisect
import datetime as dt
from pathlib import Path

import duckdb
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import connect_reader
from gpuprice.warehouse.views import OFFER_KEY, STALE_AFTER_DAYS


def open_analytics(path: Path) -> duckdb.DuckDBPyConnection:
    """Read-only connection to the published analytics copy (a clear error when there is none)."""
    if not path.exists():
        raise BadInput(
            f"no published warehouse at {path}; run `gpuprice run` first (GPUPRICE_HOME={path.parent})"
        )
    return connect_reader(path)


def offers_as_of(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    """Per provider, the offers of its newest scraped snapshot at or before ``day``, as priced on ``day``.

    A scheduled price whose date has come (``effective_from <= day``) replaces the offer's
    current price; one still in the future is left out.
    """
    return offers_as_of_range(con, day, day)[day]


def offers_as_of_range(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date
) -> dict[dt.date, pd.DataFrame]:
    """``offers_as_of`` for every date from ``first`` to ``last`` in one query (a backfill's batch)."""
    frame = con.execute(
        f"""
        WITH days AS (
            SELECT CAST(d AS DATE) AS as_of FROM range(CAST(? AS DATE), CAST(? AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) t(d)
        ),
        runs AS (
            SELECT DISTINCT provider, snapshot_date FROM main.provider_runs
            WHERE status = 'success' AND snapshot_date <= ?
        ),
        newest AS (
            SELECT days.as_of, runs.provider, max(runs.snapshot_date) AS snapshot_date
            FROM days JOIN runs ON runs.snapshot_date <= days.as_of GROUP BY ALL
        )
        SELECT n.as_of AS _as_of, p.* REPLACE (CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
                            CAST(p.usd_per_instance_hour AS DOUBLE) AS usd_per_instance_hour)
        FROM main.price_snapshots p JOIN newest n USING (provider, snapshot_date)
        WHERE p.source IN ('scrape', 'archive') AND (p.effective_from IS NULL OR p.effective_from <= n.as_of)
        QUALIFY row_number() OVER (
            PARTITION BY n.as_of, p.provider, {OFFER_KEY.replace(", effective_from", "").replace("provider, ", "")}
            ORDER BY p.effective_from DESC NULLS LAST
        ) = 1
        -- the whole offer key: ties in rank_offers keep this order, so it must be total
        ORDER BY n.as_of, p.provider, p.sku, p.gpu_count, p.tier, p.community, p.commitment_months,
                 p.region, p.price_basis, p.effective_from
        """,
        [first, last, last],
    ).fetchdf()
    days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
    empty = frame.iloc[0:0].drop(columns="_as_of")
    result = {day: empty for day in days}
    if not frame.empty:
        keys = pd.to_datetime(frame["_as_of"]).dt.date
        for day, rows in frame.groupby(keys, sort=False):
            result[day] = rows.drop(columns="_as_of").reset_index(drop=True)
    return result


def stale_providers(con: duckdb.DuckDBPyConnection, day: dt.date) -> set[str]:
    """Providers whose newest successful snapshot at or before ``day`` is older than two days or failed on ``day``."""
    return stale_providers_range(con, day, day)[day]


def stale_providers_range(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date
) -> dict[dt.date, set[str]]:
    """``stale_providers`` for every date from ``first`` to ``last`` (one read of provider_runs)."""
    rows = con.execute(
        "SELECT provider, snapshot_date, status FROM main.provider_runs WHERE snapshot_date <= ?"
        " ORDER BY provider, snapshot_date",
        [last],
    ).fetchall()
    # Per provider: run dates, their status and the newest success up to each run.
    runs: dict[str, tuple[list[dt.date], list[str], list[dt.date | None]]] = {}
    for provider, snapshot_date, status in rows:
        dates, statuses, last_successes = runs.setdefault(provider, ([], [], []))
        previous = last_successes[-1] if last_successes else None
        dates.append(snapshot_date)
        statuses.append(status)
        last_successes.append(snapshot_date if status == "success" else previous)
    result: dict[dt.date, set[str]] = {}
    for n in range((last - first).days + 1):
        day = first + dt.timedelta(days=n)
        stale = set()
        for provider, (dates, statuses, last_successes) in runs.items():
            upto = bisect.bisect_right(dates, day)
            if upto == 0:
                continue  # no run yet on that date
            last_success = last_successes[upto - 1]
            if (
                last_success is None
                or statuses[upto - 1] != "success"
                or (day - last_success).days > STALE_AFTER_DAYS
            ):
                stale.add(provider)
        result[day] = stale
    return result


def offers_missing_from_catalog(
    con: duckdb.DuckDBPyConnection, day: dt.date, last: dt.date | None = None
) -> pd.DataFrame:
    """Offers of ``day`` (or of every date from ``day`` to ``last``) whose GPU is not in dim_gpu."""
    return con.execute(
        """SELECT p.provider, p.gpu, p.gpu_raw, count(*) AS offers
           FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
           WHERE p.snapshot_date BETWEEN ? AND ? AND g.slug IS NULL
           GROUP BY ALL ORDER BY p.provider, p.gpu_raw""",
        [day, last or day],
    ).fetchdf()


def provider_run_status(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    return con.execute(
        "SELECT provider, status, offers, rejected, unknown_gpus, error, parse_strategy, finished_at"
        " FROM main.provider_runs"
        " WHERE snapshot_date = ?",
        [day],
    ).fetchdf()


def cheapest_list_offer(
    con: duckdb.DuckDBPyConnection, gpu: str, gpus: int, day: dt.date, tiers: tuple[str, ...] = ("on_demand",)
) -> dict | None:
    """The cheapest in-force list price for ``gpus`` x ``gpu`` in each provider's newest snapshot
    at or before ``day``: an offer of exactly that many GPUs, or for a multiple of 8 whole 8-GPU
    nodes (``nodes`` > 1). ``from``/``lowest_now`` prices are floors, not prices one can rent at.
    None when no provider lists one."""
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
    }


def newest_snapshot(con: duckdb.DuckDBPyConnection, provider: str) -> tuple[dt.date | None, list[dict]]:
    """The provider's newest scraped/replayed snapshot: its date and its offers (none: None, [])."""
    row = con.execute(
        "SELECT max(snapshot_date) FROM main.price_snapshots WHERE provider = ? AND source IN ('scrape', 'archive')",
        [provider],
    ).fetchone()
    day = row[0] if row else None
    if day is None:
        return None, []
    cursor = con.execute(
        """SELECT sku, gpu_count, tier, community, commitment_months, region,
                  CAST(effective_from AS VARCHAR) AS effective_from, price_basis,
                  CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour
           FROM main.price_snapshots
           WHERE provider = ? AND snapshot_date = ? AND source IN ('scrape', 'archive')""",
        [provider, day],
    )
    names = [d[0] for d in cursor.description]
    return day, [dict(zip(names, row)) for row in cursor.fetchall()]


def raw_pages_to_reparse(
    con: duckdb.DuckDBPyConnection, provider: str, first: dt.date, last: dt.date
) -> dict[dt.date, dict]:
    """Per date of the range, the raw_pages row to parse again: the page the date's snapshot came
    from when there is one, else the newest page fetched for the date."""
    frame = con.execute(
        """
        SELECT r.* FROM main.raw_pages r
        LEFT JOIN (SELECT DISTINCT snapshot_date, raw_sha256 FROM main.price_snapshots
                   WHERE provider = ? AND snapshot_date BETWEEN ? AND ? AND source IN ('scrape', 'archive')) s
          ON s.snapshot_date = r.snapshot_date AND s.raw_sha256 = r.sha256
        WHERE r.provider = ? AND r.snapshot_date BETWEEN ? AND ?
        QUALIFY row_number() OVER (PARTITION BY r.snapshot_date
                                   ORDER BY s.raw_sha256 IS NOT NULL DESC, r.fetched_at DESC, r.sha256) = 1
        """,
        [provider, first, last, provider, first, last],
    ).fetchdf()
    rows = {}
    for record in frame.to_dict("records"):
        record = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
        record["snapshot_date"] = pd.Timestamp(record["snapshot_date"]).date()
        record["fetched_at"] = pd.Timestamp(record["fetched_at"]).to_pydatetime()
        if record.get("http_status") is not None:
            record["http_status"] = int(record["http_status"])
        rows[record["snapshot_date"]] = record
    return rows


def first_stored_page(con: duckdb.DuckDBPyConnection, providers: list[str]) -> dt.date | None:
    """The earliest date the raw_pages manifest holds a page for, among ``providers``."""
    row = con.execute(
        "SELECT min(snapshot_date) FROM main.raw_pages WHERE list_contains(?, provider)", [providers]
    ).fetchone()
    return row[0] if row else None
