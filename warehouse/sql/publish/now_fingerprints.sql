-- The warehouse's partition fingerprints now, beside the copy's (publish/changed_partitions): the
-- table the writes keep (warehouse/partition_fingerprints.py), not a scan of the whole history.
CREATE OR REPLACE TEMP TABLE _pub_now AS
SELECT provider, snapshot_date, row_count, first_ingested, last_ingested FROM main.partition_fingerprints
