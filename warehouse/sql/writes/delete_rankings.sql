-- The rankings of the dates in $dates (a ranking run replaces them).
DELETE FROM workload_rankings WHERE snapshot_date IN (SELECT unnest($dates::DATE[]))
