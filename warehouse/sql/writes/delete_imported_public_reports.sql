-- Every row earlier imports of public observations added (never the bundled history).
DELETE FROM price_snapshots WHERE source = 'public_report' AND source_file IS DISTINCT FROM $bundled_source_file
