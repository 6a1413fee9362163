CREATE OR REPLACE VIEW main.v_unknown_gpus AS
SELECT p.provider, p.gpu_raw, min(p.snapshot_date) AS first_seen, max(p.snapshot_date) AS last_seen,
    count(*) AS offers, p.gpu AS slug, (g.slug IS NULL AND p.gpu <> 'unknown') AS slug_missing_from_catalog
FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
WHERE p.gpu = 'unknown' OR g.slug IS NULL
GROUP BY p.provider, p.gpu_raw, p.gpu, g.slug
