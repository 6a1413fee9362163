-- The fingerprint rule: one row per (provider, snapshot_date) partition of price_snapshots, how
-- many rows it holds and when they were written. Every write stamps ingested_at, so a partition
-- that was added, replaced, merged into or pruned shows a different row here (the publish
-- compares them). Over ``fingerprinted_rows``, a CTE the including statement defines: the whole
-- table, or only the partitions a write touched (warehouse/partition_fingerprints.py keeps the
-- warehouse's table partition_fingerprints equal to this over the whole table).
SELECT provider, snapshot_date, count(*) AS row_count,
    min(ingested_at) AS first_ingested, max(ingested_at) AS last_ingested
FROM fingerprinted_rows
GROUP BY provider, snapshot_date
