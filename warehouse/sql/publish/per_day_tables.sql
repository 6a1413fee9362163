-- The warehouse's tables with a provider and a snapshot_date column (kept per provider and day).
SELECT table_name FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main' AND column_name IN ('provider', 'snapshot_date')
GROUP BY table_name HAVING count(*) = 2
