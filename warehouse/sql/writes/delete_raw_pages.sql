-- raw_pages rows with these (provider, snapshot_date, sha256, url) keys, as four parallel lists.
DELETE FROM raw_pages WHERE (provider, snapshot_date, sha256, url) IN (
    SELECT unnest($providers::VARCHAR[]), unnest($dates::DATE[]), unnest($hashes::VARCHAR[]), unnest($urls::VARCHAR[])
)
