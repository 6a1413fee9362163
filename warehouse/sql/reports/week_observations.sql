-- Every scraped observation of an offer up to the week's end, dated by the page it was read from
-- (observed_on; the snapshot date when unknown), for "this week's changes": each offer's price
-- inside the week against its last observation before the week (reports.loading.week_changes).
-- Scheduled prices not yet in force by the week's end are left out.
SELECT provider, sku, gpu, gpu_raw, gpu_count, tier, community, commitment_months, region, price_basis,
    CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
    coalesce(observed_on, snapshot_date) AS seen
FROM price_snapshots
WHERE source IN {scraped_sources}
  AND snapshot_date <= $end
  AND coalesce(observed_on, snapshot_date) <= $end
  AND coalesce(effective_from, snapshot_date) <= $end
ORDER BY seen
