-- The warehouse's partition fingerprints now, beside the copy's (publish/changed_partitions).
CREATE OR REPLACE TEMP TABLE _pub_now AS
{include:publish/partition_fingerprints}
