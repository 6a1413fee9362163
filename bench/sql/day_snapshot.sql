-- One day's snapshot rows, as the daily run would write them again.
SELECT * FROM price_snapshots WHERE snapshot_date = $day ORDER BY provider, sku
