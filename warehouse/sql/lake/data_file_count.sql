-- How many data files the lake's catalog lists (DuckLake's metadata database of the alias).
SELECT count(*) FROM __ducklake_metadata_{identifier:alias}.ducklake_data_file
