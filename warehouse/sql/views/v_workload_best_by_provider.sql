-- Best-ranked offer per workload, date and provider / GPU type (current prices within the
-- workload's limits: rankings also keep older prices, marked excluded_by 'price_age').
CREATE OR REPLACE VIEW main.v_workload_best_by_provider AS
SELECT * FROM main.workload_rankings WHERE coalesce(len(excluded_by), 0) = 0
QUALIFY row_number() OVER (PARTITION BY snapshot_date, workload, provider ORDER BY rank) = 1
