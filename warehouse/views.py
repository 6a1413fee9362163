"""Analyst views (schema ``analytics``), rebuilt on every open so they track the code.

Every analytics view reads only ``main`` objects: the published copy is a file named
analytics.duckdb, whose catalog name would make ``analytics.<view>`` ambiguous inside a view.
Views that others build on are therefore defined once in ``main`` (prefix ``v_``) and exposed
in ``analytics`` as thin pass-throughs.
"""

from __future__ import annotations

import hashlib

import duckdb

# The columns that identify one offer across snapshots (a price series).
OFFER_KEY = (
    "provider, sku, gpu_count, tier, community, commitment_months, region, price_basis, effective_from"
)
# A price series: an offer as mapped to one GPU (a re-mapped name starts a new series).
SERIES_KEY = f"gpu, {OFFER_KEY}"

# Days after which a provider's newest successful snapshot counts as stale.
STALE_AFTER_DAYS = 2

_BASE_VIEWS: dict[str, str] = {
    # Newest scraped (or replayed) snapshot per provider; public reports are history only.
    "v_latest_prices": """
        WITH newest AS (
            SELECT provider, max(snapshot_date) AS snapshot_date
            FROM main.provider_runs WHERE status = 'success' GROUP BY provider
        )
        SELECT p.* FROM main.price_snapshots p
        JOIN newest n ON p.provider = n.provider AND p.snapshot_date = n.snapshot_date
        WHERE p.source IN ('scrape', 'archive')
          -- a constant lower bound lets DuckDB skip old row groups (zone maps) instead of
          -- scanning the whole history: the view stays flat as years accumulate
          AND p.snapshot_date >= (SELECT min(snapshot_date) FROM newest)
    """,
    # One row per offer per price period. A period ends where the next one starts, or on the
    # provider's first snapshot without the offer; valid_to NULL means the price still holds.
    # Series are keyed by GPU as well, so `WHERE gpu = ...` is pushed below the window functions
    # into the table scan (a filter only passes a window on a PARTITION BY column): one GPU's
    # history reads that GPU's rows, not every snapshot (bench/README.md, warehouse figure).
    # One sorted pass flags each snapshot that starts or ends a period; a second pass over those
    # boundary rows alone pairs each start with its end (the next boundary) and the next start.
    "v_price_history": f"""
        WITH s AS (
            SELECT {SERIES_KEY}, snapshot_date, usd_per_gpu_hour, gpu_raw, source,
                lag(usd_per_gpu_hour) OVER w IS DISTINCT FROM usd_per_gpu_hour AS starts_period,
                lead(usd_per_gpu_hour) OVER w IS DISTINCT FROM usd_per_gpu_hour AS ends_period,
                row_number() OVER w AS n
            FROM main.price_snapshots
            WINDOW w AS (PARTITION BY {SERIES_KEY} ORDER BY snapshot_date)
        ),
        bounds AS (
            SELECT *,
                lead(snapshot_date) OVER w AS next_date,
                lead(snapshot_date, 2) OVER w AS second_next_date,
                lead(n) OVER w AS next_n,
                lead(gpu_raw) OVER w AS next_gpu_raw,
                lead(source) OVER w AS next_source
            FROM s
            WHERE starts_period OR ends_period
            WINDOW w AS (PARTITION BY {SERIES_KEY} ORDER BY snapshot_date)
        ),
        periods AS (
            -- a start that is not also an end is followed by its end, and that by the next start
            SELECT {SERIES_KEY}, usd_per_gpu_hour,
                snapshot_date AS valid_from,
                CASE WHEN ends_period THEN snapshot_date ELSE next_date END AS last_seen,
                CASE WHEN ends_period THEN 1 ELSE next_n - n + 1 END AS snapshots,
                CASE WHEN ends_period THEN gpu_raw ELSE next_gpu_raw END AS gpu_raw,
                CASE WHEN ends_period THEN source ELSE next_source END AS source,
                CASE WHEN ends_period THEN next_date ELSE second_next_date END AS next_valid_from
            FROM bounds
            WHERE starts_period
        ),
        provider_dates AS (
            SELECT provider, snapshot_date,
                lead(snapshot_date) OVER (PARTITION BY provider ORDER BY snapshot_date) AS next_snapshot_date
            FROM (SELECT DISTINCT provider, snapshot_date FROM main.price_snapshots)
        )
        SELECT p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier, p.community,
            p.commitment_months, p.region, p.price_basis, p.effective_from, p.usd_per_gpu_hour,
            p.valid_from, coalesce(p.next_valid_from, d.next_snapshot_date) AS valid_to,
            p.last_seen, p.snapshots, p.source
        FROM periods p
        LEFT JOIN provider_dates d ON d.provider = p.provider AND d.snapshot_date = p.last_seen
    """,
    # Offers whose price differs from the same offer's previous snapshot.
    "v_price_changes": f"""
        WITH s AS (
            SELECT *,
                lag(usd_per_gpu_hour) OVER w AS old_usd_per_gpu_hour,
                lag(snapshot_date) OVER w AS previous_snapshot_date
            FROM main.price_snapshots
            WINDOW w AS (PARTITION BY {OFFER_KEY} ORDER BY snapshot_date)
        )
        SELECT snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
            commitment_months, region, price_basis, effective_from, source,
            previous_snapshot_date, old_usd_per_gpu_hour,
            usd_per_gpu_hour AS new_usd_per_gpu_hour,
            round(100.0 * (usd_per_gpu_hour - old_usd_per_gpu_hour) / old_usd_per_gpu_hour, 2) AS pct_change
        FROM s
        WHERE old_usd_per_gpu_hour IS NOT NULL AND old_usd_per_gpu_hour <> usd_per_gpu_hour
    """,
    # Per date and GPU: the cheapest offer of each tier (known GPUs, prices in force that day).
    # Every snapshot row, flagged ``in_force`` when it is the price that applies on its date:
    # a scheduled price ("Effective October 1") replaces the current one once its date has
    # come, and a cited public report is only used for a provider and date without a scrape.
    "v_snapshots_in_force": f"""
        WITH scraped AS (
            SELECT DISTINCT provider, snapshot_date FROM main.provider_runs WHERE status = 'success'
        ),
        flagged AS (
            SELECT p.*,
                ((p.effective_from IS NULL OR p.effective_from <= p.snapshot_date)
                 AND (p.source <> 'public_report' OR s.provider IS NULL)) AS eligible
            FROM main.price_snapshots p
            LEFT JOIN scraped s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
        )
        SELECT * EXCLUDE (eligible),
            eligible AND row_number() OVER (
                PARTITION BY snapshot_date, {OFFER_KEY.replace(", effective_from", "")}, source, eligible
                ORDER BY effective_from DESC NULLS LAST
            ) = 1 AS in_force
        FROM flagged
    """,
    "v_cheapest_by_gpu": """
        SELECT snapshot_date, gpu, tier, provider, sku, gpu_raw, gpu_count, community,
            commitment_months, price_basis, usd_per_gpu_hour, source
        FROM main.v_snapshots_in_force
        WHERE gpu <> 'unknown' AND in_force
        QUALIFY row_number() OVER (
            PARTITION BY snapshot_date, gpu, tier ORDER BY usd_per_gpu_hour, provider, sku, gpu_count
        ) = 1
    """,
    # Per provider: newest successful snapshot, newest attempt, and whether the data is stale.
    "v_provider_freshness": f"""
        WITH runs AS (
            SELECT provider,
                max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
                max(snapshot_date) AS last_attempt_date,
                arg_max(status, snapshot_date) AS last_status,
                arg_max(error, snapshot_date) AS last_error,
                arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
                arg_max(parse_strategy, snapshot_date) AS parse_strategy,
                arg_max(rejected, snapshot_date) AS rejected
            FROM main.provider_runs GROUP BY provider
        ),
        newest AS (SELECT max(snapshot_date) AS d FROM main.provider_runs)
        SELECT r.provider, r.last_success_date, r.last_attempt_date, r.last_status, r.last_error,
            r.last_offers,
            (SELECT d FROM newest) - r.last_success_date AS days_behind,
            -- Drift: the newest attempt's reader (structured / fallback) and its rejected rows.
            r.parse_strategy, r.rejected,
            (r.last_status <> 'success'
             OR r.last_success_date IS NULL
             OR (SELECT d FROM newest) - r.last_success_date > {STALE_AFTER_DAYS}) AS stale
        FROM runs r
    """,
    # Every offer with the specs of its GPU and price-performance per offer.
    "v_offers_with_specs": """
        SELECT p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier,
            p.community, p.commitment_months, p.region, p.price_basis, p.effective_from,
            p.available, p.source, p.in_force,
            p.usd_per_gpu_hour, p.usd_per_instance_hour,
            g.vendor, g.architecture, g.memory_gb, g.memory_bandwidth_tbps,
            g.dense_bf16_tflops, g.dense_fp8_tflops, g.form_factor, g.nvlink_gbps, g.ecc,
            g.memory_gb * p.gpu_count AS instance_memory_gb,
            CASE
                WHEN g.slug IS NULL THEN NULL
                WHEN p.gpu_count = 1 THEN 'single-gpu'
                WHEN g.form_factor IN ('sxm', 'superchip') THEN 'nvlink-nvswitch'
                WHEN g.form_factor = 'nvl' THEN 'nvlink-bridge'
                ELSE 'pcie'
            END AS interconnect,
            (g.slug IS NOT NULL AND p.gpu_count > 1 AND g.form_factor IN ('sxm', 'superchip')) AS nvlink_connected,
            (g.slug IS NOT NULL AND p.gpu_count > 1 AND g.form_factor NOT IN ('sxm', 'superchip', 'nvl')) AS pcie_only,
            round(CAST(p.usd_per_gpu_hour AS DOUBLE) / (g.dense_bf16_tflops / 1000.0), 4) AS usd_per_pflop_hour,
            round(CAST(p.usd_per_gpu_hour AS DOUBLE) / g.memory_gb, 5) AS usd_per_gb_hour,
            round(CAST(p.usd_per_gpu_hour AS DOUBLE) / g.memory_bandwidth_tbps, 4) AS usd_per_tbps_hour
        FROM main.v_snapshots_in_force p
        LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
    """,
    "v_best_value_by_gpu": """
        SELECT * FROM main.v_offers_with_specs
        WHERE memory_gb IS NOT NULL AND in_force
        QUALIFY row_number() OVER (
            PARTITION BY snapshot_date, gpu, tier ORDER BY usd_per_gpu_hour, provider, sku, gpu_count
        ) = 1
    """,
    # Per date, tier (on-demand / spot) and metric: the five best offers.
    "v_best_value_by_metric": """
        WITH priced AS (
            SELECT * FROM main.v_offers_with_specs
            WHERE memory_gb IS NOT NULL AND in_force AND tier IN ('on_demand', 'spot')
        ),
        long AS (
            SELECT 'usd_per_pflop_hour' AS metric, usd_per_pflop_hour AS metric_value, * FROM priced
            WHERE usd_per_pflop_hour IS NOT NULL
            UNION ALL BY NAME
            SELECT 'usd_per_gb_hour' AS metric, usd_per_gb_hour AS metric_value, * FROM priced
        )
        SELECT snapshot_date, metric, tier,
            row_number() OVER (PARTITION BY snapshot_date, metric, tier ORDER BY metric_value, provider, sku, gpu_count) AS rank,
            metric_value, provider, gpu, gpu_raw, sku, gpu_count, community, usd_per_gpu_hour,
            usd_per_pflop_hour, usd_per_gb_hour, usd_per_tbps_hour, memory_gb, instance_memory_gb,
            memory_bandwidth_tbps, dense_bf16_tflops, dense_fp8_tflops, form_factor, interconnect, ecc, source
        FROM long
        QUALIFY rank <= 5
    """,
    "v_unknown_gpus": """
        SELECT p.provider, p.gpu_raw, min(p.snapshot_date) AS first_seen, max(p.snapshot_date) AS last_seen,
            count(*) AS offers, p.gpu AS slug, (g.slug IS NULL AND p.gpu <> 'unknown') AS slug_missing_from_catalog
        FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
        WHERE p.gpu = 'unknown' OR g.slug IS NULL
        GROUP BY p.provider, p.gpu_raw, p.gpu, g.slug
    """,
    # Best-ranked offer per workload, date and provider / GPU type.
    "v_workload_best_by_provider": """
        SELECT * FROM main.workload_rankings
        QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, provider ORDER BY rank) = 1
    """,
    "v_workload_best_by_gpu": """
        SELECT * FROM main.workload_rankings
        QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, gpu ORDER BY rank) = 1
    """,
}

