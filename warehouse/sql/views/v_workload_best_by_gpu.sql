CREATE OR REPLACE VIEW main.v_workload_best_by_gpu AS
SELECT * FROM main.workload_rankings WHERE coalesce(len(excluded_by), 0) = 0
QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, gpu ORDER BY rank) = 1
