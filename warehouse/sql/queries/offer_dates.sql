-- The dates a provider has prices for, up to $last: its successful runs, and the dates of imported
-- prices (in force only where no scrape of that date exists: v_snapshots_in_force decides).
SELECT DISTINCT provider, snapshot_date FROM main.provider_runs
WHERE status = 'success' AND snapshot_date <= $last
UNION
SELECT DISTINCT provider, snapshot_date FROM main.price_snapshots
WHERE source NOT IN {scraped_sources} AND snapshot_date <= $last
