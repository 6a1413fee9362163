-- gpuprice sql's session (warehouse/sqlguard.py): no extension loads itself, files are read
-- only under the allowed folders (the Parquet exports, or none), DuckDB's working memory is
-- capped, external access is off, and the configuration is locked last so no query can switch
-- any of it back on.
SET autoload_known_extensions = false;
SET allowed_directories = [{literals:allowed}];
SET memory_limit = {literal:memory_limit};
SET enable_external_access = false;
SET lock_configuration = true;
