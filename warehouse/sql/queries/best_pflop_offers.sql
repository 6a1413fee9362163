-- $day's five best list prices in force per PFLOP-hour.
SELECT provider, gpu, gpu_count, tier, usd_per_gpu_hour, usd_per_pflop_hour, usd_per_gb_hour
FROM main.v_offers_with_specs
WHERE snapshot_date = $day AND usd_per_pflop_hour IS NOT NULL AND in_force AND price_basis = 'list'
ORDER BY usd_per_pflop_hour, provider, gpu_count, sku LIMIT 5
