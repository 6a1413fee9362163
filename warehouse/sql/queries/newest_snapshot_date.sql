-- The one notion of "now" for rank, report, history and freshness: the newest snapshot date.
SELECT max(snapshot_date) FROM main.price_snapshots
