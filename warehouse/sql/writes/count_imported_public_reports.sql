-- Rows earlier imports of public observations added (never the bundled history).
SELECT count(*) FROM price_snapshots WHERE source = 'public_report' AND source_file IS DISTINCT FROM $bundled_source_file
