SELECT count(*) FROM main.price_snapshots
