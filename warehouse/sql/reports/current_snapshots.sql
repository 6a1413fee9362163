SELECT provider, snapshot_date, scraped FROM (
    SELECT provider, snapshot_date, scraped,
        row_number() OVER (PARTITION BY provider ORDER BY scraped DESC, snapshot_date DESC) AS pick
    FROM (
        SELECT DISTINCT provider, snapshot_date, source IN {scraped_sources} AS scraped
        FROM price_snapshots WHERE snapshot_date <= $end
    )
) WHERE pick = 1
