-- Imported history (catalog history, public reports) only counts for a provider and date the
-- product did not scrape; catalog-history points are their own series (catalog = true).
WITH daily AS (
    SELECT gpu, provider, community, price_basis, snapshot_date, source = 'catalog_history' AS catalog,
        min(CAST(usd_per_gpu_hour AS DOUBLE)) AS price
    FROM price_snapshots p
    WHERE list_contains(?, gpu) AND tier = 'on_demand' AND snapshot_date <= ?
      AND coalesce(effective_from, snapshot_date) <= snapshot_date
      AND (source IN {scraped_sources} OR NOT EXISTS (
            SELECT 1 FROM provider_runs r WHERE r.status = 'success' AND r.provider = p.provider
              AND r.snapshot_date = p.snapshot_date))
    GROUP BY ALL
)
SELECT * FROM daily
WHERE snapshot_date >= ?
   OR snapshot_date = (SELECT max(d.snapshot_date) FROM daily d
                       WHERE d.gpu = daily.gpu AND d.provider = daily.provider
                         AND d.community = daily.community AND d.catalog = daily.catalog
                         AND d.price_basis IS NOT DISTINCT FROM daily.price_basis
                         AND d.snapshot_date < ?)
ORDER BY gpu, provider, community, price_basis, catalog, snapshot_date
