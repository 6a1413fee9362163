-- Cross-check of the parsers: per provider and day with both, its own scraped page against
-- the catalog history's rows (list prices per GPU, count, tier and community; a scrape
-- without regions compares with the catalog's cheapest region). ``differs``: either side
-- lacks the offer, or the prices differ by more than half a percent.
CREATE OR REPLACE VIEW main.v_catalog_vs_scrape AS
WITH scraped AS (
    SELECT provider, coalesce(observed_on, snapshot_date) AS day, gpu, gpu_count, tier, community, region,
        min(CAST(usd_per_gpu_hour AS DOUBLE)) AS usd_per_gpu_hour, string_agg(DISTINCT sku, '; ') AS skus
    FROM main.price_snapshots
    WHERE source IN {scraped_sources} AND price_basis = 'list' AND gpu <> 'unknown'
    GROUP BY ALL
),
catalog AS (
    SELECT provider, observed_on AS day, gpu, gpu_count, tier, community, region,
        min(CAST(usd_per_gpu_hour AS DOUBLE)) AS usd_per_gpu_hour, string_agg(DISTINCT sku, '; ') AS skus,
        any_value(source_file) AS source_file
    FROM main.price_snapshots
    WHERE source = 'catalog_history' AND price_basis = 'list'
    GROUP BY ALL
),
both_days AS (SELECT DISTINCT provider, day FROM scraped INTERSECT SELECT DISTINCT provider, day FROM catalog),
s AS (SELECT s.* FROM scraped s JOIN both_days USING (provider, day)),
c AS (SELECT c.* FROM catalog c JOIN both_days USING (provider, day)),
matched AS (
    SELECT coalesce(s.provider, c.provider) AS provider, coalesce(s.day, c.day) AS day,
        coalesce(s.gpu, c.gpu) AS gpu, coalesce(s.gpu_count, c.gpu_count) AS gpu_count,
        coalesce(s.tier, c.tier) AS tier, coalesce(s.community, c.community) AS community,
        coalesce(s.region, c.region) AS region, s.region IS NULL AND s.provider IS NOT NULL AS scrape_has_no_region,
        s.usd_per_gpu_hour AS scraped_usd_per_gpu_hour, c.usd_per_gpu_hour AS catalog_usd_per_gpu_hour,
        s.skus AS scraped_skus, c.skus AS catalog_skus, c.source_file AS catalog_source_file
    FROM s FULL OUTER JOIN c
      ON s.provider = c.provider AND s.day = c.day AND s.gpu = c.gpu AND s.gpu_count = c.gpu_count
     AND s.tier = c.tier AND s.community = c.community
     AND (s.region IS NOT DISTINCT FROM c.region OR s.region IS NULL)
)
SELECT provider, day, gpu, gpu_count, tier, community,
    CASE WHEN scrape_has_no_region THEN NULL ELSE region END AS region,
    min(scraped_usd_per_gpu_hour) AS scraped_usd_per_gpu_hour,
    min(catalog_usd_per_gpu_hour) AS catalog_usd_per_gpu_hour,
    round(100.0 * (min(catalog_usd_per_gpu_hour) - min(scraped_usd_per_gpu_hour))
          / min(scraped_usd_per_gpu_hour), 2) AS pct_difference,
    (min(scraped_usd_per_gpu_hour) IS NULL OR min(catalog_usd_per_gpu_hour) IS NULL
     OR abs(min(catalog_usd_per_gpu_hour) - min(scraped_usd_per_gpu_hour))
        > 0.005 * min(scraped_usd_per_gpu_hour)) AS differs,
    any_value(scraped_skus) AS scraped_skus, string_agg(DISTINCT catalog_skus, '; ') AS catalog_skus,
    any_value(catalog_source_file) AS catalog_source_file
FROM matched
GROUP BY provider, day, gpu, gpu_count, tier, community, CASE WHEN scrape_has_no_region THEN NULL ELSE region END
