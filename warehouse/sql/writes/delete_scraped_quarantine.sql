-- The quarantined rows of $provider's scrapes/replays on $dates (a partition write replaces them).
DELETE FROM quarantine WHERE provider = $provider AND source IN {scraped_sources}
    AND snapshot_date IN (SELECT unnest($dates::DATE[]))
