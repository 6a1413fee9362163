-- merge_by_key: known keys whose compared columns changed are deleted (merge_insert adds the
-- input's row back: it becomes the importer's); unchanged rows stay exactly as they are.
DELETE FROM price_snapshots p
WHERE p.source = $source AND p.observed_on BETWEEN $first AND $last
    AND EXISTS (
        SELECT 1 FROM ({include:writes/merge_incoming}) i
        WHERE row({identifiers:key:p}) IS NOT DISTINCT FROM row({identifiers:key:i})
            AND row({identifiers:compare:p}) IS DISTINCT FROM row({identifiers:compare:i})
    )
