-- Rows of one snapshot date (no rows: its Parquet partition is removed).
SELECT count(*) FROM price_snapshots WHERE snapshot_date = ?
