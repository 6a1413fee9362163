DELETE FROM quarantine WHERE source = ? AND provider = ? AND raw_row = ?
