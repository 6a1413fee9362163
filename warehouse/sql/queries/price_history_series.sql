-- Per day and provider, the provider's cheapest in-force list price of $gpu in $tier whose page is
-- at most $max_age_days old; cheapest marks the cheapest provider of each day (ties: provider name).
WITH per_provider AS (
    SELECT date, provider, gpu_count, community, tier, CAST(usd_per_gpu_hour AS DOUBLE) AS usd_per_gpu_hour,
        observed_on, age_days, source
    FROM main.v_daily_prices
    WHERE gpu = $gpu AND tier = $tier AND price_basis = 'list' AND date BETWEEN $since AND $until
      AND age_days <= $max_age_days
    QUALIFY row_number() OVER (
        PARTITION BY date, provider
        ORDER BY usd_per_gpu_hour, gpu_count, community, commitment_months NULLS FIRST, region NULLS FIRST
    ) = 1
)
SELECT *, row_number() OVER (PARTITION BY date ORDER BY usd_per_gpu_hour, provider) = 1 AS cheapest
FROM per_provider ORDER BY date, provider
