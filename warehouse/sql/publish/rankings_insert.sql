INSERT INTO _analytics_copy.main.workload_rankings BY NAME
SELECT * FROM main.workload_rankings WHERE snapshot_date IN (SELECT unnest($dates::DATE[]))
