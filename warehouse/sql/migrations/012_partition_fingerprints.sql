-- Version 12: each (provider, snapshot_date) partition's fingerprint (row count, first and last
-- ingested_at), kept by every write of price_snapshots in its own transaction, so a publish
-- reads this small table instead of aggregating the whole history
-- (warehouse/partition_fingerprints.py). Filled here from the rows by the same rule the publish
-- used (publish/partition_fingerprints), so a copy's published_partitions compare equal.
-- Only the writers' table: the analysts' copy does not hold it (schema.COPY_NEUTRAL_VERSIONS).
-- Idempotent like 008.
CREATE TABLE IF NOT EXISTS partition_fingerprints (
    provider        VARCHAR NOT NULL,
    snapshot_date   DATE NOT NULL,
    row_count       BIGINT NOT NULL,
    first_ingested  TIMESTAMPTZ NOT NULL,
    last_ingested   TIMESTAMPTZ NOT NULL
);
{include:writes/fingerprints_all};
