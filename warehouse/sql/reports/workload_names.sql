SELECT DISTINCT workload FROM workload_rankings WHERE snapshot_date <= ?
UNION SELECT DISTINCT workload FROM memory_fit
