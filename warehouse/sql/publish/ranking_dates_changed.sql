-- Snapshot dates whose workload rankings differ between the warehouse and the copy.
WITH n AS (
    SELECT snapshot_date, count(*) AS row_count, max(computed_at) AS last_computed
    FROM main.workload_rankings GROUP BY snapshot_date
),
o AS (
    SELECT snapshot_date, count(*) AS row_count, max(computed_at) AS last_computed
    FROM _analytics_copy.main.workload_rankings GROUP BY snapshot_date
)
SELECT coalesce(n.snapshot_date, o.snapshot_date) AS snapshot_date
FROM n FULL OUTER JOIN o ON o.snapshot_date = n.snapshot_date
WHERE n.row_count IS DISTINCT FROM o.row_count OR n.last_computed IS DISTINCT FROM o.last_computed
