-- The dates a provider has prices for, up to $last: its successful runs, and the dates of imported
-- prices (in force only where no scrape of that date exists: v_snapshots_in_force decides).
-- IN {imported_sources}, not NOT IN {scraped_sources}: row groups whose sources are all scraped
-- are skipped by their min/max, so this does not read the whole history's source column.
SELECT DISTINCT provider, snapshot_date FROM main.provider_runs
WHERE status = 'success' AND snapshot_date <= $last
UNION
SELECT DISTINCT provider, snapshot_date FROM main.price_snapshots
WHERE source IN {imported_sources} AND snapshot_date <= $last
