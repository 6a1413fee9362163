-- Per date from $first to $last, $provider's raw_pages row to parse again: the page the date's
-- snapshot came from when there is one, else the newest page fetched for the date.
SELECT r.*, s.observed_on AS page_date FROM main.raw_pages r
LEFT JOIN (SELECT DISTINCT snapshot_date, raw_sha256, observed_on FROM main.price_snapshots
           WHERE provider = $provider AND snapshot_date BETWEEN $first AND $last
             AND source IN {scraped_sources}) s
  ON s.snapshot_date = r.snapshot_date AND s.raw_sha256 = r.sha256
WHERE r.provider = $provider AND r.snapshot_date BETWEEN $first AND $last
QUALIFY row_number() OVER (PARTITION BY r.snapshot_date
                           ORDER BY s.raw_sha256 IS NOT NULL DESC, r.fetched_at DESC, r.sha256) = 1
