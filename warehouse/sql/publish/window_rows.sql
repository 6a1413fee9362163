-- The warehouse rows the restarted offers' periods are computed from again: each such offer's
-- rows from its carried page on, else from its restart (by page date, so every later
-- observation of the offer and none before is there), and one marker row per page of the provider from the window's start on
-- (sku '~page'; the closing of an offer its provider's next page no longer lists needs every
-- page). $first is the earliest start (a constant for the scan). A provider with a scheduled
-- price in reach (_pub_window.start NULL) is read whole: a scheduled price's period depends on
-- the offer's earlier pages.
INSERT INTO {analytics_scratch}.main.price_snapshots BY NAME
WITH bounded AS (
    SELECT p.*, coalesce(p.observed_on, p.snapshot_date) AS page, w.start
    FROM main.price_snapshots p JOIN _pub_window w ON w.provider = p.provider
    WHERE w.start IS NOT NULL AND p.snapshot_date >= $first AND p.snapshot_date >= w.start
      AND coalesce(p.observed_on, p.snapshot_date) >= w.start
),
keyed AS (SELECT *, {offer_key_text} AS offer_key FROM bounded)
SELECT k.* EXCLUDE (page, start, offer_key)
FROM keyed k JOIN _pub_restart r ON r.offer_key = k.offer_key
WHERE k.page >= coalesce(r.carry, r.restart)
UNION ALL
SELECT DISTINCT ON (provider, source, page)
    k.* EXCLUDE (page, start, offer_key) REPLACE ('~page' AS sku, 'unknown' AS gpu, NULL AS effective_from)
FROM keyed k
UNION ALL
SELECT p.*
FROM main.price_snapshots p JOIN _pub_window w ON w.provider = p.provider
WHERE w.start IS NULL
