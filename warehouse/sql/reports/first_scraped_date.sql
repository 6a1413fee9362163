SELECT min(snapshot_date) FROM price_snapshots WHERE source IN {scraped_sources}
