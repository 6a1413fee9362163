-- Per date, tier (on-demand / spot) and metric: the five best current list prices
-- (v_current_list_offers).
CREATE OR REPLACE VIEW main.v_best_value_by_metric AS
WITH priced AS (
    SELECT * FROM main.v_current_list_offers WHERE tier IN ('on_demand', 'spot')
),
long AS (
    SELECT 'usd_per_pflop_hour' AS metric, usd_per_pflop_hour AS metric_value, * FROM priced
    WHERE usd_per_pflop_hour IS NOT NULL
    UNION ALL BY NAME
    SELECT 'usd_per_gb_hour' AS metric, usd_per_gb_hour AS metric_value, * FROM priced
)
SELECT snapshot_date, metric, tier,
    row_number() OVER (
        PARTITION BY snapshot_date, metric, tier
        ORDER BY metric_value, provider, gpu_count, community, commitment_months NULLS FIRST,
            region NULLS FIRST, sku, source
    ) AS rank,
    metric_value, provider, gpu, gpu_raw, sku, gpu_count, community, usd_per_gpu_hour,
    usd_per_pflop_hour, usd_per_gb_hour, usd_per_tbps_hour, memory_gb, instance_memory_gb,
    memory_bandwidth_tbps, dense_bf16_tflops, dense_fp8_tflops, form_factor, interconnect, ecc, source
FROM long
QUALIFY rank <= 5
