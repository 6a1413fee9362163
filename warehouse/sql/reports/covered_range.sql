SELECT min(snapshot_date), max(snapshot_date) FROM price_snapshots
