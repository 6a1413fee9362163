-- The fingerprints of the partitions ($providers[i], $dates[i]), as two parallel lists (a write
-- touched them; fingerprints_insert computes them again).
DELETE FROM partition_fingerprints WHERE (provider, snapshot_date) IN (
    SELECT unnest($providers::VARCHAR[]), unnest($dates::DATE[])
)
