-- Per date from $first to $last and per provider: the offers of the provider's newest snapshot at
-- or before the date whose rows are in force, as priced on it (a scheduled price whose date has come
-- replaces the current one; one still in the future is left out), each offer once, at its cheapest
-- region: {region_peers} tell an offer's regions apart and {cheapest_region_order} picks one, the
-- rule of analytics.cheapest_region. Which rows count is the rule of the best-offer views
-- (main.v_snapshots_in_force): the product's own scrape wins its day, and an imported price (a
-- cited public report, catalog history) counts for a provider and date without a scrape.
-- $bases: the price bases to keep (NULL: all); $start: queries/offers_as_of_start.
-- The columns are the ones the ranking (models/ranking/offers.py) and queries.cheapest_list_offer
-- read: the windows below carry every column they are given, so the others stay out.
WITH days AS (
    SELECT CAST(d AS DATE) AS as_of
    FROM range(CAST($first AS DATE), CAST($last AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) t(d)
),
dated AS ({include:queries/offer_dates}),
newest AS (
    SELECT days.as_of, dated.provider, max(dated.snapshot_date) AS snapshot_date
    FROM days JOIN dated ON dated.snapshot_date <= days.as_of GROUP BY ALL
),
priced AS (
    SELECT n.as_of AS _as_of, p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_count,
        p.vram_gb, p.tier, p.community, p.commitment_months, p.region,
        CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
        p.interruption_bucket, p.effective_from, p.source, p.price_basis,
        p.observed_on
    FROM main.v_snapshots_in_force p JOIN newest n USING (provider, snapshot_date)
    -- $start (queries/offers_as_of_start) as a constant: the window of v_snapshots_in_force (by
    -- date) computes only the dates read, not the whole history
    WHERE p.snapshot_date BETWEEN $start AND $last
      AND (p.in_force OR p.effective_from > p.snapshot_date)  -- a scheduled price counts from its date
      AND (p.effective_from IS NULL OR p.effective_from <= n.as_of)
      AND (CAST($bases AS VARCHAR[]) IS NULL OR list_contains(CAST($bases AS VARCHAR[]), p.price_basis))
    QUALIFY row_number() OVER (
        PARTITION BY n.as_of, {snapshot_row_key}
        ORDER BY p.effective_from DESC NULLS LAST
    ) = 1
)
SELECT * FROM priced
QUALIFY row_number() OVER (PARTITION BY _as_of, {region_peers} ORDER BY {cheapest_region_order}) = 1
-- the whole offer key: ties in rank_offers keep this order, so it must be total
ORDER BY _as_of, provider, sku, gpu_count, tier, community, commitment_months,
         region, price_basis, effective_from, source
