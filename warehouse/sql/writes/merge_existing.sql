-- The merged source's rows in the input's date range (a constant range lets DuckDB skip row groups).
SELECT * FROM price_snapshots WHERE source = $source AND observed_on BETWEEN $first AND $last
