-- Whether this database has price_snapshots (a first-version warehouse, without schema_version).
SELECT count(*) FROM duckdb_tables() WHERE table_name = 'price_snapshots' AND database_name = current_database()
