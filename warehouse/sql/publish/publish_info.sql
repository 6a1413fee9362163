-- What a finished copy was built from: the publish format, the schema version (leaving out the
-- versions $neutral that change only warehouse-only tables) and the view fingerprint (a copy
-- that differs is built whole), and the periods appended since their sort.
CREATE OR REPLACE TABLE main.publish_info AS
SELECT CAST($format AS INTEGER) AS format,
    (SELECT max(version) FROM main.schema_version WHERE NOT list_contains($neutral::INTEGER[], version))
        AS schema_version,
    (SELECT max(fingerprint) FROM main.view_fingerprint) AS view_fingerprint,
    CAST($unsorted AS BIGINT) AS unsorted_periods, now() AS published_at
