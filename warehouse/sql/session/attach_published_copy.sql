-- The published copy, read-only, as the current database "gpuprice": its file is called
-- analytics.duckdb, which would make its catalog name collide with the analytics schema, so
-- analytics.latest_prices stays valid under another name. A path: DuckDB binds no parameter in ATTACH.
ATTACH {literal:path} AS gpuprice (READ_ONLY);
USE gpuprice;
