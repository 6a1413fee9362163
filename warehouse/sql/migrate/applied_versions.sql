SELECT version FROM schema_version
