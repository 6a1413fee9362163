-- The fingerprints of the partitions ($providers[i], $dates[i]) computed again from their rows
-- (publish/partition_fingerprints: the one rule). $first and $last bound their dates as
-- constants, so the scan skips the row groups outside them. A partition left without rows gets
-- no fingerprint.
INSERT INTO partition_fingerprints (provider, snapshot_date, row_count, first_ingested, last_ingested)
WITH fingerprinted_rows AS (
    SELECT provider, snapshot_date, ingested_at FROM price_snapshots
    WHERE snapshot_date BETWEEN $first AND $last
        AND (provider, snapshot_date) IN (SELECT unnest($providers::VARCHAR[]), unnest($dates::DATE[]))
)
{include:publish/partition_fingerprints}
