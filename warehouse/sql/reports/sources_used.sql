SELECT provider, snapshot_date, list(DISTINCT source ORDER BY source) AS sources, count(*) AS offers
FROM price_snapshots WHERE snapshot_date BETWEEN ? AND ?
GROUP BY provider, snapshot_date ORDER BY provider, snapshot_date
