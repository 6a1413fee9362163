SELECT count(*) FROM schema_version
