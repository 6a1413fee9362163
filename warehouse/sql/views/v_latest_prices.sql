-- Newest scraped (or replayed) snapshot per provider; public reports are history only.
CREATE OR REPLACE VIEW main.v_latest_prices AS
WITH newest AS (
    SELECT provider, max(snapshot_date) AS snapshot_date
    FROM main.provider_runs WHERE status = 'success' GROUP BY provider
)
SELECT p.* REPLACE (coalesce(p.observed_on, p.snapshot_date) AS observed_on),
    p.snapshot_date - coalesce(p.observed_on, p.snapshot_date) AS age_days
FROM main.price_snapshots p
JOIN newest n ON p.provider = n.provider AND p.snapshot_date = n.snapshot_date
WHERE p.source IN {scraped_sources}
  -- a constant lower bound lets DuckDB skip old row groups (zone maps) instead of
  -- scanning the whole history: the view stays flat as years accumulate
  AND p.snapshot_date >= (SELECT min(snapshot_date) FROM newest)
