-- The scraped/replayed rows of $provider on $dates (a partition write replaces them).
DELETE FROM price_snapshots WHERE provider = $provider AND source IN {scraped_sources}
    AND snapshot_date IN (SELECT unnest($dates::DATE[]))
