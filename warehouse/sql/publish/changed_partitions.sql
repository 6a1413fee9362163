-- The partitions (provider, snapshot_date) whose rows differ between the warehouse (_pub_now)
-- and the copy being updated (its published_partitions), and those whose run status changed (a
-- scraped day decides which imported rows are in force).
CREATE OR REPLACE TEMP TABLE _pub_changed AS
SELECT coalesce(n.provider, o.provider) AS provider, coalesce(n.snapshot_date, o.snapshot_date) AS snapshot_date
FROM _pub_now n
FULL OUTER JOIN _analytics_copy.main.published_partitions o
  ON o.provider = n.provider AND o.snapshot_date = n.snapshot_date
WHERE n.row_count IS DISTINCT FROM o.row_count
   OR n.first_ingested IS DISTINCT FROM o.first_ingested
   OR n.last_ingested IS DISTINCT FROM o.last_ingested
UNION
SELECT coalesce(n.provider, o.provider), coalesce(n.snapshot_date, o.snapshot_date)
FROM main.provider_runs n
FULL OUTER JOIN _analytics_copy.main.provider_runs o
  ON o.provider = n.provider AND o.snapshot_date = n.snapshot_date
WHERE n.status IS DISTINCT FROM o.status
