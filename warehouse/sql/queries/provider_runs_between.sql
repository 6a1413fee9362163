-- $provider's runs from $first to $last: date, status, offers loaded, offers the parser saw.
SELECT snapshot_date, status, offers, CAST(json_extract(parse_report, '$.offers') AS INTEGER)
FROM main.provider_runs WHERE provider = $provider AND snapshot_date BETWEEN $first AND $last
