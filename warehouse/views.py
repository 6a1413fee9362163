"""Analyst views (schema ``analytics``), rebuilt on every open so they track the code.

Every analytics view reads only ``main`` objects: the published copy is a file named
analytics.duckdb, whose catalog name would make ``analytics.<view>`` ambiguous inside a view.
Views that others build on are therefore defined once in ``main`` (prefix ``v_``) and exposed
in ``analytics`` as thin pass-throughs.
"""

from __future__ import annotations

import hashlib

import duckdb

from gpuprice.scrapers.offer import PROVIDER_KINDS
from gpuprice.warehouse.staleness import MAX_OFFER_AGE_DAYS, MAX_PRICE_AGE_DAYS, current_sql, stale_sql

# provider -> gpu_cloud / hyperscaler / marketplace, as a SQL VALUES list (scrapers/offer.py).
_PROVIDER_KINDS_SQL = ", ".join(f"('{p}', '{k}')" for p, k in PROVIDER_KINDS.items())
# "No capacity seen for N days": an offer whose source states availability, reported all along,
# without a day of stock in the last N days.
CAPACITY_WATCH_DAYS = 7

# The canonical offer key: what one offer is, whatever the source (a scrape, a replayed page,
# a cited public report), so an offer's history is one line. The provider's own name for it
# (sku) is not part of it: public reports and pages name the same offer differently.
OFFER_KEY = "provider, gpu, gpu_count, tier, community, commitment_months, region"
# The same key as one text value (NULL parts spelled out), for joins and for analysts.
OFFER_KEY_TEXT = (
    "concat_ws('|', provider, gpu, gpu_count, tier, CASE WHEN community THEN 'community' ELSE 'secure' END,"
    " coalesce(CAST(commitment_months AS VARCHAR) || 'mo', '-'), coalesce(region, '-'))"
)
# One row of one provider's snapshot (a scheduled price shares it with the current one).
SNAPSHOT_ROW_KEY = "provider, sku, gpu_count, tier, community, commitment_months, region, price_basis"
# When an offer has several prices at one time, the list price speaks for it.
BASIS_RANK = "CASE price_basis WHEN 'list' THEN 0 WHEN 'from' THEN 1 ELSE 2 END"

# Back-compatible name (re-exported for callers of the old module attribute).
__all__ = ["MAX_OFFER_AGE_DAYS", "MAX_PRICE_AGE_DAYS", "OFFER_KEY", "SNAPSHOT_ROW_KEY", "create_views"]

