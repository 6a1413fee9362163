-- Every partition's fingerprint computed from the whole table (publish/partition_fingerprints:
-- the one rule): for a new fingerprint table (migration 12) and writers of price_snapshots
-- outside the product's writes (the benchmark's generator).
DELETE FROM partition_fingerprints;
INSERT INTO partition_fingerprints (provider, snapshot_date, row_count, first_ingested, last_ingested)
WITH fingerprinted_rows AS (SELECT provider, snapshot_date, ingested_at FROM price_snapshots)
{include:publish/partition_fingerprints};
