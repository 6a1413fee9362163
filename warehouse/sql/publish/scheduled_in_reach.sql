-- Providers with a scheduled price (effective_from) at or after their window's start, or on a
-- page filed in it: their periods are computed from their whole history.
SELECT DISTINCT p.provider
FROM main.price_snapshots p JOIN _pub_window w ON w.provider = p.provider
WHERE p.effective_from IS NOT NULL AND (p.snapshot_date >= w.start OR p.effective_from >= w.start)