# analytics.<name> -> main object it exposes.
_ANALYTICS: dict[str, str] = {
    "latest_prices": "v_latest_prices",
    "price_history": "v_price_history",
    "price_changes": "v_price_changes",
    "cheapest_by_gpu": "v_cheapest_by_gpu",
    "provider_freshness": "v_provider_freshness",
    "offers_with_specs": "v_offers_with_specs",
    "best_value_by_gpu": "v_best_value_by_gpu",
    "best_value_by_metric": "v_best_value_by_metric",
    "unknown_gpus": "v_unknown_gpus",
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
    text = repr(sorted(_BASE_VIEWS.items())) + repr(sorted(_ANALYTICS.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create every view when the view definitions changed (tracked by a fingerprint).

    Run on each writer open; a no-op unless this gpuprice defines different views.
    """
    fingerprint = _fingerprint()
    con.execute("CREATE TABLE IF NOT EXISTS main.view_fingerprint (fingerprint VARCHAR NOT NULL)")
    row = con.execute("SELECT max(fingerprint) FROM main.view_fingerprint").fetchone()
    if row and row[0] == fingerprint:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS analytics")
        for name, sql in _BASE_VIEWS.items():
            con.execute(f"CREATE OR REPLACE VIEW main.{name} AS {sql}")
        for name, source in _ANALYTICS.items():
            con.execute(f"CREATE OR REPLACE VIEW analytics.{name} AS SELECT * FROM main.{source}")
        con.execute("DELETE FROM main.view_fingerprint")
        con.execute("INSERT INTO main.view_fingerprint VALUES (?)", [fingerprint])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def materialize_price_history(con: duckdb.DuckDBPyConnection) -> int:
    """Store price_history as a table sorted by GPU (for the published copy).

    The view computes windows over all history; analysts filter it by GPU, so the copy
    keeps the periods precomputed and sorted, which makes such a filter read a few row groups.
    """
    con.execute(
        "CREATE OR REPLACE TABLE main.price_periods AS "
        "SELECT * FROM main.v_price_history ORDER BY gpu, provider, sku, valid_from"
    )
    con.execute("CREATE OR REPLACE VIEW analytics.price_history AS SELECT * FROM main.price_periods")
    return con.execute("SELECT count(*) FROM main.price_periods").fetchone()[0]
