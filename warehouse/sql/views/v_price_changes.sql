-- Each price period that replaced an earlier one of the same offer (from price_history).
CREATE OR REPLACE VIEW main.v_price_changes AS
WITH h AS (
    SELECT *,
        lag(usd_per_gpu_hour) OVER w AS old_usd_per_gpu_hour,
        lag(last_seen) OVER w AS previous_snapshot_date,
        lag(price_basis) OVER w AS old_price_basis
    FROM main.v_price_history
    WINDOW w AS (PARTITION BY gpu, {offer_key} ORDER BY valid_from)
)
SELECT valid_from AS snapshot_date, offer_key, provider, sku, gpu, gpu_raw, gpu_count, tier, community,
    commitment_months, region, price_basis, effective_from, source,
    previous_snapshot_date, old_usd_per_gpu_hour,
    usd_per_gpu_hour AS new_usd_per_gpu_hour,
    round(100.0 * (usd_per_gpu_hour - old_usd_per_gpu_hour) / old_usd_per_gpu_hour, 2) AS pct_change
FROM h
WHERE old_usd_per_gpu_hour IS NOT NULL AND old_usd_per_gpu_hour <> usd_per_gpu_hour
  AND old_price_basis = price_basis
