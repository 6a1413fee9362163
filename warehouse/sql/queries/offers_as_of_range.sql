-- Per date from $first to $last and per provider: the offers of the provider's newest snapshot at
-- or before the date whose rows are in force, as priced on it (a scheduled price whose date has come
-- replaces the current one; one still in the future is left out). Which rows count is the rule of
-- the best-offer views (main.v_snapshots_in_force): the product's own scrape wins its day, and an
-- imported price (a cited public report, catalog history) counts for a provider and date without a
-- scrape. $bases: the price bases to keep (NULL: all); $start: queries/offers_as_of_start.
WITH days AS (
    SELECT CAST(d AS DATE) AS as_of
    FROM range(CAST($first AS DATE), CAST($last AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) t(d)
),
dated AS ({include:queries/offer_dates}),
newest AS (
    SELECT days.as_of, dated.provider, max(dated.snapshot_date) AS snapshot_date
    FROM days JOIN dated ON dated.snapshot_date <= days.as_of GROUP BY ALL
)
SELECT n.as_of AS _as_of, p.* EXCLUDE (in_force)
    REPLACE (CAST(p.usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
             CAST(p.usd_per_instance_hour AS DOUBLE) AS usd_per_instance_hour)
FROM main.v_snapshots_in_force p JOIN newest n USING (provider, snapshot_date)
-- $start (queries/offers_as_of_start) as a constant: the window of v_snapshots_in_force (by date)
-- computes only the dates read, not the whole history
WHERE p.snapshot_date BETWEEN $start AND $last
  AND (p.in_force OR p.effective_from > p.snapshot_date)  -- a scheduled price counts from its date
  AND (p.effective_from IS NULL OR p.effective_from <= n.as_of)
  AND (CAST($bases AS VARCHAR[]) IS NULL OR list_contains(CAST($bases AS VARCHAR[]), p.price_basis))
QUALIFY row_number() OVER (
    PARTITION BY n.as_of, {snapshot_row_key}
    ORDER BY p.effective_from DESC NULLS LAST
) = 1
-- the whole offer key: ties in rank_offers keep this order, so it must be total
ORDER BY n.as_of, p.provider, p.sku, p.gpu_count, p.tier, p.community, p.commitment_months,
         p.region, p.price_basis, p.effective_from, p.source
