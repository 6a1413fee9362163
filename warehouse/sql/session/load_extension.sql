-- An extension from its installed file (a path: DuckDB binds no parameter in LOAD).
LOAD {literal:path}
