-- The fingerprints of the partitions the finished copy holds (run on a copy built whole), from
-- its own rows. The warehouse's own fingerprint table, which a byte copy or a lake's COPY FROM
-- DATABASE brings along, is dropped: the copy keeps published_partitions and nothing updates
-- the other there.
CREATE OR REPLACE TABLE main.published_partitions AS
WITH fingerprinted_rows AS (SELECT * FROM main.price_snapshots)
{include:publish/partition_fingerprints};
DROP TABLE IF EXISTS main.partition_fingerprints;
