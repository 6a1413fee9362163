-- An imported history's quarantine entry for one raw row: the first day it was seen, its reason.
SELECT min(snapshot_date), any_value(reason) FROM quarantine WHERE source = ? AND provider = ? AND raw_row = ?
