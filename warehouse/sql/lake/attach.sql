-- The DuckLake (catalog "ducklake:<catalog>") under its alias. Rows go to Parquet files
-- under the data path, never inlined into the catalog: the files are what analysts and other
-- engines read, whatever the catalog database is. DuckDB binds no parameter in ATTACH.
ATTACH {literal:catalog} AS {identifier:alias} (
    DATA_PATH {literal:data_path}, DATA_INLINING_ROW_LIMIT 0, READ_ONLY {boolean:read_only}
)
