-- A whole build's chunks: the warehouse's rows per provider and region (run on the copy).
SELECT provider, region, count(*) AS rows
FROM main.price_snapshots
GROUP BY provider, region
ORDER BY provider, region NULLS FIRST
