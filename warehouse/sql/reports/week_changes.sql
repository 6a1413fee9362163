SELECT snapshot_date, previous_snapshot_date, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
    commitment_months, region, price_basis,
    CAST(old_usd_per_gpu_hour AS DOUBLE) AS old_usd_per_gpu_hour,
    CAST(new_usd_per_gpu_hour AS DOUBLE) AS new_usd_per_gpu_hour
FROM analytics.price_changes
WHERE snapshot_date BETWEEN ? AND ? AND old_usd_per_gpu_hour <> new_usd_per_gpu_hour
