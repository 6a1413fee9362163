SELECT max(snapshot_date) FROM price_snapshots
