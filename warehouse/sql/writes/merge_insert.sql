-- merge_by_key: the input's keys the source does not hold (new, or changed and just deleted),
-- one row per key.
INSERT INTO price_snapshots ({columns:price_snapshots})
SELECT {columns:price_snapshots} FROM _incoming_history i WHERE NOT EXISTS (
    SELECT 1 FROM ({include:writes/merge_existing}) p
    WHERE row({identifiers:key:p}) IS NOT DISTINCT FROM row({identifiers:key:i})
)
QUALIFY row_number() OVER (PARTITION BY {identifiers:key}) = 1
