-- The tables of one attached database's main schema.
SELECT table_name FROM duckdb_tables() WHERE database_name = $catalog AND schema_name = 'main'
