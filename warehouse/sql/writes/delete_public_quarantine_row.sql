-- A public-report import's quarantined row (the import writes it again).
DELETE FROM quarantine WHERE source = ? AND raw_row = ?
