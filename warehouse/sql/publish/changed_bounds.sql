-- The changed partitions' first and last dates (constants let later scans skip row groups).
SELECT min(snapshot_date), max(snapshot_date) FROM _pub_changed
