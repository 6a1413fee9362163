SELECT count(*) FROM price_snapshots WHERE source = 'public_report' AND source_file = $bundled_source_file
