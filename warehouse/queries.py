"""Read queries shared by assets and commands. User values are always bound parameters."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pandas as pd

from gpuprice.errors import BadInput
from gpuprice.warehouse.connection import connect_reader
from gpuprice.warehouse.staleness import MAX_OFFER_AGE_DAYS, is_stale
from gpuprice.warehouse.views import SNAPSHOT_ROW_KEY

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
    row = con.execute("SELECT max(snapshot_date) FROM main.price_snapshots").fetchone()
    return row[0] if row else None


def offers_as_of(
    con: duckdb.DuckDBPyConnection, day: dt.date, price_bases: tuple[str, ...] | None = DEFAULT_PRICE_BASES
) -> pd.DataFrame:
    """Per provider, the offers of its newest scraped snapshot at or before ``day``, as priced on ``day``.

    A scheduled price whose date has come (``effective_from <= day``) replaces the offer's
    current price; one still in the future is left out. Only ``price_bases`` are returned
    (None: every basis); rows keep ``observed_on``, the date of their page.
    """
    bases = list(price_bases) if price_bases is not None else None
    return con.execute(
        f"""
        WITH newest AS (
            SELECT provider, max(snapshot_date) AS snapshot_date FROM main.provider_runs
            WHERE status = 'success' AND snapshot_date <= ? GROUP BY provider
        )
        SELECT p.* REPLACE (CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
                            CAST(p.usd_per_instance_hour AS DOUBLE) AS usd_per_instance_hour)
        FROM main.price_snapshots p JOIN newest n USING (provider, snapshot_date)
        WHERE p.source IN ('scrape', 'archive') AND (p.effective_from IS NULL OR p.effective_from <= ?)
          AND (CAST(? AS VARCHAR[]) IS NULL OR list_contains(CAST(? AS VARCHAR[]), p.price_basis))
        QUALIFY row_number() OVER (
            PARTITION BY {", ".join("p." + c for c in SNAPSHOT_ROW_KEY.split(", "))}
            ORDER BY p.effective_from DESC NULLS LAST
        ) = 1
        ORDER BY p.provider, p.sku, p.gpu_count, p.tier
        """,
        [day, day, bases, bases],
    ).fetchdf()


def provider_freshness_as_of(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    """Per provider, as of ``day``: its newest success, the date of that page, the latest attempt.

    ``last_error`` is the latest attempt's error (NULL when it succeeded: an old failure never
    shows against a healthy provider); ``age_days`` and ``stale`` follow warehouse/staleness.py.
    """
    frame = con.execute(
        """
        SELECT provider,
            max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
            max(coalesce(observed_on, snapshot_date)) FILTER (WHERE status = 'success') AS last_observed_on,
            max(snapshot_date) AS last_attempt_date,
            arg_max({'status': status, 'error': error}, snapshot_date) AS last_run,
            arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
            arg_max(parse_strategy, snapshot_date) AS parse_strategy,
            arg_max(rejected, snapshot_date) AS rejected
        FROM main.provider_runs WHERE snapshot_date <= ? GROUP BY provider ORDER BY provider
        """,
        [day],
    ).fetchdf()
    frame["last_status"] = [run["status"] for run in frame["last_run"]]
    frame["last_error"] = [run["error"] for run in frame["last_run"]]
    frame = frame.drop(columns=["last_run"])
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


def price_history_series(
    con: duckdb.DuckDBPyConnection,
    gpu: str,
    tier: str,
    since: dt.date,
    until: dt.date,
    max_age_days: int = MAX_OFFER_AGE_DAYS,
) -> pd.DataFrame:
    """Per day and provider, the provider's cheapest in-force list price for the GPU (``gpuprice history``).

    Last observation carried forward (analytics.daily_prices), kept while its page is at most
    ``max_age_days`` old; ``cheapest`` marks the cheapest provider of each day (ties: provider name).
    """
    return con.execute(
        """
        WITH per_provider AS (
            SELECT date, provider, gpu_count, community, tier, CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
                observed_on, age_days
            FROM main.v_daily_prices
            WHERE gpu = ? AND tier = ? AND price_basis = 'list' AND date BETWEEN ? AND ? AND age_days <= ?
            QUALIFY row_number() OVER (
                PARTITION BY date, provider
                ORDER BY usd_per_gpu_hour, gpu_count, community, commitment_months NULLS FIRST, region NULLS FIRST
            ) = 1
        )
        SELECT *, row_number() OVER (PARTITION BY date ORDER BY usd_per_gpu_hour, provider) = 1 AS cheapest
        FROM per_provider ORDER BY date, provider
        """,
        [gpu, tier, since, until, max_age_days],
    ).fetchdf()


def headline_offers(con: duckdb.DuckDBPyConnection, gpus: tuple[str, ...]) -> list[tuple]:
    """Cheapest on-demand list price of each GPU among the latest prices seen within MAX_OFFER_AGE_DAYS."""
    return con.execute(
        """
        SELECT gpu, provider, gpu_count, community, price_basis, usd_per_gpu_hour, observed_on FROM (
            SELECT *, row_number() OVER (
                PARTITION BY gpu ORDER BY usd_per_gpu_hour, provider, gpu_count, community, sku) AS r
            FROM main.v_latest_prices
            WHERE list_contains(?, gpu) AND tier = 'on_demand' AND price_basis = 'list'
              AND (effective_from IS NULL OR effective_from <= snapshot_date) AND age_days <= ?)
        WHERE r = 1 ORDER BY gpu
        """,
        [list(gpus), MAX_OFFER_AGE_DAYS],
    ).fetchall()


def offers_missing_from_catalog(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    return con.execute(
        """SELECT p.provider, p.gpu, p.gpu_raw, count(*) AS offers
           FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
           WHERE p.snapshot_date = ? AND g.slug IS NULL
           GROUP BY ALL ORDER BY p.provider, p.gpu_raw""",
        [day],
    ).fetchdf()


def catalog_size(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.dim_gpu").fetchone()
    return int(row[0]) if row else 0


def offers_with_specs_summary(con: duckdb.DuckDBPyConnection, day: dt.date) -> tuple[int, pd.DataFrame]:
    """The day's offers_with_specs row count and its five best list prices per PFLOP-hour."""
    row = con.execute(
        "SELECT count(*) FROM main.v_offers_with_specs WHERE snapshot_date = ?", [day]
    ).fetchone()
    top = con.execute(
        """SELECT provider, gpu, gpu_count, tier, usd_per_gpu_hour, usd_per_pflop_hour, usd_per_gb_hour
           FROM main.v_offers_with_specs
           WHERE snapshot_date = ? AND usd_per_pflop_hour IS NOT NULL AND in_force AND price_basis = 'list'
           ORDER BY usd_per_pflop_hour, provider, gpu_count, sku LIMIT 5""",
        [day],
    ).fetchdf()
    return (int(row[0]) if row else 0), top


def snapshot_row_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.price_snapshots").fetchone()
    return int(row[0]) if row else 0


def latest_prices_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM main.v_latest_prices").fetchone()
    return int(row[0]) if row else 0


def recent_provider_runs(
    con: duckdb.DuckDBPyConnection, provider: str, day: dt.date, days: int
) -> list[tuple]:
    """The provider's runs in the ``days`` before ``day``, newest first: (status, offers, parsed offers, date)."""
    return con.execute(
        """SELECT status, offers, CAST(json_extract(parse_report, '$.offers') AS INTEGER), snapshot_date
           FROM main.provider_runs
           WHERE provider = ? AND snapshot_date < ? AND snapshot_date >= ? - INTERVAL (?) DAY
           ORDER BY snapshot_date DESC""",
        [provider, day, day, days],
    ).fetchall()


def provider_run_status(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    return con.execute(
        "SELECT provider, status, offers, rejected, unknown_gpus, error, parse_strategy, finished_at, observed_on"
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
