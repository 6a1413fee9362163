-- Cheapest current on-demand list price of each of $gpus on $day (NULL: the newest snapshot date).
SELECT gpu, provider, gpu_count, community, price_basis, usd_per_gpu_hour, observed_on
FROM main.v_cheapest_by_gpu
WHERE list_contains($gpus, gpu) AND tier = 'on_demand'
  AND snapshot_date = coalesce(CAST($day AS DATE), (SELECT max(snapshot_date) FROM main.price_snapshots))
ORDER BY gpu
