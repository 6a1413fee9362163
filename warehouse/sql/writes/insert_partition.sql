-- One partition's snapshot rows: the offers' own columns from a registered frame (_incoming,
-- snapshot_rows.OFFER_COLUMNS) and the partition's values of the other columns
-- (snapshot_rows.WRITER_COLUMNS), bound once rather than repeated in every row of the frame.
INSERT INTO price_snapshots ({identifiers:offer_columns}, snapshot_date, source, raw_sha256, parser_version,
    ingested_at, observed_on, source_file)
SELECT {identifiers:offer_columns}, $snapshot_date, $source, $raw_sha256, $parser_version, $ingested_at,
    $observed_on, $source_file
FROM _incoming
