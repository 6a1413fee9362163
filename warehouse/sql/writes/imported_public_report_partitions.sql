-- The partitions holding rows earlier imports of public observations added
-- (delete_imported_public_reports removes them).
SELECT DISTINCT provider, snapshot_date FROM price_snapshots
WHERE source = 'public_report' AND source_file IS DISTINCT FROM $bundled_source_file
