-- Provider days from $first to $last with both a successful scrape and $source's history rows.
SELECT count(*) FROM (
    SELECT DISTINCT provider, snapshot_date FROM provider_runs
    WHERE status = 'success' AND snapshot_date BETWEEN $first AND $last
) r
WHERE EXISTS (SELECT 1 FROM price_snapshots p WHERE p.source = $source AND p.provider = r.provider
              AND p.snapshot_date = r.snapshot_date)
