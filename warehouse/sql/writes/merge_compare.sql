-- merge_by_key (warehouse/history_writes.py): of the input's keys, how many are new and how many
-- are known with other values in the compared columns. Keys match NULL parts as equal.
SELECT
    count(*) FILTER (WHERE p.provider IS NULL) AS added,
    count(*) FILTER (
        WHERE p.provider IS NOT NULL AND row({identifiers:compare:p}) IS DISTINCT FROM row({identifiers:compare:i})
    ) AS updated
FROM (
    SELECT * FROM ({include:writes/merge_incoming}) QUALIFY row_number() OVER (PARTITION BY {identifiers:key}) = 1
) i
LEFT JOIN ({include:writes/merge_existing}) p ON row({identifiers:key:p}) IS NOT DISTINCT FROM row({identifiers:key:i})
