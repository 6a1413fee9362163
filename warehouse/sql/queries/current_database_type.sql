-- The kind of the connection's current database ('ducklake' for a DuckLake warehouse).
SELECT type FROM duckdb_databases() WHERE database_name = current_database()
