-- Per day, GPU and tier: the cheapest list price among offers observed within
-- MAX_PRICE_AGE_DAYS (known GPUs; ties broken by the whole offer key, so the row is unique).
CREATE OR REPLACE VIEW main.v_cheapest_by_gpu AS
SELECT date AS snapshot_date, gpu, tier, provider, sku, gpu_raw, gpu_count, community,
    commitment_months, region, price_basis, usd_per_gpu_hour, source, observed_on, age_days
FROM main.v_daily_prices
WHERE gpu <> 'unknown' AND price_basis = 'list' AND {price_is_current}
QUALIFY row_number() OVER (
    PARTITION BY date, gpu, tier
    ORDER BY usd_per_gpu_hour, provider, gpu_count, community, commitment_months NULLS FIRST,
        region NULLS FIRST
) = 1
