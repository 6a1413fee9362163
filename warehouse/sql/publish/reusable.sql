-- Whether the copy being updated was published by this format from this schema and these views.
SELECT i.format = $format
    AND i.schema_version = (SELECT max(version) FROM main.schema_version)
    AND i.view_fingerprint = (SELECT max(fingerprint) FROM main.view_fingerprint)
FROM _analytics_copy.main.publish_info i