_BASE_VIEWS: dict[str, str] = {
    # Newest scraped (or replayed) snapshot per provider; public reports are history only.
    "v_latest_prices": """
        WITH newest AS (
            SELECT provider, max(snapshot_date) AS snapshot_date
            FROM main.provider_runs WHERE status = 'success' GROUP BY provider
        )
        SELECT p.* REPLACE (coalesce(p.observed_on, p.snapshot_date) AS observed_on),
            p.snapshot_date - coalesce(p.observed_on, p.snapshot_date) AS age_days
        FROM main.price_snapshots p
        JOIN newest n ON p.provider = n.provider AND p.snapshot_date = n.snapshot_date
        WHERE p.source IN ('scrape', 'archive')
          -- a constant lower bound lets DuckDB skip old row groups (zone maps) instead of
          -- scanning the whole history: the view stays flat as years accumulate
          AND p.snapshot_date >= (SELECT min(snapshot_date) FROM newest)
    """,
    # Every snapshot row, flagged ``in_force`` when it is the price that applies on its date:
    # a scheduled price ("Effective October 1") replaces the current one once its date has
    # come, and imported history (a cited public report, a catalog's history) is only used for
    # a provider and date without a scrape: the product's own scrape wins its day.
    "v_snapshots_in_force": f"""
        WITH scraped AS (
            SELECT DISTINCT provider, snapshot_date FROM main.provider_runs WHERE status = 'success'
        ),
        flagged AS (
            -- rows written without a page date (hand-built warehouses) were observed on their date
            SELECT p.* REPLACE (coalesce(p.observed_on, p.snapshot_date) AS observed_on),
                ((p.effective_from IS NULL OR p.effective_from <= p.snapshot_date)
                 AND (p.source IN ('scrape', 'archive') OR s.provider IS NULL)) AS eligible
            FROM main.price_snapshots p
            LEFT JOIN scraped s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
        )
        SELECT * EXCLUDE (eligible),
            eligible AND row_number() OVER (
                PARTITION BY snapshot_date, {SNAPSHOT_ROW_KEY}, source, eligible
                ORDER BY effective_from DESC NULLS LAST
            ) = 1 AS in_force
        FROM flagged
    """,
    # One row per offer (OFFER_KEY) and time it was observed in force. The time axis is the
    # date of the page (observed_on), not the date a run filed it under: a page replayed on
    # five dates is one observation. A scheduled price counts from its effective date, but not
    # before the offer's previous page (which still showed the old price) nor its first page.
    "v_offer_observations": f"""
        WITH rows AS (
            SELECT *,
                -- the newest earlier page with this offer (a scheduled price cannot start before it)
                max(observed_on) OVER (
                    PARTITION BY gpu, {OFFER_KEY} ORDER BY observed_on
                    RANGE BETWEEN UNBOUNDED PRECEDING AND INTERVAL 1 DAY PRECEDING
                ) AS previous_page
            FROM main.v_snapshots_in_force
            WHERE in_force OR effective_from > snapshot_date
        ),
        timed AS (
            SELECT {OFFER_KEY_TEXT} AS offer_key, {OFFER_KEY}, price_basis, usd_per_gpu_hour,
                CASE
                    WHEN effective_from IS NULL THEN observed_on
                    WHEN effective_from > observed_on THEN effective_from
                    WHEN previous_page IS NULL THEN observed_on  -- never before the offer's first page
                    ELSE greatest(effective_from, previous_page + 1)
                END AS observed_at,
                observed_on, effective_from, sku, gpu_raw, source, source_file
            FROM rows
        )
        SELECT *,
            -- the newest page behind this observation (several pages can state one scheduled price)
            max(observed_on) OVER (PARTITION BY gpu, {OFFER_KEY}, observed_at) AS page_seen
        FROM timed
        QUALIFY row_number() OVER (
            PARTITION BY gpu, {OFFER_KEY}, observed_at
            ORDER BY {BASIS_RANK}, source = 'public_report', usd_per_gpu_hour, sku, observed_on DESC
        ) = 1
    """,
    # The pages (their dates) on which each offer was seen with a price in force: ages count from these.
    "v_offer_pages": f"""
        SELECT DISTINCT {OFFER_KEY_TEXT} AS offer_key, observed_on
        FROM main.v_snapshots_in_force WHERE in_force
    """,
    # One row per offer per price period: each offer has one line (OFFER_KEY) and at most one
    # open period (valid_to NULL). A period ends where the offer's next price starts (a
    # scheduled price ends it on its effective date) or on the provider's first later page
    # without the offer. Partitioned by GPU first, so `WHERE gpu = ...` prunes the scan.
    "v_price_history": f"""
        WITH o AS (
            SELECT *,
                sum(CASE WHEN prev_price IS DISTINCT FROM usd_per_gpu_hour
                          OR prev_basis IS DISTINCT FROM price_basis THEN 1 ELSE 0 END)
                    OVER (PARTITION BY gpu, {OFFER_KEY} ORDER BY observed_at) AS period
            FROM (
                SELECT *,
                    lag(usd_per_gpu_hour) OVER w AS prev_price,
                    lag(price_basis) OVER w AS prev_basis
                FROM main.v_offer_observations
                WINDOW w AS (PARTITION BY gpu, {OFFER_KEY} ORDER BY observed_at)
            )
        ),
        periods AS (
            SELECT offer_key, {OFFER_KEY}, period,
                any_value(usd_per_gpu_hour) AS usd_per_gpu_hour,
                any_value(price_basis) AS price_basis,
                min(observed_at) AS valid_from,
                greatest(min(observed_at), max(page_seen)) AS last_seen,
                count(*) AS snapshots,
                arg_max(sku, observed_at) AS sku,
                arg_max(gpu_raw, observed_at) AS gpu_raw,
                arg_max(source, observed_at) AS source,
                arg_max(effective_from, observed_at) AS effective_from,
                max(page_seen) AS last_page
            FROM o GROUP BY ALL
        ),
        chained AS (
            SELECT *, lead(valid_from) OVER (PARTITION BY gpu, {OFFER_KEY} ORDER BY valid_from) AS next_valid_from
            FROM periods
        ),
        -- A provider's later page closes an offer it no longer lists: a scraped page any offer,
        -- a catalog-history day the catalog's own offers.
        provider_pages AS (
            SELECT DISTINCT provider, source IN ('scrape', 'archive') AS scraped,
                coalesce(observed_on, snapshot_date) AS observed_on
            FROM main.price_snapshots WHERE source IN ('scrape', 'archive', 'catalog_history')
        )
        SELECT c.offer_key, c.provider, c.sku, c.gpu, c.gpu_raw, c.gpu_count, c.tier, c.community,
            c.commitment_months, c.region, c.price_basis, c.effective_from, c.usd_per_gpu_hour,
            c.valid_from,
            coalesce(c.next_valid_from,
                     (SELECT min(d.observed_on) FROM provider_pages d
                      WHERE d.provider = c.provider AND d.observed_on > c.last_page
                        AND (d.scraped OR c.source = 'catalog_history'))) AS valid_to,
            c.last_seen, c.snapshots, c.source
        FROM chained c
    """,
    # Each offer's price in force on every day from its first observation to the newest
    # snapshot date (last observation carried forward), with the date of the page it was last
    # read from and that page's age in days. Analysts filter on age_days; the best-offer views
    # below keep current prices only (warehouse/staleness.py).
    "v_daily_prices": """
        WITH newest AS (SELECT max(snapshot_date) AS d FROM main.price_snapshots),
        days AS (
            SELECT h.* EXCLUDE (valid_to), h.valid_to,
                CAST(unnest(generate_series(
                    CAST(h.valid_from AS TIMESTAMP),
                    CAST(least(coalesce(h.valid_to - 1, (SELECT d FROM newest)), (SELECT d FROM newest)) AS TIMESTAMP),
                    INTERVAL 1 DAY)) AS DATE) AS date
            FROM main.v_price_history h
            WHERE h.valid_from <= (SELECT d FROM newest)
        )
        SELECT d.date, d.offer_key, d.provider, d.gpu, d.gpu_count, d.tier, d.community,
            d.commitment_months, d.region, d.price_basis, d.usd_per_gpu_hour, o.observed_on,
            -- a scheduled price read on a later page applies from its date: age 0, not negative
            greatest(d.date - o.observed_on, 0) AS age_days, d.sku, d.gpu_raw, d.source, d.valid_from
        FROM days d
        ASOF LEFT JOIN main.v_offer_pages o ON o.offer_key = d.offer_key AND d.date >= o.observed_on
    """,
    # Per day, GPU and tier: the cheapest list price among offers observed within
    # MAX_PRICE_AGE_DAYS (known GPUs; ties broken by the whole offer key, so the row is unique).
    "v_cheapest_by_gpu": f"""
        SELECT date AS snapshot_date, gpu, tier, provider, sku, gpu_raw, gpu_count, community,
            commitment_months, region, price_basis, usd_per_gpu_hour, source, observed_on, age_days
        FROM main.v_daily_prices
        WHERE gpu <> 'unknown' AND price_basis = 'list' AND {current_sql("age_days")}
        QUALIFY row_number() OVER (
            PARTITION BY date, gpu, tier
            ORDER BY usd_per_gpu_hour, provider, gpu_count, community, commitment_months NULLS FIRST,
                region NULLS FIRST
        ) = 1
    """,
    # Each price period that replaced an earlier one of the same offer (from price_history).
    "v_price_changes": f"""
        WITH h AS (
            SELECT *,
                lag(usd_per_gpu_hour) OVER w AS old_usd_per_gpu_hour,
                lag(last_seen) OVER w AS previous_snapshot_date,
                lag(price_basis) OVER w AS old_price_basis
            FROM main.v_price_history
            WINDOW w AS (PARTITION BY gpu, {OFFER_KEY} ORDER BY valid_from)
        )
        SELECT valid_from AS snapshot_date, offer_key, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
            commitment_months, region, price_basis, effective_from, source,
            previous_snapshot_date, old_usd_per_gpu_hour,
            usd_per_gpu_hour AS new_usd_per_gpu_hour,
            round(100.0 * (usd_per_gpu_hour - old_usd_per_gpu_hour) / old_usd_per_gpu_hour, 2) AS pct_change
        FROM h
        WHERE old_usd_per_gpu_hour IS NOT NULL AND old_usd_per_gpu_hour <> usd_per_gpu_hour
          AND old_price_basis = price_basis
    """,
    # Per provider: newest successful snapshot and the date of its page, the latest attempt
    # (its status and error: NULL when it succeeded), and the age against the newest snapshot
    # date in the warehouse (the one notion of "now"), by the rule of warehouse/staleness.py.
    "v_provider_freshness": f"""
        WITH runs AS (
            SELECT provider,
                max(snapshot_date) FILTER (WHERE status = 'success') AS last_success_date,
                max(coalesce(observed_on, snapshot_date)) FILTER (WHERE status = 'success') AS last_observed_on,
                max(snapshot_date) AS last_attempt_date,
                -- a struct is never NULL, so a healthy latest run's NULL error is not skipped
                arg_max({{'status': status, 'error': error}}, snapshot_date) AS last_run,
                arg_max(offers, snapshot_date) FILTER (WHERE status = 'success') AS last_offers,
                arg_max(parse_strategy, snapshot_date) AS parse_strategy,
                arg_max(rejected, snapshot_date) AS rejected
            FROM main.provider_runs GROUP BY provider
        ),
        newest AS (SELECT max(snapshot_date) AS d FROM main.provider_runs)
        SELECT r.provider, r.last_success_date, r.last_observed_on, r.last_attempt_date,
            r.last_run.status AS last_status, r.last_run.error AS last_error, r.last_offers,
            (SELECT d FROM newest) AS as_of_date,
            (SELECT d FROM newest) - r.last_observed_on AS days_behind,
            -- Drift: the newest attempt's reader (structured / fallback) and its rejected rows.
            r.parse_strategy, r.rejected,
            {stale_sql("r.last_observed_on", "(SELECT d FROM newest)", "r.last_run.status")} AS stale
        FROM runs r
    """,
    # Every offer with the specs of its GPU and price-performance per offer.
    "v_offers_with_specs": """
        SELECT p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier,
            p.community, p.commitment_months, p.region, p.price_basis, p.effective_from,
            p.available, p.capacity, p.interruption_bucket,
            p.source, p.in_force, p.observed_on, p.snapshot_date - p.observed_on AS age_days,
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
    # Best-value views: list prices in force, observed within MAX_PRICE_AGE_DAYS of the date.
    "v_best_value_by_gpu": f"""
        SELECT * FROM main.v_offers_with_specs
        WHERE memory_gb IS NOT NULL AND in_force AND price_basis = 'list' AND {current_sql("age_days")}
        QUALIFY row_number() OVER (
            PARTITION BY snapshot_date, gpu, tier
            ORDER BY usd_per_gpu_hour, provider, gpu_count, community, commitment_months NULLS FIRST,
                region NULLS FIRST, sku, source
        ) = 1
    """,
    # Per date, tier (on-demand / spot) and metric: the five best offers.
    "v_best_value_by_metric": f"""
        WITH priced AS (
            SELECT * FROM main.v_offers_with_specs
            WHERE memory_gb IS NOT NULL AND in_force AND tier IN ('on_demand', 'spot')
              AND price_basis = 'list' AND {current_sql("age_days")}
        ),
        long AS (
            SELECT 'usd_per_pflop_hour' AS metric, usd_per_pflop_hour AS metric_value, * FROM priced
            WHERE usd_per_pflop_hour IS NOT NULL
            UNION ALL BY NAME
            SELECT 'usd_per_gb_hour' AS metric, usd_per_gb_hour AS metric_value, * FROM priced
        )
        SELECT snapshot_date, metric, tier,
            row_number() OVER (
                PARTITION BY snapshot_date, metric, tier
                ORDER BY metric_value, provider, gpu_count, community, commitment_months NULLS FIRST,
                    region NULLS FIRST, sku, source
            ) AS rank,
            metric_value, provider, gpu, gpu_raw, sku, gpu_count, community, usd_per_gpu_hour,
            usd_per_pflop_hour, usd_per_gb_hour, usd_per_tbps_hour, memory_gb, instance_memory_gb,
            memory_bandwidth_tbps, dense_bf16_tflops, dense_fp8_tflops, form_factor, interconnect, ecc, source
        FROM long
        QUALIFY rank <= 5
    """,
    # Per snapshot date and offer (everything but the region): the cheapest region, named, with
    # how many regions price it. Offers without regions are their own single row.
    "v_cheapest_region": f"""
        SELECT snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community, commitment_months,
            price_basis, region AS cheapest_region, usd_per_gpu_hour, usd_per_instance_hour,
            count(*) OVER w AS regions,
            max(usd_per_gpu_hour) OVER w AS dearest_region_usd_per_gpu_hour,
            observed_on, age_days, source
        FROM main.v_offers_with_specs
        WHERE in_force AND {current_sql("age_days")}
        WINDOW w AS (PARTITION BY snapshot_date, provider, sku, gpu, gpu_count, tier, community,
                     commitment_months, price_basis)
        QUALIFY row_number() OVER (
            PARTITION BY snapshot_date, provider, sku, gpu, gpu_count, tier, community, commitment_months,
                price_basis
            ORDER BY usd_per_gpu_hour, region NULLS FIRST, source
        ) = 1
    """,
    # Offers whose source states availability (Runpod stock, Vast.ai listing counts) with no
    # capacity seen in the last CAPACITY_WATCH_DAYS days although reported throughout.
    "v_capacity_watch": f"""
        WITH newest AS (SELECT max(snapshot_date) AS d FROM main.price_snapshots WHERE source IN ('scrape', 'archive')),
        seen AS (
            SELECT provider, gpu, gpu_raw, gpu_count, community,
                max(snapshot_date) FILTER (WHERE available OR capacity > 0) AS last_capacity_date,
                min(snapshot_date) AS first_reported, max(snapshot_date) AS last_reported
            FROM main.price_snapshots
            WHERE source IN ('scrape', 'archive') AND (available IS NOT NULL OR capacity IS NOT NULL)
            GROUP BY ALL
        )
        SELECT s.*, (SELECT d FROM newest) AS as_of_date, {CAPACITY_WATCH_DAYS} AS window_days
        FROM seen s
        WHERE s.last_reported >= (SELECT d FROM newest) - {CAPACITY_WATCH_DAYS}
          AND s.first_reported <= (SELECT d FROM newest) - {CAPACITY_WATCH_DAYS}
          AND (s.last_capacity_date IS NULL OR s.last_capacity_date < (SELECT d FROM newest) - {CAPACITY_WATCH_DAYS})
    """,
    # The buying guide's comparison: per date and workload, the best-ranked offer (within the
    # workload's limits) among GPU clouds, hyperscalers (Azure, AWS, OCI) and the marketplace
    # (Vast.ai), with its cost per checkpoint and how it compares with the best of the three.
    "v_cloud_vs_hyperscaler": f"""
        WITH kinds(provider, provider_kind) AS (VALUES {_PROVIDER_KINDS_SQL}),
        best AS (
            SELECT r.snapshot_date, r.workload, k.provider_kind, r.rank, r.provider, r.sku, r.gpu,
                r.gpu_count, r.nodes, r.tier, r.community, r.commitment_months, r.region, r.price_basis,
                r.usd_per_gpu_hour, r.hours, r.total_cost_usd, r.cost_per_checkpoint_usd, r.observed_on
            FROM main.workload_rankings r JOIN kinds k USING (provider)
            WHERE coalesce(len(r.excluded_by), 0) = 0
            QUALIFY row_number() OVER (
                PARTITION BY r.snapshot_date, r.workload, k.provider_kind ORDER BY r.rank
            ) = 1
        )
        SELECT *,
            round(cost_per_checkpoint_usd / min(cost_per_checkpoint_usd) OVER (PARTITION BY snapshot_date, workload), 4)
                AS ratio_to_best
        FROM best
    """,
    # Cross-check of the parsers: per provider and day with both, its own scraped page against
    # the catalog history's rows (list prices per GPU, count, tier and community; a scrape
    # without regions compares with the catalog's cheapest region). ``differs``: either side
    # lacks the offer, or the prices differ by more than half a percent.
    "v_catalog_vs_scrape": """
        WITH scraped AS (
            SELECT provider, coalesce(observed_on, snapshot_date) AS day, gpu, gpu_count, tier, community, region,
                min(CAST(usd_per_gpu_hour AS DOUBLE)) AS usd_per_gpu_hour, string_agg(DISTINCT sku, '; ') AS skus
            FROM main.price_snapshots
            WHERE source IN ('scrape', 'archive') AND price_basis = 'list' AND gpu <> 'unknown'
            GROUP BY ALL
        ),
        catalog AS (
            SELECT provider, observed_on AS day, gpu, gpu_count, tier, community, region,
                min(CAST(usd_per_gpu_hour AS DOUBLE)) AS usd_per_gpu_hour, string_agg(DISTINCT sku, '; ') AS skus,
                any_value(source_file) AS source_file
            FROM main.price_snapshots
            WHERE source = 'catalog_history' AND price_basis = 'list'
            GROUP BY ALL
        ),
        both_days AS (SELECT DISTINCT provider, day FROM scraped INTERSECT SELECT DISTINCT provider, day FROM catalog),
        s AS (SELECT s.* FROM scraped s JOIN both_days USING (provider, day)),
        c AS (SELECT c.* FROM catalog c JOIN both_days USING (provider, day)),
        matched AS (
            SELECT coalesce(s.provider, c.provider) AS provider, coalesce(s.day, c.day) AS day,
                coalesce(s.gpu, c.gpu) AS gpu, coalesce(s.gpu_count, c.gpu_count) AS gpu_count,
                coalesce(s.tier, c.tier) AS tier, coalesce(s.community, c.community) AS community,
                coalesce(s.region, c.region) AS region, s.region IS NULL AND s.provider IS NOT NULL AS scrape_has_no_region,
                s.usd_per_gpu_hour AS scraped_usd_per_gpu_hour, c.usd_per_gpu_hour AS catalog_usd_per_gpu_hour,
                s.skus AS scraped_skus, c.skus AS catalog_skus, c.source_file AS catalog_source_file
            FROM s FULL OUTER JOIN c
              ON s.provider = c.provider AND s.day = c.day AND s.gpu = c.gpu AND s.gpu_count = c.gpu_count
             AND s.tier = c.tier AND s.community = c.community
             AND (s.region IS NOT DISTINCT FROM c.region OR s.region IS NULL)
        )
        SELECT provider, day, gpu, gpu_count, tier, community,
            CASE WHEN scrape_has_no_region THEN NULL ELSE region END AS region,
            min(scraped_usd_per_gpu_hour) AS scraped_usd_per_gpu_hour,
            min(catalog_usd_per_gpu_hour) AS catalog_usd_per_gpu_hour,
            round(100.0 * (min(catalog_usd_per_gpu_hour) - min(scraped_usd_per_gpu_hour))
                  / min(scraped_usd_per_gpu_hour), 2) AS pct_difference,
            (min(scraped_usd_per_gpu_hour) IS NULL OR min(catalog_usd_per_gpu_hour) IS NULL
             OR abs(min(catalog_usd_per_gpu_hour) - min(scraped_usd_per_gpu_hour))
                > 0.005 * min(scraped_usd_per_gpu_hour)) AS differs,
            any_value(scraped_skus) AS scraped_skus, string_agg(DISTINCT catalog_skus, '; ') AS catalog_skus,
            any_value(catalog_source_file) AS catalog_source_file
        FROM matched
        GROUP BY provider, day, gpu, gpu_count, tier, community, CASE WHEN scrape_has_no_region THEN NULL ELSE region END
    """,
    "v_unknown_gpus": """
        SELECT p.provider, p.gpu_raw, min(p.snapshot_date) AS first_seen, max(p.snapshot_date) AS last_seen,
            count(*) AS offers, p.gpu AS slug, (g.slug IS NULL AND p.gpu <> 'unknown') AS slug_missing_from_catalog
        FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
        WHERE p.gpu = 'unknown' OR g.slug IS NULL
        GROUP BY p.provider, p.gpu_raw, p.gpu, g.slug
    """,
    # Best-ranked offer per workload, date and provider / GPU type (current prices within the
    # workload's limits: rankings also keep older prices, marked excluded_by 'price_age').
    "v_workload_best_by_provider": """
        SELECT * FROM main.workload_rankings WHERE coalesce(len(excluded_by), 0) = 0
        QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, provider ORDER BY rank) = 1
    """,
    "v_workload_best_by_gpu": """
        SELECT * FROM main.workload_rankings WHERE coalesce(len(excluded_by), 0) = 0
        QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, gpu ORDER BY rank) = 1
    """,
}

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


def _store_sorted(con: duckdb.DuckDBPyConnection, table: str, query: str, order_by: str) -> None:
    """``CREATE TABLE table AS query ORDER BY order_by`` in two steps: the rows first, then sorted.

    One fused statement keeps the query's join state and the sort's runs pinned together, and
    runs out of a capped memory on a long history; each step alone spills to disk."""
    con.execute(f"CREATE OR REPLACE TABLE main._staged_{table} AS {query}")
    try:
        con.execute(
            f"CREATE OR REPLACE TABLE main.{table} AS SELECT * FROM main._staged_{table} ORDER BY {order_by}"
        )
    finally:
        con.execute(f"DROP TABLE IF EXISTS main._staged_{table}")


def materialize_price_history(con: duckdb.DuckDBPyConnection) -> int:
    """Store price_history as a table sorted by GPU (for the published copy).

    The view computes windows over all history; analysts filter it by GPU, so the copy
    keeps the periods precomputed and sorted, which makes such a filter read a few row groups.
    """
    _store_sorted(
        con, "price_periods", "SELECT * FROM main.v_price_history", "gpu, provider, valid_from, offer_key"
    )
    con.execute("CREATE OR REPLACE VIEW analytics.price_history AS SELECT * FROM main.price_periods")
    # Views built on the periods (the daily series, price changes) read the stored ones: the same
    # rows, without computing the windows over all history again.
    con.execute("CREATE OR REPLACE VIEW main.v_price_history AS SELECT * FROM main.price_periods")
    # The daily series (and the views built on it) read the precomputed rows, sorted by GPU.
    _store_sorted(
        con, "daily_price_rows", "SELECT * FROM main.v_daily_prices", "gpu, date, provider, offer_key"
    )
    con.execute("CREATE OR REPLACE VIEW main.v_daily_prices AS SELECT * FROM main.daily_price_rows")
    row = con.execute("SELECT count(*) FROM main.price_periods").fetchone()
    return int(row[0]) if row else 0
