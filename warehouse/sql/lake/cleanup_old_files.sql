-- Remove the Parquet files no kept snapshot reads.
CALL ducklake_cleanup_old_files($lake, cleanup_all => true)
