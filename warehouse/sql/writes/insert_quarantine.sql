-- One quarantine row, in the table's column order (snapshot_date, provider, raw_row, reason,
-- raw_sha256, source, quarantined_at).
INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, ?)
