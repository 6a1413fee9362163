-- The scratch database, read only (a path: ATTACH binds no parameter).
ATTACH {literal:path} AS {analytics_scratch} (READ_ONLY)
