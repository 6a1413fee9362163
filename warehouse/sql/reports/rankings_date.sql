SELECT max(snapshot_date) FROM workload_rankings WHERE workload = ? AND snapshot_date <= ?
