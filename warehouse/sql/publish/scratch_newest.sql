-- The scratch database's newest snapshot date.
SELECT max(snapshot_date) FROM main.price_snapshots
