-- Whether the copy being updated was published by this format from this schema and these views
-- (the schema version leaves out the versions $neutral that change only warehouse-only tables).
SELECT i.format = $format
    AND i.schema_version = (
        SELECT max(version) FROM main.schema_version WHERE NOT list_contains($neutral::INTEGER[], version)
    )
    AND i.view_fingerprint = (SELECT max(fingerprint) FROM main.view_fingerprint)
FROM _analytics_copy.main.publish_info i
