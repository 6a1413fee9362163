WITH daily AS (
    SELECT gpu, provider, community, price_basis, snapshot_date,
        min(CAST(usd_per_gpu_hour AS DOUBLE)) AS price
    FROM price_snapshots
    WHERE list_contains(?, gpu) AND tier = 'on_demand' AND snapshot_date <= ?
      AND coalesce(effective_from, snapshot_date) <= snapshot_date
    GROUP BY ALL
)
SELECT * FROM daily
WHERE snapshot_date >= ?
   OR snapshot_date = (SELECT max(d.snapshot_date) FROM daily d
                       WHERE d.gpu = daily.gpu AND d.provider = daily.provider
                         AND d.community = daily.community
                         AND d.price_basis IS NOT DISTINCT FROM daily.price_basis
                         AND d.snapshot_date < ?)
ORDER BY gpu, provider, community, price_basis, snapshot_date
