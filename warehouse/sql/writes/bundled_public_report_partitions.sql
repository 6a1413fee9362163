-- The partitions holding bundled public-report rows (delete_bundled_public_reports removes them).
SELECT DISTINCT provider, snapshot_date FROM price_snapshots
WHERE source = 'public_report' AND source_file = $bundled_source_file
