-- One of the copy's tables kept per (provider, snapshot_date) (runs, pages, quarantined rows: one
-- per provider per day, so they grow with the history) brought up to date with the warehouse's:
-- only the groups whose rows differ, either way, are replaced (a table name read from
-- duckdb_tables(): DuckDB binds no parameter for a name). Both tables are read, but the copy is
-- not rewritten whole on every publish (nor checkpointed whole after).
CREATE OR REPLACE TEMP TABLE _pub_differ AS
SELECT DISTINCT provider, snapshot_date FROM (
    (SELECT * FROM main.{identifier:table} EXCEPT ALL SELECT * FROM {analytics_copy}.main.{identifier:table})
    UNION ALL
    (SELECT * FROM {analytics_copy}.main.{identifier:table} EXCEPT ALL SELECT * FROM main.{identifier:table})
);
DELETE FROM {analytics_copy}.main.{identifier:table} t
WHERE EXISTS (SELECT 1 FROM _pub_differ d WHERE d.provider = t.provider AND d.snapshot_date IS NOT DISTINCT FROM t.snapshot_date);
INSERT INTO {analytics_copy}.main.{identifier:table} BY NAME
SELECT * FROM main.{identifier:table} t
WHERE EXISTS (SELECT 1 FROM _pub_differ d WHERE d.provider = t.provider AND d.snapshot_date IS NOT DISTINCT FROM t.snapshot_date);
DROP TABLE temp.main._pub_differ;
