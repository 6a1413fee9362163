-- One snapshot date's Parquet partition, in offer order. The date is a parameter; the path is a
-- quoted literal (COPY ... TO binds no parameter), so a home like /home/o'brien cannot end it.
COPY (
    SELECT * EXCLUDE (snapshot_date) FROM price_snapshots WHERE snapshot_date = ?
    ORDER BY provider, sku, gpu_count, tier
) TO {literal:path} (FORMAT parquet, COMPRESSION zstd)
