SELECT max(snapshot_date) FROM price_snapshots WHERE snapshot_date <= ?
