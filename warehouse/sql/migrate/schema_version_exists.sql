-- Whether this database has the schema_version table (a warehouse from version 2 on).
SELECT count(*) FROM duckdb_tables()
WHERE schema_name = 'main' AND table_name = 'schema_version' AND database_name = current_database()
