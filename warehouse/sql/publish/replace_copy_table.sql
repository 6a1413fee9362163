-- One of the copy's unpartitioned tables replaced whole by the warehouse's (a table name read from
-- duckdb_tables(): DuckDB binds no parameter for a name).
DELETE FROM {analytics_copy}.main.{identifier:table};
INSERT INTO {analytics_copy}.main.{identifier:table} BY NAME SELECT * FROM main.{identifier:table};
