-- Offers from $first to $last whose GPU is not in dim_gpu, per provider and GPU.
SELECT p.provider, p.gpu, p.gpu_raw, count(*) AS offers
FROM main.price_snapshots p LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
WHERE p.snapshot_date BETWEEN $first AND $last AND g.slug IS NULL
GROUP BY ALL ORDER BY p.provider, p.gpu_raw
