-- One provider's quarantined rows of a date and snapshot source (a run's report replaces them).
DELETE FROM quarantine WHERE provider = ? AND snapshot_date = ? AND source = ?
