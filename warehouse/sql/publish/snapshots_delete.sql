-- The copy's rows of the changed partitions ($lo and $hi bound their dates: row groups outside are skipped).
DELETE FROM _analytics_copy.main.price_snapshots p
WHERE p.snapshot_date BETWEEN $lo AND $hi
  AND EXISTS (SELECT 1 FROM _pub_changed c WHERE c.provider = p.provider AND c.snapshot_date = p.snapshot_date)
