-- Every offer with the specs of its GPU and price-performance per offer.
CREATE OR REPLACE VIEW main.v_offers_with_specs AS
SELECT p.snapshot_date, p.provider, p.sku, p.gpu, p.gpu_raw, p.gpu_count, p.tier,
    p.community, p.commitment_months, p.region, p.price_basis, p.effective_from,
    p.available, p.capacity, p.interruption_bucket,
    p.source, p.in_force, p.observed_on, p.snapshot_date - p.observed_on AS age_days,
    p.usd_per_gpu_hour, p.usd_per_instance_hour,
    g.vendor, g.architecture, g.memory_gb, g.memory_bandwidth_tbps,
    g.dense_bf16_tflops, g.dense_fp8_tflops, g.form_factor, g.nvlink_gbps, g.ecc,
    g.memory_gb * p.gpu_count AS instance_memory_gb,
    CASE
        WHEN g.slug IS NULL THEN NULL
        WHEN p.gpu_count = 1 THEN 'single-gpu'
        WHEN g.form_factor IN ('sxm', 'superchip') THEN 'nvlink-nvswitch'
        WHEN g.form_factor = 'nvl' THEN 'nvlink-bridge'
        ELSE 'pcie'
    END AS interconnect,
    (g.slug IS NOT NULL AND p.gpu_count > 1 AND g.form_factor IN ('sxm', 'superchip')) AS nvlink_connected,
    (g.slug IS NOT NULL AND p.gpu_count > 1 AND g.form_factor NOT IN ('sxm', 'superchip', 'nvl')) AS pcie_only,
    round(CAST(p.usd_per_gpu_hour AS DOUBLE) / (g.dense_bf16_tflops / 1000.0), 4) AS usd_per_pflop_hour,
    round(CAST(p.usd_per_gpu_hour AS DOUBLE) / g.memory_gb, 5) AS usd_per_gb_hour,
    round(CAST(p.usd_per_gpu_hour AS DOUBLE) / g.memory_bandwidth_tbps, 4) AS usd_per_tbps_hour
FROM main.v_snapshots_in_force p
LEFT JOIN main.dim_gpu g ON g.slug = p.gpu
