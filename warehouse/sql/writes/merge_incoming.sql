-- merge_by_key's input (registered as _incoming_history) with its price as the table stores it
-- (DECIMAL(12, 4)), so a price the table has rounded compares equal.
SELECT * REPLACE (CAST(usd_per_gpu_hour AS DECIMAL(12, 4)) AS usd_per_gpu_hour) FROM _incoming_history
