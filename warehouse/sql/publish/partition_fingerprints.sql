-- One row per (provider, snapshot_date) partition of price_snapshots: how many rows it holds and
-- when they were written. Every write stamps ingested_at, so a partition that was added,
-- replaced, merged into or pruned shows a different row here (the publish compares them).
SELECT provider, snapshot_date, count(*) AS row_count,
    min(ingested_at) AS first_ingested, max(ingested_at) AS last_ingested
FROM price_snapshots
GROUP BY provider, snapshot_date
