-- The warehouse's rows of the changed partitions, into the copy.
INSERT INTO _analytics_copy.main.price_snapshots BY NAME
SELECT p.* FROM main.price_snapshots p
SEMI JOIN _pub_changed c ON c.provider = p.provider AND c.snapshot_date = p.snapshot_date
WHERE p.snapshot_date BETWEEN $lo AND $hi
ORDER BY p.snapshot_date, p.provider, p.sku
