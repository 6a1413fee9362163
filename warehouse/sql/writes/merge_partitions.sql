-- merge_by_key: the partitions (provider, snapshot_date) the merge may change, read before it
-- writes: the input's (merge_insert adds rows there) and those of the source's rows that share
-- a key with the input (merge_delete_changed may replace them) or lie in a group the input
-- covers (merge_prune may remove them; without pruning the group is the key).
SELECT provider, CAST(snapshot_date AS DATE) FROM _incoming_history
UNION
SELECT p.provider, p.snapshot_date FROM ({include:writes/merge_existing}) p
WHERE EXISTS (
        SELECT 1 FROM _incoming_history i WHERE row({identifiers:key:p}) IS NOT DISTINCT FROM row({identifiers:key:i})
    )
    OR EXISTS (
        SELECT 1 FROM _incoming_history g
        WHERE row({identifiers:prune_within:g}) IS NOT DISTINCT FROM row({identifiers:prune_within:p})
    )
