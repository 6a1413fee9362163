-- $provider's scraped/replayed offers of $day, as check-live compares them.
SELECT sku, gpu_count, tier, community, commitment_months, region,
    CAST(effective_from AS VARCHAR) AS effective_from, price_basis,
    CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour
FROM main.price_snapshots
WHERE provider = $provider AND snapshot_date = $day AND source IN {scraped_sources}
