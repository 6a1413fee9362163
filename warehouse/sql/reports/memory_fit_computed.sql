-- When each workload's sweep was computed: the newest row (read apart from the rows, so that
-- thousands of rows do not each carry a time zone conversion).
SELECT workload, max(computed_at) AS computed_at
FROM memory_fit WHERE workload = ANY(?)
GROUP BY workload
