-- merge_by_key's prune_within: the source's rows in a group the input covers (e.g. a provider's
-- day) whose key the input no longer has are removed (DuckDB returns how many).
DELETE FROM price_snapshots p
WHERE source = $source AND observed_on BETWEEN $first AND $last
    AND EXISTS (
        SELECT 1 FROM _incoming_history g
        WHERE row({identifiers:prune_within:g}) IS NOT DISTINCT FROM row({identifiers:prune_within:p})
    )
    AND NOT EXISTS (
        SELECT 1 FROM _incoming_history i WHERE row({identifiers:key:p}) IS NOT DISTINCT FROM row({identifiers:key:i})
    )
