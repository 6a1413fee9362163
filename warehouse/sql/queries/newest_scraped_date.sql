-- $provider's newest scraped/replayed snapshot date.
SELECT max(snapshot_date) FROM main.price_snapshots WHERE provider = $provider AND source IN {scraped_sources}
