-- The fingerprints of the partitions the finished copy holds (run on the copy).
CREATE OR REPLACE TABLE main.published_partitions AS
{include:publish/partition_fingerprints}
