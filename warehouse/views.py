"""Analyst views (schema ``analytics``), rebuilt on every open so they track the code.

Every analytics view reads only ``main`` objects: the published copy is a file named
analytics.duckdb, whose catalog name would make ``analytics.<view>`` ambiguous inside a view.
Views that others build on are therefore defined once in ``main`` (prefix ``v_``) and exposed
in ``analytics`` as thin pass-throughs.
"""

from __future__ import annotations

import hashlib

import duckdb

from gpuprice.warehouse.sql_files import (
    CAPACITY_WATCH_DAYS,
    OFFER_KEY,
    OFFER_KEY_TEXT,
    SNAPSHOT_ROW_KEY,
    sql,
    statement,
)
from gpuprice.warehouse.staleness import MAX_OFFER_AGE_DAYS, MAX_PRICE_AGE_DAYS

# Back-compatible names (re-exported for callers of the old module attributes).
__all__ = [
    "CAPACITY_WATCH_DAYS",
    "MAX_OFFER_AGE_DAYS",
    "MAX_PRICE_AGE_DAYS",
    "OFFER_KEY",
    "OFFER_KEY_TEXT",
    "SNAPSHOT_ROW_KEY",
    "create_views",
]

# The main views, each ``sql/views/<name>.sql`` (its CREATE VIEW main.<name>), in the order they
# are created (a view reads only views above it).
_VIEW_NAMES: tuple[str, ...] = (
    "v_latest_prices",
    "v_snapshots_in_force",
    "v_offer_observations",
    "v_offer_pages",
    "v_price_history",
    "v_daily_prices",
    "v_cheapest_by_gpu",
    "v_price_changes",
    "v_provider_freshness",
    "v_offers_with_specs",
    "v_current_list_offers",
    "v_best_value_by_gpu",
    "v_best_value_by_metric",
    "v_cheapest_region",
    "v_capacity_watch",
    "v_cloud_vs_hyperscaler",
    "v_catalog_vs_scrape",
    "v_unknown_gpus",
    "v_workload_best_by_provider",
    "v_workload_best_by_gpu",
)
_BASE_VIEWS: dict[str, str] = {name: sql(f"views/{name}") for name in _VIEW_NAMES}
# Table macros the views call, each ``sql/macros/<name>.sql``, created before the views (stored
# in the database beside them, so the published copy has them too).
_MACROS: dict[str, str] = {name: sql(f"macros/{name}") for name in ("provider_freshness",)}

# analytics.<name> -> main object it exposes.
_ANALYTICS: dict[str, str] = {
    "latest_prices": "v_latest_prices",
    "price_history": "v_price_history",
    "daily_prices": "v_daily_prices",
    "price_changes": "v_price_changes",
    "cheapest_by_gpu": "v_cheapest_by_gpu",
    "provider_freshness": "v_provider_freshness",
    "offers_with_specs": "v_offers_with_specs",
    "best_value_by_gpu": "v_best_value_by_gpu",
    "best_value_by_metric": "v_best_value_by_metric",
    "unknown_gpus": "v_unknown_gpus",
    "cheapest_region": "v_cheapest_region",
    "capacity_watch": "v_capacity_watch",
    "cloud_vs_hyperscaler": "v_cloud_vs_hyperscaler",
    "catalog_vs_scrape": "v_catalog_vs_scrape",
    "workload_best_by_provider": "v_workload_best_by_provider",
    "workload_best_by_gpu": "v_workload_best_by_gpu",
    "price_snapshots": "price_snapshots",
    "workload_rankings": "workload_rankings",
    "memory_fit": "memory_fit",
    "provider_runs": "provider_runs",
    "quarantine": "quarantine",
    "raw_pages": "raw_pages",
    "dim_gpu": "dim_gpu",
}

ANALYTICS_VIEWS: tuple[str, ...] = tuple(_ANALYTICS)


def _fingerprint() -> str:
    text = (
        repr(sorted(_MACROS.items())) + repr(sorted(_BASE_VIEWS.items())) + repr(sorted(_ANALYTICS.items()))
    )
    return hashlib.sha256(text.encode()).hexdigest()


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create every view when the view definitions changed (tracked by a fingerprint).

    Run on each writer open; a no-op unless this gpuprice defines different views.
    """
    fingerprint = _fingerprint()
    con.execute(sql("view_state/create_fingerprint_table"))
    row = con.execute(sql("view_state/read_fingerprint")).fetchone()
    if row and row[0] == fingerprint:
        return
    con.begin()
    try:
        con.execute(sql("view_state/create_analytics_schema"))
        for create in (*_MACROS.values(), *_BASE_VIEWS.values()):
            con.execute(create)
        for name, source in _ANALYTICS.items():
            con.execute(statement("view_state/create_analytics_view", name=name, source=source))
        con.execute(sql("view_state/clear_fingerprint"))
        con.execute(sql("view_state/record_fingerprint"), {"fingerprint": fingerprint})
        con.commit()
    except BaseException:
        con.rollback()
        raise


def _store_sorted(con: duckdb.DuckDBPyConnection, table: str, view: str, order_by: tuple[str, ...]) -> None:
    """``CREATE TABLE table AS <the view's rows> ORDER BY order_by`` in two steps: the rows first,
    then sorted.

    One fused statement keeps the query's join state and the sort's runs pinned together, and
    runs out of a capped memory on a long history; each step alone spills to disk."""
    staged = f"_staged_{table}"
    con.execute(statement("view_state/stage_rows", staged=staged, view=view))
    try:
        con.execute(statement("view_state/sort_staged", table=table, staged=staged, order_by=order_by))
    finally:
        con.execute(statement("view_state/drop_staged", staged=staged))


def materialize_price_history(con: duckdb.DuckDBPyConnection) -> int:
    """Store price_history as a table sorted by GPU (for the published copy).

    The view computes windows over all history; analysts filter it by GPU, so the copy
    keeps the periods precomputed and sorted, which makes such a filter read a few row groups.
    """
    _store_sorted(con, "price_periods", "v_price_history", ("gpu", "provider", "valid_from", "offer_key"))
    # Views built on the periods (the daily series, price changes) read the stored ones: the same
    # rows, without computing the windows over all history again.
    con.execute(sql("view_state/read_stored_price_periods"))
    # The daily series (and the views built on it) read the precomputed rows, sorted by GPU.
    _store_sorted(con, "daily_price_rows", "v_daily_prices", ("gpu", "date", "provider", "offer_key"))
    con.execute(sql("view_state/read_stored_daily_prices"))
    row = con.execute(sql("view_state/count_price_periods")).fetchone()
    return int(row[0]) if row else 0
