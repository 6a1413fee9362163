-- The daily run records each provider's successful run with its snapshot (latest_prices reads
-- it): one per generated provider and date.
INSERT OR REPLACE INTO provider_runs (snapshot_date, provider, source, status, offers, rejected,
    unknown_gpus, error, parse_report, started_at, finished_at, observed_on)
SELECT snapshot_date, provider, any_value(source), 'success', count(*), 0, 0, NULL, NULL, now(), now(),
    max(coalesce(observed_on, snapshot_date))
FROM price_snapshots WHERE source IN ('scrape', 'archive') GROUP BY snapshot_date, provider
