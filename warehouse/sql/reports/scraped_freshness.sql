SELECT provider, max(snapshot_date) AS last_date,
    max(coalesce(observed_on, snapshot_date)) FILTER (WHERE snapshot_date = last_date_inner)
        AS last_observed_on,
    count(*) FILTER (WHERE snapshot_date = last_date_inner) AS offers
FROM (
    SELECT provider, snapshot_date, observed_on,
        max(snapshot_date) OVER (PARTITION BY provider) AS last_date_inner
    FROM price_snapshots WHERE snapshot_date <= ? AND source IN {scraped_sources}
) GROUP BY provider
