-- One marker row per provider page (sku '~page', GPU count 0: no offer has that key), so a chunk
-- that holds part of a provider's regions still sees every page of its provider (the closing of
-- an offer its provider's next page no longer lists needs every page).
CREATE OR REPLACE TEMP TABLE _whole_markers AS
SELECT DISTINCT ON (provider, source, coalesce(observed_on, snapshot_date))
    * REPLACE ('~page' AS sku, 'unknown' AS gpu, 0 AS gpu_count, NULL AS effective_from)
FROM main.price_snapshots
WHERE source IN ('scrape', 'archive', 'catalog_history')
