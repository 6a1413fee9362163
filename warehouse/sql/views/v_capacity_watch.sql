-- Offers whose source states availability (Runpod stock, Vast.ai listing counts) with no
-- capacity seen in the last CAPACITY_WATCH_DAYS days although reported throughout.
CREATE OR REPLACE VIEW main.v_capacity_watch AS
WITH newest AS (SELECT max(snapshot_date) AS d FROM main.price_snapshots WHERE source IN {scraped_sources}),
seen AS (
    SELECT provider, gpu, gpu_raw, gpu_count, community,
        max(snapshot_date) FILTER (WHERE available OR capacity > 0) AS last_capacity_date,
        min(snapshot_date) AS first_reported, max(snapshot_date) AS last_reported
    FROM main.price_snapshots
    WHERE source IN {scraped_sources} AND (available IS NOT NULL OR capacity IS NOT NULL)
    GROUP BY ALL
)
SELECT s.*, (SELECT d FROM newest) AS as_of_date, {capacity_watch_days} AS window_days
FROM seen s
WHERE s.last_reported >= (SELECT d FROM newest) - {capacity_watch_days}
  AND s.first_reported <= (SELECT d FROM newest) - {capacity_watch_days}
  AND (s.last_capacity_date IS NULL OR s.last_capacity_date < (SELECT d FROM newest) - {capacity_watch_days})
