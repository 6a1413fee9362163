-- Per GPU, provider, community, price basis and origin: the cheapest on-demand price per day among
-- current prices only (pages at most $max_age days old: warehouse/staleness.py), from the same
-- daily series as `gpuprice history` and analytics.cheapest_by_gpu (imported history counts only
-- for a provider and date the product did not scrape). A day without a current price has no row
-- (the chart breaks the line there); catalog-history points are their own series (catalog = true).
SELECT gpu, provider, community, price_basis, date AS snapshot_date, source = 'catalog_history' AS catalog,
    min(CAST(usd_per_gpu_hour AS DOUBLE)) AS price
FROM v_daily_prices
WHERE list_contains($gpus, gpu) AND tier = 'on_demand' AND date BETWEEN $start AND $end
  AND age_days <= $max_age
GROUP BY ALL
ORDER BY gpu, provider, community, price_basis, catalog, snapshot_date
