-- One row per offer per price period: each offer has one line (OFFER_KEY) and at most one
-- open period (valid_to NULL). A period ends where the offer's next price starts (a
-- scheduled price ends it on its effective date) or on the provider's first later page
-- without the offer. Partitioned by GPU first, so `WHERE gpu = ...` prunes the scan.
CREATE OR REPLACE VIEW main.v_price_history AS
WITH o AS (
    SELECT *,
        sum(CASE WHEN prev_price IS DISTINCT FROM usd_per_gpu_hour
                  OR prev_basis IS DISTINCT FROM price_basis THEN 1 ELSE 0 END)
            OVER (PARTITION BY gpu, {offer_key} ORDER BY observed_at) AS period
    FROM (
        SELECT *,
            lag(usd_per_gpu_hour) OVER w AS prev_price,
            lag(price_basis) OVER w AS prev_basis
        FROM main.v_offer_observations
        WINDOW w AS (PARTITION BY gpu, {offer_key} ORDER BY observed_at)
    )
),
periods AS (
    SELECT offer_key, {offer_key}, period,
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
    SELECT *, lead(valid_from) OVER (PARTITION BY gpu, {offer_key} ORDER BY valid_from) AS next_valid_from
    FROM periods
),
-- A provider's later page closes an offer it no longer lists: a scraped page any offer,
-- a catalog-history day the catalog's own offers.
provider_pages AS (
    SELECT DISTINCT provider, source IN {scraped_sources} AS scraped,
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
