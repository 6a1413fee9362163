-- Per date, GPU and tier: the cheapest current list price (v_current_list_offers).
CREATE OR REPLACE VIEW main.v_best_value_by_gpu AS
SELECT * FROM main.v_current_list_offers
QUALIFY row_number() OVER (
    PARTITION BY snapshot_date, gpu, tier
    ORDER BY usd_per_gpu_hour, provider, gpu_count, community, commitment_months NULLS FIRST,
        region NULLS FIRST, sku, source
) = 1
