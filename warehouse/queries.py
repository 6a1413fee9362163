"""Read queries shared by assets and commands. User values are always bound parameters."""

from __future__ import annotations

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
        QUALIFY row_number() OVER (
            PARTITION BY p.provider, {OFFER_KEY.replace(", effective_from", "").replace("provider, ", "")}
            ORDER BY p.effective_from DESC NULLS LAST
        ) = 1
        ORDER BY p.provider, p.sku, p.gpu_count, p.tier
        """,
        [day, day],
    ).fetchdf()


def stale_providers(con: duckdb.DuckDBPyConnection, day: dt.date) -> set[str]:
    """Providers whose newest successful snapshot at or before ``day`` is older than two days or failed on ``day``."""
    rows = con.execute(
        """
        SELECT provider,
            max(snapshot_date) FILTER (WHERE status = 'success') AS last_success,
            arg_max(status, snapshot_date) AS last_status
        FROM main.provider_runs WHERE snapshot_date <= ? GROUP BY provider
        """,
        [day],
    ).fetchall()
    stale = set()
    for provider, last_success, last_status in rows:
        if last_success is None or last_status != "success" or (day - last_success).days > STALE_AFTER_DAYS:
            stale.add(provider)
    return stale


def offers_missing_from_catalog(con: duckdb.DuckDBPyConnection, day: dt.date) -> pd.DataFrame:
    return con.execute(
        """SELECT p.provider, p.gpu, p.gpu_raw, count(*) AS offers
           FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
           WHERE p.snapshot_date = ? AND g.slug IS NULL
           GROUP BY ALL ORDER BY p.provider, p.gpu_raw""",
        [day],
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
