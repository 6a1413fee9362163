-- How many price rows the warehouse holds.
SELECT count(*) FROM price_snapshots
