-- Rows a day per provider on one date (the generated history's shape, for the figure's details).
SELECT provider, count(*) AS rows
FROM price_snapshots WHERE snapshot_date = $day
GROUP BY provider ORDER BY provider
