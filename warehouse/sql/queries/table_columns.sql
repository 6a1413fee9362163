-- Every column of every table in main, in order (warehouse/tables.py reads schema.sql with it).
SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns()
WHERE table_oid IN (SELECT table_oid FROM duckdb_tables() WHERE schema_name = 'main')
ORDER BY table_name, column_index
